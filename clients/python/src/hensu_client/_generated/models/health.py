from enum import StrEnum

class Health(StrEnum):
    DOWN = "DOWN"
    READY = "READY"
    UP = "UP"

    def __str__(self) -> str:
        return str(self.value)
