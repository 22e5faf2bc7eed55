"""The ``--data`` / ``--only`` options shared by every command that reads tasks."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

import typer

from harness.tasks.dataset import DataSource, resolve_data
from harness.tasks.errors import DataNotFoundError, TaskLoadError, UnknownTaskError

__all__ = ["DATA_HELP", "ONLY_HELP", "open_data"]

DATA_HELP = (
    "Tasks to use: a dataset root (with tasks/), a folder of task packages, or one package. "
    "Default: $APEX_VOICE_DATA, else the bundled demo suite."
)
ONLY_HELP = "Only this task id (directory name) or glob such as 'demo_*'; repeat for several."
_GLOB_MARKS = frozenset("*?[")


def _expand(source: DataSource, only: list[str]) -> list[str]:
    """``--only`` values with globs replaced by the task ids they match; a glob matching none is an error."""
    ids: list[str] = []
    for pattern in only:
        if not _GLOB_MARKS & set(pattern):
            ids.append(pattern)  # a plain id: ``select`` says if it is unknown
            continue
        matched = [task_id for task_id in source.task_ids if fnmatchcase(task_id, pattern)]
        if not matched:
            raise UnknownTaskError(f"--only {pattern!r} matches no task in {source.root}; known: "
                                   f"{', '.join(source.task_ids) or 'none'}")
        ids.extend(matched)
    return ids


def open_data(data: Path | None, only: list[str] | None) -> tuple[DataSource, list[Path]]:
    """Resolve the data option or exit with a usage error (code 2) that says what was wrong."""
    try:
        source = resolve_data(data)
        return source, source.select(_expand(source, only) if only else None)
    except (DataNotFoundError, TaskLoadError, UnknownTaskError, FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
