from enum import StrEnum

class ExecutionEventType6Type(StrEnum):
    EXECUTION_TOKEN = "execution.token"

    def __str__(self) -> str:
        return str(self.value)
