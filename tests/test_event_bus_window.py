"""The event bus keeps a bounded window in memory and the rest on disk, read back in order."""

from __future__ import annotations

import asyncio

from harness.events import EventBus, EventType
from harness.events.bus import EventLog


def _bus(window: int) -> EventBus:
    bus = EventBus(run_id="r", task_version="v", condition="C1")
    bus.events = EventLog(window)
    return bus


def _emit(bus: EventBus, n: int) -> None:
    for i in range(n):
        bus.emit(EventType.AGENT_SIGNAL, "agent", i, {"signal": "response_done", "detail": {}, "response_id": f"r{i}"})


def test_past_the_window_events_live_on_disk_and_read_back_in_order():
    bus = _bus(window=50)
    _emit(bus, 500)
    log = bus.events
    assert len(log._recent) == 50 and log.spilled == 450  # memory holds the window only
    bus.close()
    assert [e.seq for e in log] == list(range(500))
    assert [e.payload["response_id"] for e in log][:3] == ["r0", "r1", "r2"]
    assert [e.seq for e in reversed(log)] == list(range(499, -1, -1))
    assert log[0].seq == 0 and log[449].seq == 449 and log[450].seq == 450 and log[-1].seq == 499
    assert [e.seq for e in log[10:13]] == [10, 11, 12] and [e.seq for e in log[::200]] == [0, 200, 400]
    assert len(bus.of_type(EventType.AGENT_SIGNAL)) == 500


def test_spilled_events_read_back_while_the_session_still_runs():
    """Reading before the bus closes waits for the spill's thread (what it queued is written first)."""
    bus = _bus(window=10)
    _emit(bus, 40)
    assert [e.seq for e in bus.events] == list(range(40))
    _emit(bus, 5)
    assert [e.media_time_ms for e in bus.events][-5:] == [0, 1, 2, 3, 4] and len(bus.events) == 45
    bus.close()


def test_a_late_stream_gets_every_event_from_the_disk_and_the_window():
    bus = _bus(window=10)
    _emit(bus, 30)
    bus.close()

    async def drain() -> list[int]:
        return [event.seq async for event in bus.stream()]

    assert asyncio.run(drain()) == list(range(30))


def test_an_honest_session_never_spills():
    bus = EventBus(run_id="r", task_version="v", condition="C1")
    _emit(bus, 5_000)  # more than any demo session's events
    assert bus.events.spilled == 0 and len(bus.events) == 5_000


def test_the_window_is_bounded_by_its_payloads_characters_too():
    """10,000 events of 32,000-character agent strings would be 320 MB: the window holds 4 M characters."""
    bus = EventBus(run_id="r", task_version="v", condition="C1")
    for i in range(300):
        bus.emit(EventType.AGENT_SIGNAL, "agent", i, {"signal": "mcp_call_failed", "detail": {"error": "e" * 32_000}})
    log = bus.events
    assert sum(len(e.payload["detail"]["error"]) for e in log._recent) <= log.window_chars
    assert log.spilled > 150 and len(log) == 300
    bus.close()
    assert [e.seq for e in log] == list(range(300))
