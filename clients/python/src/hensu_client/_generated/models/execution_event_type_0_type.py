from enum import StrEnum

class ExecutionEventType0Type(StrEnum):
    EXECUTION_STARTED = "execution.started"

    def __str__(self) -> str:
        return str(self.value)
