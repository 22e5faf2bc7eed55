"""``apex-voice watch RUNS_DIR``: follow a campaign another process is running, in the terminal UI.

The UI lives in the top-level ``tui`` package, imported here only when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["watch"]


def watch(
    runs_dir: Annotated[Path, typer.Argument(
        help="A campaign directory (the --out of apex-voice run), or one of its rep or session directories.")],
) -> None:
    """Watch a campaign: one row per (task, rep); Enter opens a session live.

    Reads campaign.json, each session's events.jsonl and each result.json as they are written
    (by another process: start `apex-voice run --out RUNS_DIR` in another terminal). An empty
    directory is waited on; a rep or session directory opens that session. Keys: ? lists them.
    """
    from tui.monitor_app import WatchApp

    if not runs_dir.is_dir():
        typer.echo(f"error: {runs_dir}: no such campaign directory", err=True)
        raise typer.Exit(2)
    WatchApp(runs_dir).run()
