"""``events.jsonl`` lines to events, tolerating what the strict reader (``jsonl.read_events``) refuses.

Results and the TUI read runs of other harnesses too: a published run's lines may lack envelope
keys, an older or newer harness's may carry a type this one does not know. Such a line still
becomes an event (its unknown type kept as the string), and a line that is not a JSON object (a
torn last line of a session still being written) is skipped, never fatal. Payloads are read
through :func:`harness.events.typed.payload_as`.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .typed import _type_name
from .types import RunEvent

__all__ = ["parse_event_line", "read_event_lines"]


def parse_event_line(line: str | bytes) -> RunEvent | None:
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


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _lenient(data: dict[str, Any]) -> RunEvent | None:
    """An event built without validation: unknown type kept as its string, missing keys defaulted."""
    if not isinstance(data.get("type"), str):
        return None
    payload = data.get("payload")
    return RunEvent.model_construct(
        seq=_int(data.get("seq"), -1),
        type=data["type"],
        actor=str(data.get("actor", "")),
        wall_time_ns=_int(data.get("wall_time_ns"), 0),
        media_time_ms=_int(data.get("media_time_ms"), 0),
        payload=payload if isinstance(payload, dict) else {},
        causal_parents=[],
        run_id=str(data.get("run_id", "")),
        task_version=str(data.get("task_version", "")),
        condition=str(data.get("condition", "")),
    )


def read_event_lines(path: Path, *, skip_types: Collection[str] = ()) -> list[RunEvent]:
    """Every readable event of an ``events.jsonl`` file, in file order.

    ``skip_types``: types a reader has no use for, left unparsed where a byte test finds them in the
    writer's own format (``"type": "AUDIO_LEVEL"``: four of five lines of a voice session); a line
    written another way is parsed and dropped, so the result is the same either way.
    """
    markers = [f'"type": "{name}"'.encode() for name in skip_types]
    events = []
    with Path(path).open("rb") as lines:
        for line in lines:
            if not line.strip() or any(marker in line for marker in markers):
                continue
            event = parse_event_line(line)
            if event is not None and (not skip_types or _type_name(event) not in skip_types):
                events.append(event)
    return events

