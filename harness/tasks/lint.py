"""Cross-file lint of a loaded task package: the authoring mistakes the published loader misses.

Errors make ``validate`` fail the package; warnings are reported only. Each rule family lives in
its own module; this one runs them in a fixed order so output is stable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .bundle import TaskBundle
from .checksums import ChecksumManifest
from .errors import TaskLoadError
from .lint_artifacts import lint_artifacts
from .lint_dialogue import lint_dialogue
from .lint_issue import LintIssue, LintLevel
from .lint_realization import lint_realization
from .lint_references import lint_references
from .lint_taxonomy import lint_taxonomy
from .loader import load_task

__all__ = ["CheckedPackage", "LintIssue", "LintLevel", "check_package", "lint_task"]

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


@dataclass(frozen=True)
class CheckedPackage:
    """A package loaded and linted: what ``validate`` reports before any session, and what ``run``
    requires before it measures anything (a broken task is never scored as the model's failure)."""

    task_dir: Path
    bundle: TaskBundle | None
    #: One line each, ``load: …`` or ``lint: …`` (errors only).
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.bundle is not None and not self.problems


def check_package(task_dir: Path, *, checksums: ChecksumManifest | None = None) -> CheckedPackage:
    """Load ``task_dir`` and lint it; never raises for a bad package (blocking file work: run it off the loop)."""
    try:
        bundle = load_task(task_dir, checksums=checksums)
    except TaskLoadError as exc:
        return CheckedPackage(task_dir, None, [f"load: {exc}"])
    issues = lint_task(bundle)
    return CheckedPackage(
        task_dir,
        bundle,
        [f"lint: {issue}" for issue in issues if issue.level == "error"],
        [str(issue) for issue in issues if issue.level == "warning"],
    )
