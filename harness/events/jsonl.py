"""``events.jsonl``: the bus's events on disk, one JSON object per line, flushed per event.

Lines are written by a background thread so the asyncio loop never blocks on the disk; each line
is flushed as soon as it is written, so a crash loses at most the event in flight.
"""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path

from .bus import EventBus
from .types import RunEvent

__all__ = ["EVENTS_FILE", "JsonlEventWriter", "read_events"]

EVENTS_FILE = "events.jsonl"


class JsonlEventWriter:
    """Appends each event's line to a file from a dedicated thread."""

    _STOP = object()

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = path.open("w", encoding="utf-8")
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._drain, name=f"event-log:{path.name}", daemon=True)
        self._thread.start()

    def attach(self, bus: EventBus) -> JsonlEventWriter:
        bus.subscribe(self, on_close=self.close)
        return self

    def __call__(self, event: RunEvent) -> None:
        self._queue.put(event.to_line())

    def _drain(self) -> None:
        while (item := self._queue.get()) is not self._STOP:
            self._file.write(item)  # type: ignore[arg-type]
            self._file.write("\n")
            self._file.flush()
        self._file.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(self._STOP)
            self._thread.join()


def read_events(path: Path) -> list[RunEvent]:
    """The events of an ``events.jsonl`` (a torn last line, from a crash, is left out)."""
    events = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            events.append(RunEvent.model_validate(json.loads(line)))
        except ValueError:
            continue
    return events
