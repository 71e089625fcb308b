from enum import StrEnum

class ExecutionEventType7Type(StrEnum):
    EXECUTION_CANCELLED = "execution.cancelled"

    def __str__(self) -> str:
        return str(self.value)
