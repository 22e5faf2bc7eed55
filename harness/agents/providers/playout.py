"""How much of each agent audio item has played, for truncating the provider's context.

The runner reports playback (``RealtimeAdapter.playback``); without reports the position is
estimated the way the agent channel plays: items in arrival order, back to back, at media speed,
each starting no earlier than its first audio arrived.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.audio.frames import SAMPLE_RATE

__all__ = ["PlayoutTracker"]

_BYTES_PER_MS = SAMPLE_RATE * 2 // 1000


@dataclass
class _Item:
    item_id: str
    response_id: str | None
    start_ms: int
    audio_ms: float = 0.0
    reported_ms: int | None = None


class PlayoutTracker:
    def __init__(self) -> None:
        self._items: dict[str, _Item] = {}
        self._queue_end_ms = 0.0

    def items_after(self, item_id: str) -> int:
        """How many items it tracks once ``item_id``'s audio is added (the client bounds them)."""
        return len(self._items) + (item_id not in self._items)

    def audio(self, item_id: str, response_id: str | None, pcm_bytes: int, now_ms: int) -> None:
        item = self._items.get(item_id)
        if item is None:
            start = max(self._queue_end_ms, now_ms)
            item = self._items[item_id] = _Item(item_id, response_id, int(start))
            self._queue_end_ms = start
        item.audio_ms += pcm_bytes / _BYTES_PER_MS
        self._queue_end_ms += pcm_bytes / _BYTES_PER_MS

    def report(self, item_id: str | None, played_ms: int) -> None:
        if item_id in self._items:
            self._items[item_id].reported_ms = played_ms

    def played_ms(self, item_id: str, now_ms: int) -> int:
        item = self._items[item_id]
        if item.reported_ms is not None:
            return min(item.reported_ms, int(item.audio_ms))
        return int(min(max(0.0, now_ms - item.start_ms), item.audio_ms))

    def playing(self, now_ms: int) -> tuple[str, str | None, int] | None:
        """``(item_id, response_id, played_ms)`` of the item still playing, if any."""
        for item in self._items.values():
            played = self.played_ms(item.item_id, now_ms)
            if played < int(item.audio_ms):
                return item.item_id, item.response_id, played
        return None

    def cleared(self, now_ms: int) -> None:
        """The agent stopped its speech: nothing queued plays any more."""
        for item in self._items.values():
            item.audio_ms = float(self.played_ms(item.item_id, now_ms))
        self._queue_end_ms = float(now_ms)
