"""How much of each agent audio item has played, for truncating the provider's context.

The runner reports playback (``RealtimeAdapter.playback``); without reports the position is
estimated the way the agent channel plays: items in arrival order, back to back, at media speed,
each starting no earlier than its first audio arrived.

Items play in arrival order, so the tracker keeps a cursor at the first item not yet played out,
and a heap of the earlier items the agent reopened (more audio or a report for a played-out item):
a barge-in costs the items still playing, not every item of the session (up to
``AGENT_LIMITS.items_per_session``, and the agent decides how often its VAD fires).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from harness.audio.frames import SAMPLE_RATE

__all__ = ["PlayoutTracker"]

_BYTES_PER_MS = SAMPLE_RATE * 2 // 1000


@dataclass
class _Item:
    item_id: str
    response_id: str | None
    start_ms: int
    index: int
    audio_ms: float = 0.0
    reported_ms: int | None = None


class PlayoutTracker:
    def __init__(self) -> None:
        self._items: dict[str, _Item] = {}
        self._order: list[_Item] = []
        #: Every item before it has played out, except those in ``_reopened`` (indexes, a heap).
        self._cursor = 0
        self._reopened: list[int] = []
        self._queue_end_ms = 0.0

    def items_after(self, item_id: str) -> int:
        """How many items it tracks once ``item_id``'s audio is added (the client bounds them)."""
        return len(self._items) + (item_id not in self._items)

    def audio(self, item_id: str, response_id: str | None, pcm_bytes: int, now_ms: int) -> None:
        item = self._items.get(item_id)
        if item is None:
            start = max(self._queue_end_ms, now_ms)
            item = self._items[item_id] = _Item(item_id, response_id, int(start), len(self._order))
            self._order.append(item)
            self._queue_end_ms = start
        item.audio_ms += pcm_bytes / _BYTES_PER_MS
        self._queue_end_ms += pcm_bytes / _BYTES_PER_MS
        self._reopen(item)

    def report(self, item_id: str | None, played_ms: int) -> None:
        if item_id in self._items:
            item = self._items[item_id]
            item.reported_ms = played_ms
            self._reopen(item)

    def _reopen(self, item: _Item) -> None:
        if item.index < self._cursor and item.index not in self._reopened:
            heapq.heappush(self._reopened, item.index)

    def played_ms(self, item_id: str, now_ms: int) -> int:
        return self._played(self._items[item_id], now_ms)

    @staticmethod
    def _played(item: _Item, now_ms: int) -> int:
        if item.reported_ms is not None:
            return min(item.reported_ms, int(item.audio_ms))
        return int(min(max(0.0, now_ms - item.start_ms), item.audio_ms))

    def _done(self, item: _Item, now_ms: int) -> bool:
        return self._played(item, now_ms) >= int(item.audio_ms)

    def _unfinished(self, now_ms: int) -> list[_Item]:
        """The items not played out, in order (the cursor moves up to the first of the rest)."""
        while self._cursor < len(self._order) and self._done(self._order[self._cursor], now_ms):
            self._cursor += 1
        while self._reopened and self._done(self._order[self._reopened[0]], now_ms):
            heapq.heappop(self._reopened)
        reopened = [self._order[i] for i in sorted(self._reopened)]
        return reopened + self._order[self._cursor:]

    def playing(self, now_ms: int) -> tuple[str, str | None, int] | None:
        """``(item_id, response_id, played_ms)`` of the item still playing, if any."""
        for item in self._unfinished(now_ms):
            played = self._played(item, now_ms)
            if played < int(item.audio_ms):
                return item.item_id, item.response_id, played
        return None

    def cleared(self, now_ms: int) -> None:
        """The agent stopped its speech: nothing queued plays any more."""
        for item in self._unfinished(now_ms):
            item.audio_ms = float(self._played(item, now_ms))
        self._cursor, self._reopened = len(self._order), []
        self._queue_end_ms = float(now_ms)
