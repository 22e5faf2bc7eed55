"""Media clocks for the duplex runner.

Media time advances one frame at a time in both clocks. The virtual clock never waits, so a
deterministic session runs as fast as the CPU allows; the realtime clock paces frames to wall time
for live providers (absolute deadlines, so pacing errors do not accumulate). Both report wall time
so every event carries both stamps.

The realtime clock takes a speed factor (``APEX_VOICE_CLOCK_SPEED``, default 1): media time runs
that many times faster than the wall. It exists for peers that answer as fast as they are fed —
the protocol fakes in the tests, a local agent on a fast machine — so a paced session need not take
its full length. A real provider streams at 1×, so anything else is recorded (``RUN_START``
metadata ``clock_speed``) and never right for a measurement.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from abc import ABC, abstractmethod
from typing import ClassVar, Literal

from harness.audio.frames import FRAME_MS

__all__ = ["CLOCK_SPEED_ENV", "MediaClock", "RealtimeClock", "VirtualClock", "clock_speed_from_env", "make_clock"]

CLOCK_SPEED_ENV = "APEX_VOICE_CLOCK_SPEED"


class MediaClock(ABC):
    kind: ClassVar[Literal["virtual", "realtime"]]
    #: Media seconds per wall second; the virtual clock's is unbounded and reported as None.
    speed: float | None = None

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

    def __init__(self, speed: float = 1.0) -> None:
        if not (math.isfinite(speed) and speed > 0):
            raise ValueError(f"a realtime clock's speed must be a positive number, got {speed!r}")
        super().__init__()
        self.speed = speed
        self._wall_per_media_ns = 1_000_000 / speed

    async def advance(self) -> None:
        self.media_ms += FRAME_MS
        deadline_ns = self._wall_start_ns + int(self.media_ms * self._wall_per_media_ns)
        delay = (deadline_ns - time.monotonic_ns()) / 1e9
        await asyncio.sleep(max(0.0, delay))


_CLOCKS: dict[str, type[MediaClock]] = {"virtual": VirtualClock, "realtime": RealtimeClock}


def clock_speed_from_env() -> float:
    """The realtime speed factor from ``APEX_VOICE_CLOCK_SPEED`` (1 when unset)."""
    raw = os.environ.get(CLOCK_SPEED_ENV, "").strip()
    if not raw:
        return 1.0
    try:
        speed = float(raw)
    except ValueError:
        speed = math.nan
    if not (math.isfinite(speed) and speed > 0):
        raise ValueError(f"{CLOCK_SPEED_ENV}={raw!r}: expected a positive number (1 paces to the wall)")
    return speed


def make_clock(kind: str) -> MediaClock:
    if kind == "realtime":
        return RealtimeClock(clock_speed_from_env())
    try:
        return _CLOCKS[kind]()
    except KeyError:
        raise ValueError(f"unknown clock {kind!r}; expected one of {', '.join(_CLOCKS)}") from None
