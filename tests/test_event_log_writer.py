"""``events.jsonl`` writer: async code creates and closes it without file work on the loop (issue 20, item 3)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness.events import EventBus, EventType, JsonlEventWriter, read_events


def _bus() -> EventBus:
    return EventBus(run_id="r1", task_version="v1", condition="C0")


def _emit_some(bus: EventBus, count: int) -> None:
    for n in range(count):
        bus.emit(EventType.USER_AUDIO_END, "user", n, {"text": f"line {n}"})


async def test_open_and_aclose_do_their_file_work_off_the_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop_thread = threading.current_thread()
    file_work: list[threading.Thread] = []
    real_init, real_join = JsonlEventWriter.__init__, threading.Thread.join

    def recording_init(self: JsonlEventWriter, path: Path) -> None:
        file_work.append(threading.current_thread())
        real_init(self, path)

    def recording_join(self: threading.Thread, timeout: float | None = None) -> None:
        if self.name.startswith("event-log:"):
            file_work.append(threading.current_thread())
        real_join(self, timeout)

    monkeypatch.setattr(JsonlEventWriter, "__init__", recording_init)
    monkeypatch.setattr(threading.Thread, "join", recording_join)
    bus = _bus()
    writer = (await JsonlEventWriter.open(tmp_path / "deep" / "events.jsonl")).attach(bus)
    _emit_some(bus, 200)
    await writer.aclose()
    assert len(file_work) == 2 and loop_thread not in file_work
    assert [e.payload["text"] for e in read_events(tmp_path / "deep" / "events.jsonl")] == [
        f"line {n}" for n in range(200)
    ]
    bus.close()  # the bus's own close finds the thread finished: nothing to wait for
    assert len(read_events(tmp_path / "deep" / "events.jsonl")) == 200


def test_close_from_sync_code_writes_every_line(tmp_path: Path) -> None:
    bus = _bus()
    JsonlEventWriter(tmp_path / "events.jsonl").attach(bus)
    _emit_some(bus, 50)
    bus.close()
    assert len(read_events(tmp_path / "events.jsonl")) == 50


async def test_aclose_twice_and_close_after_are_harmless(tmp_path: Path) -> None:
    writer = await JsonlEventWriter.open(tmp_path / "events.jsonl")
    await writer.aclose()
    await writer.aclose()
    writer.close()
    assert (tmp_path / "events.jsonl").read_text() == ""


class _GatedFile:
    """Stands in for the log file: counts writes, and holds the first until the test opens the gate."""

    def __init__(self, real) -> None:
        self.real, self.writes, self.gate, self.blocked = real, 0, threading.Event(), threading.Event()

    def write(self, text: str) -> int:
        self.writes += 1
        if self.writes == 1:
            self.blocked.set()
            self.gate.wait()
        return self.real.write(text)

    def flush(self) -> None:
        self.real.flush()

    def close(self) -> None:
        self.real.close()


async def test_lines_queued_while_the_thread_writes_go_out_in_one_write_and_are_flushed(tmp_path: Path) -> None:
    from tests.waiting import eventually

    path = tmp_path / "events.jsonl"
    writer = await JsonlEventWriter.open(path)
    gated = writer._file = _GatedFile(writer._file)  # type: ignore[assignment]
    bus = _bus()
    writer.attach(bus)
    _emit_some(bus, 1)
    await eventually(gated.blocked.is_set)
    _emit_some(bus, 300)  # queued behind the first write
    gated.gate.set()
    # Flushed as soon as the batch is written, before any close: a crash now would lose nothing.
    await eventually(lambda: path.read_text(encoding="utf-8").count("\n") == 301)
    assert gated.writes == 2
    await writer.aclose()
    assert len(read_events(path)) == 301
