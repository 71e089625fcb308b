from enum import StrEnum

class ExecutionEventType5Type(StrEnum):
    EXECUTION_CALL = "execution.call"

    def __str__(self) -> str:
        return str(self.value)
