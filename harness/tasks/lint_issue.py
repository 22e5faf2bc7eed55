"""One finding of the task-authoring lint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["LintIssue", "LintLevel"]

LintLevel = Literal["error", "warning"]


@dataclass(frozen=True)
class LintIssue:
    """``error`` makes a package invalid; ``warning`` is shown but does not."""

    level: LintLevel
    file: str
    field: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.message}" if self.field else f"{self.file}: {self.message}"
