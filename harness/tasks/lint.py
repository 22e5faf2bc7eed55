"""Cross-file lint of a loaded task package: the authoring mistakes the published loader misses.

Errors make ``validate`` fail the package; warnings are reported only. Each rule family lives in
its own module; this one runs them in a fixed order so output is stable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .bundle import TaskBundle
from .lint_artifacts import lint_artifacts
from .lint_dialogue import lint_dialogue
from .lint_issue import LintIssue, LintLevel
from .lint_realization import lint_realization
from .lint_references import lint_references
from .lint_taxonomy import lint_taxonomy

__all__ = ["LintIssue", "LintLevel", "lint_task"]

_RULES: tuple[Callable[[TaskBundle], Iterator[LintIssue]], ...] = (
    lint_taxonomy,
    lint_references,
    lint_dialogue,
    lint_realization,
    lint_artifacts,
)


def lint_task(bundle: TaskBundle) -> list[LintIssue]:
    """Every issue of every rule family, errors and warnings interleaved in rule order."""
    return [issue for rule in _RULES for issue in rule(bundle)]
