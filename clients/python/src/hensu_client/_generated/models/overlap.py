from enum import StrEnum

class Overlap(StrEnum):
    CANCEL_PREVIOUS = "cancel_previous"
    QUEUE = "queue"
    SKIP = "skip"

    def __str__(self) -> str:
        return str(self.value)
