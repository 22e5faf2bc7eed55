"""The ``--data`` / ``--only`` options shared by every command that reads tasks."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.tasks.dataset import DataSource, resolve_data
from harness.tasks.errors import DataNotFoundError, TaskLoadError, UnknownTaskError

__all__ = ["DATA_HELP", "ONLY_HELP", "open_data"]

DATA_HELP = (
    "Tasks to use: a dataset root (with tasks/), a folder of task packages, or one package. "
    "Default: $APEX_VOICE_DATA, else the bundled demo suite."
)
ONLY_HELP = "Only this task id (directory name); repeat for several."


def open_data(data: Path | None, only: list[str] | None) -> tuple[DataSource, list[Path]]:
    """Resolve the data option or exit with a usage error (code 2) that says what was wrong."""
    try:
        source = resolve_data(data)
        return source, source.select(only or None)
    except (DataNotFoundError, TaskLoadError, UnknownTaskError, FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
