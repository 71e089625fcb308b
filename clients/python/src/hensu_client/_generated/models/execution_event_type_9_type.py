from enum import StrEnum

class ExecutionEventType9Type(StrEnum):
    EXECUTION_REVIEW_REQUESTED = "execution.review_requested"

    def __str__(self) -> str:
        return str(self.value)
