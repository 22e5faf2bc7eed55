"""``apex-voice index``: write a dataset's ``data/tasks.jsonl`` (the published per-task index) and
its ``SHA256SUMS`` (every file under ``tasks/`` and ``data/``), as the published exporter does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.tasks.checksums import ChecksumManifest
from harness.tasks.errors import TaskLoadError
from harness.tasks.index import write_index
from harness.tasks.loader import load_task

from .data_option import DATA_HELP, open_data

__all__ = ["index"]


def index(
    data: Annotated[Path | None, typer.Option("--data", "-d", help=DATA_HELP)] = None,
) -> None:
    """Write <data>/data/tasks.jsonl (one row per task, readable by `datasets.load_dataset("json", ...)`)
    and <data>/SHA256SUMS for a dataset root."""
    source, task_dirs = open_data(data, None)
    if source.kind != "dataset":
        typer.echo(f"error: {source.root} is not a dataset root (it needs a tasks/ folder)", err=True)
        raise typer.Exit(2)
    try:
        # Checksums are being regenerated: do not verify the old ones.
        bundles = [load_task(d) for d in task_dirs]
        path = write_index(source.root, bundles)
        sums = ChecksumManifest.write(source.root)  # refuses a symlink out of the dataset
    except TaskLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"wrote {path} ({len(bundles)} tasks) and {source.root / 'SHA256SUMS'} ({len(sums.digests)} files)")
