from enum import StrEnum

class ExecutionEventType2Type(StrEnum):
    EXECUTION_PAUSED = "execution.paused"

    def __str__(self) -> str:
        return str(self.value)
