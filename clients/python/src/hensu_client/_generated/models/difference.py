from enum import StrEnum

class Difference(StrEnum):
    ERROR = "error"
    MISSING = "missing"
    NODE = "node"
    OUTPUT = "output"
    STATUS = "status"

    def __str__(self) -> str:
        return str(self.value)
