from enum import StrEnum

class ExecutionEventType1Type(StrEnum):
    EXECUTION_STEP = "execution.step"

    def __str__(self) -> str:
        return str(self.value)
