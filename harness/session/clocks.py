"""Media clocks for the duplex runner.

Media time advances one frame at a time in both clocks. The virtual clock never waits, so a
deterministic session runs as fast as the CPU allows; the realtime clock paces frames to wall time
for live providers (absolute deadlines, so pacing errors do not accumulate). Both report wall time
so every event carries both stamps.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from typing import ClassVar, Literal

from harness.audio.frames import FRAME_MS

__all__ = ["MediaClock", "RealtimeClock", "VirtualClock", "make_clock"]


class MediaClock(ABC):
    kind: ClassVar[Literal["virtual", "realtime"]]

    def __init__(self) -> None:
        self.media_ms = 0
        self._wall_start_ns = time.monotonic_ns()

    def start(self) -> None:
        """Media time 0 is now: called once set-up (connect, speech preparation) is over."""
        self.media_ms = 0
        self._wall_start_ns = time.monotonic_ns()

    def wall_ns(self) -> int:
        """Wall time since the clock started (ns)."""
        return time.monotonic_ns() - self._wall_start_ns

    @abstractmethod
    async def advance(self) -> None:
        """Move media time forward by one frame (waiting for wall time where the clock is paced)."""


class VirtualClock(MediaClock):
    kind = "virtual"

    async def advance(self) -> None:
        self.media_ms += FRAME_MS
        # Yield to the loop so background work (sandbox I/O, writers) is never starved.
        await asyncio.sleep(0)


class RealtimeClock(MediaClock):
    kind = "realtime"

    async def advance(self) -> None:
        self.media_ms += FRAME_MS
        deadline_ns = self._wall_start_ns + self.media_ms * 1_000_000
        delay = (deadline_ns - time.monotonic_ns()) / 1e9
        await asyncio.sleep(max(0.0, delay))


_CLOCKS: dict[str, type[MediaClock]] = {"virtual": VirtualClock, "realtime": RealtimeClock}


def make_clock(kind: str) -> MediaClock:
    try:
        return _CLOCKS[kind]()
    except KeyError:
        raise ValueError(f"unknown clock {kind!r}; expected one of {', '.join(_CLOCKS)}") from None
