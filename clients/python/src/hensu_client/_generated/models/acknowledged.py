from enum import StrEnum

class Acknowledged(StrEnum):
    CANCELLED = "cancelled"
    CANCELLING = "cancelling"
    PAUSED = "paused"
    PAUSING = "pausing"
    RESUMED = "resumed"

    def __str__(self) -> str:
        return str(self.value)
