from enum import StrEnum

class ReviewKind(StrEnum):
    BRANCH = "branch"
    CHILD = "child"
    NODE = "node"
    TOOL = "tool"

    def __str__(self) -> str:
        return str(self.value)
