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


async def test_a_faster_realtime_clock_paces_media_time_at_its_speed():
    clock = RealtimeClock(speed=4.0)
    for _ in range(20):
        await clock.advance()
    assert clock.media_ms == 400
    # Paced to a quarter of the media time, never ahead of it.
    assert clock.wall_ns() >= 100 * 1_000_000


def test_the_clock_speed_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("APEX_VOICE_CLOCK_SPEED", "8")
    clock = make_clock("realtime")
    assert isinstance(clock, RealtimeClock) and clock.speed == 8.0
    monkeypatch.delenv("APEX_VOICE_CLOCK_SPEED")
    assert make_clock("realtime").speed == 1.0
    assert make_clock("virtual").speed is None


@pytest.mark.parametrize("raw", ["0", "-2", "fast", "nan", "inf"])
def test_a_bad_clock_speed_is_refused_with_the_value_named(monkeypatch, raw):
    monkeypatch.setenv("APEX_VOICE_CLOCK_SPEED", raw)
    with pytest.raises(ValueError, match="APEX_VOICE_CLOCK_SPEED"):
        make_clock("realtime")
