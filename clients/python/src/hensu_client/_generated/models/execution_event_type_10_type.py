from enum import StrEnum

class ExecutionEventType10Type(StrEnum):
    STREAM_RESET = "stream.reset"

    def __str__(self) -> str:
        return str(self.value)
