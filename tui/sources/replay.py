"""A finished session as a seekable sequence of views: play, pause, step, seek to a time or event.

Views are immutable, so the cursor keeps one every :data:`CHECKPOINT_EVERY` events (dolphie's
replay keeps a snapshot per refresh the same way); seeking anywhere reduces at most that many
events from the nearest earlier checkpoint.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from pathlib import Path

from harness.events import EVENTS_FILE, RunEvent, read_event_lines
from harness.results.result_record import RESULT_FILE

from ..state.campaign_view import CellResult
from ..state.reducer import reduce
from ..state.session_view import SessionView

__all__ = ["CHECKPOINT_EVERY", "ReplayCursor", "find_events_file", "read_result"]

CHECKPOINT_EVERY = 256


def find_events_file(path: Path) -> Path:
    """``SESSION_DIR/events.jsonl``; a rep directory holding one session is accepted too."""
    path = Path(path)
    if path.is_file():
        return path
    direct = path / EVENTS_FILE
    if direct.is_file():
        return direct
    nested = sorted(path.glob(f"*/{EVENTS_FILE}"), key=lambda p: p.stat().st_mtime)
    if nested:
        return nested[-1]
    raise FileNotFoundError(f"{path}: no {EVENTS_FILE} (give a session directory of a run)")


def read_result(session_dir: Path) -> CellResult | None:
    """The graded result of the session, when it ran in a campaign (``<rep>/result.json``)."""
    path = Path(session_dir).parent / RESULT_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("run_id") not in (None, Path(session_dir).name):
        return None  # the result of another attempt at this cell
    return CellResult.from_record(record)


class ReplayCursor:
    """The view after the first :attr:`position` events of a session."""

    def __init__(self, events: Sequence[RunEvent]) -> None:
        self.events = tuple(events)
        running = 0
        self._times = []  # media time, made non-decreasing, for bisecting
        for event in self.events:
            running = max(running, event.media_time_ms)
            self._times.append(running)
        self._checkpoints: dict[int, SessionView] = {0: SessionView()}
        self.position = 0
        self.view = SessionView()

    @classmethod
    def load(cls, session_dir: Path) -> ReplayCursor:
        return cls(read_event_lines(find_events_file(session_dir)))

    @property
    def end_ms(self) -> int:
        return self._times[-1] if self._times else 0

    @property
    def at_end(self) -> bool:
        return self.position >= len(self.events)

    def seek(self, position: int) -> SessionView:
        """Go to the view after ``position`` events (clamped to the session)."""
        position = max(0, min(position, len(self.events)))
        if position < self.position:
            start = max(c for c in self._checkpoints if c <= position)
            self.position, self.view = start, self._checkpoints[start]
        while self.position < position:
            self.view = reduce(self.view, self.events[self.position])
            self.position += 1
            if self.position % CHECKPOINT_EVERY == 0:
                self._checkpoints.setdefault(self.position, self.view)
        return self.view

    def step(self, delta: int) -> SessionView:
        return self.seek(self.position + delta)

    def seek_time(self, t_ms: int) -> SessionView:
        """The view with every event at or before media time ``t_ms`` applied."""
        return self.seek(bisect.bisect_right(self._times, t_ms))

    def seek_seq(self, seq: int) -> SessionView:
        """The view just after the event numbered ``seq``."""
        index = next((i for i, e in enumerate(self.events) if e.seq >= seq), len(self.events) - 1)
        return self.seek(index + 1)

    def time_at(self, position: int) -> int:
        return self._times[position - 1] if 0 < position <= len(self._times) else 0
