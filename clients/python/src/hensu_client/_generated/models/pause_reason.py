from enum import StrEnum

class PauseReason(StrEnum):
    PENDING = "pending"
    REVIEW = "review"

    def __str__(self) -> str:
        return str(self.value)
