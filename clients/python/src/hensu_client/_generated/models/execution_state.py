from enum import StrEnum

class ExecutionState(StrEnum):
    CANCELLED = "cancelled"
    COMPLETED = "completed"
    FAILED = "failed"
    PAUSED = "paused"
    QUEUED = "queued"
    REJECTED = "rejected"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
