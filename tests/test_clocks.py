"""Media clocks: the virtual clock never waits; the realtime clock paces frames to wall time."""

from __future__ import annotations

import pytest

from harness.session.clocks import RealtimeClock, VirtualClock, make_clock


async def test_virtual_clock_advances_one_frame_per_step():
    clock = VirtualClock()
    for _ in range(1000):
        await clock.advance()
    assert clock.media_ms == 20_000


async def test_realtime_clock_keeps_media_time_behind_wall_time():
    clock = RealtimeClock()
    for _ in range(10):
        await clock.advance()
    assert clock.media_ms == 200
    assert clock.wall_ns() >= 200 * 1_000_000  # never ahead of the wall: frames are paced


def test_make_clock_names_the_known_clocks():
    assert make_clock("virtual").kind == "virtual"
    with pytest.raises(ValueError, match="virtual, realtime"):
        make_clock("sundial")
