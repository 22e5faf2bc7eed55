"""``apex-voice replay SESSION_DIR``: play a finished session back in the terminal UI.

The UI lives in the top-level ``tui`` package, imported here only when the command runs (the
harness never depends on it otherwise).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["ReplaySpeed", "replay"]


class ReplaySpeed(str, Enum):
    one = "1"
    four = "4"
    max = "max"


def replay(
    session_dir: Annotated[Path, typer.Argument(help="A session directory (holding events.jsonl) or its rep directory.")],
    speed: Annotated[ReplaySpeed, typer.Option("--speed", help="Playback speed at start: 1×, 4× or max.")] = ReplaySpeed.max,
    paused: Annotated[bool, typer.Option("--paused", help="Start paused at the beginning.")] = False,
) -> None:
    """Replay a session: its duplex timeline, transcript, tool calls, artifact and gates.

    Keys: space play/pause, 1 / 4 / m speed, n / p step one event, ] / [ jump 5 s, g seek to a
    time (1:23.4) or an event (#120), Home / End, + / - zoom the timeline, w why it passed or
    failed, Enter on a tool call its full JSON, ? every key, q quit.
    """
    from harness.events.jsonl import EventLogError, read_events
    from tui.replay_app import ReplayApp
    from tui.sources.replay import find_events_file

    try:  # a file or folder that is not a session is a usage line, never an empty screen
        events_file = find_events_file(session_dir)
        if not read_events(events_file):
            raise FileNotFoundError(f"{events_file}: holds no event (give a session directory of a run)")
    except (FileNotFoundError, EventLogError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except (OSError, UnicodeDecodeError) as exc:
        typer.echo(f"error: {session_dir}: not a session's event log ({exc})", err=True)
        raise typer.Exit(2) from None
    ReplayApp(session_dir, speed=speed.value, paused=paused).run()
