from enum import StrEnum

class ExecutionEventType4Type(StrEnum):
    EXECUTION_ERROR = "execution.error"

    def __str__(self) -> str:
        return str(self.value)
