from enum import StrEnum

class ExecutionEventType8Type(StrEnum):
    EXECUTION_FORKED = "execution.forked"

    def __str__(self) -> str:
        return str(self.value)
