"""``events.jsonl`` lines to events, tolerating what a strict reader refuses.

The TUI reads runs from older and newer harnesses: a line whose type this harness does not know
still becomes an event (the reducer ignores its type), and a line that is not JSON (a torn last
line of a session still being written) is skipped, never fatal.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from harness.events import RunEvent

__all__ = ["parse_line", "read_session_events"]


def parse_line(line: str | bytes) -> RunEvent | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    try:
        return RunEvent.model_validate(data)
    except ValidationError:
        return _lenient(data)


def _lenient(data: dict) -> RunEvent | None:
    """An event built without validation: unknown type kept as its string, missing keys defaulted."""
    if not isinstance(data.get("type"), str):
        return None
    payload = data.get("payload")
    return RunEvent.model_construct(
        seq=data.get("seq", -1) if isinstance(data.get("seq"), int) else -1,
        type=data["type"],
        actor=str(data.get("actor", "")),
        wall_time_ns=data.get("wall_time_ns", 0) if isinstance(data.get("wall_time_ns"), int) else 0,
        media_time_ms=data.get("media_time_ms", 0) if isinstance(data.get("media_time_ms"), int) else 0,
        payload=payload if isinstance(payload, dict) else {},
        causal_parents=[],
        run_id=str(data.get("run_id", "")),
        task_version=str(data.get("task_version", "")),
        condition=str(data.get("condition", "")),
    )


def read_session_events(path: Path) -> list[RunEvent]:
    """Every readable event of an ``events.jsonl`` file, in file order."""
    events = []
    with Path(path).open("rb") as lines:
        for line in lines:
            if line.strip() and (event := parse_line(line)) is not None:
                events.append(event)
    return events
