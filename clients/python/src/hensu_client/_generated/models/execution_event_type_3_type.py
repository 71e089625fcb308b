from enum import StrEnum

class ExecutionEventType3Type(StrEnum):
    EXECUTION_COMPLETED = "execution.completed"

    def __str__(self) -> str:
        return str(self.value)
