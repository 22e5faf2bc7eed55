"""``apex-voice index``: write ``data/tasks.jsonl`` (the published per-task index) for a dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.tasks.errors import TaskLoadError
from harness.tasks.index import write_index
from harness.tasks.loader import load_task

from .data_option import DATA_HELP, open_data

__all__ = ["index"]


def index(
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP)] = None,
) -> None:
    """Write <data>/data/tasks.jsonl, one row per task, readable by `datasets.load_dataset("json", ...)`."""
    source, task_dirs = open_data(data, None)
    try:
        bundles = [load_task(d, checksums=source.checksums) for d in task_dirs]
    except TaskLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    path = write_index(source.root, bundles)
    typer.echo(f"wrote {path} ({len(bundles)} tasks)")
