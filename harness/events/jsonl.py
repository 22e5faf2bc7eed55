"""``events.jsonl``: the bus's events on disk, one JSON object per line, flushed every tenth of a second.

Lines are written by a background thread so the asyncio loop never blocks on the disk. Woken by a
line, the thread lets lines gather for ``GATHER_S``, then writes and flushes all of them at once, so
a crash loses at most that long's lines. A thread woken for every line cost more than the session
loop it served: a virtual-clock session emits a thousand lines a second, and each wake made the
loop hand over the GIL (the ten demo sessions in process: 16.5 CPU-s with a wake per line, 11 now).
Async code creates the writer with :meth:`JsonlEventWriter.open` and ends it with :meth:`JsonlEventWriter.aclose`,
so neither creating the file nor waiting for the last lines to reach the disk happens on the loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Protocol

from .types import RunEvent


class Subscribable(Protocol):
    """What :meth:`JsonlEventWriter.attach` needs of a bus (the bus spills its old events through a
    writer of this module, so this module names no bus: no import circle)."""

    def subscribe(self, subscriber: Callable[[RunEvent], None], *, on_close: Callable[[], None] | None = None) -> None: ...

__all__ = ["EVENTS_FILE", "GATHER_S", "EventLogError", "JsonlEventWriter", "read_events"]

EVENTS_FILE = "events.jsonl"
#: How long the writer lets lines gather before it writes them (what a crash may lose).
GATHER_S = 0.1


class EventLogError(ValueError):
    """A line of an ``events.jsonl`` that is complete yet not an event: the log cannot be trusted."""

    def __init__(self, path: Path, line_no: int, problem: str) -> None:
        super().__init__(f"{path}:{line_no}: not an event ({problem})")
        self.path = path
        self.line_no = line_no


class JsonlEventWriter:
    """Appends each event's line to a file from a dedicated thread.

    Attached to a bus, it is closed with the bus (:meth:`close`, which waits for the thread); a
    session awaits :meth:`aclose` before closing its bus, which leaves the bus nothing to wait for.
    """

    _STOP = object()

    def __init__(self, path: Path | None) -> None:
        """``path=None``: an anonymous temporary file (gone once closed), read back with :meth:`read_back`."""
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] = (path.open("w", encoding="utf-8") if path is not None
                               else tempfile.TemporaryFile("w+", encoding="utf-8"))
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._stopping = False
        self._thread = threading.Thread(target=self._drain, name=f"event-log:{path.name if path else 'spill'}", daemon=True)
        self._thread.start()

    @classmethod
    async def open(cls, path: Path) -> JsonlEventWriter:
        """A writer whose file is created (and folders made) in a worker thread, off the loop."""
        return await asyncio.to_thread(cls, path)

    def attach(self, bus: Subscribable) -> JsonlEventWriter:
        bus.subscribe(self, on_close=self.close)
        return self

    def __call__(self, event: RunEvent) -> None:
        self._queue.put(event.to_line())

    def _drain(self) -> None:
        stopping = False
        while not stopping:
            batch = [self._queue.get()]
            if type(batch[0]) is str:
                time.sleep(GATHER_S)  # lines put meanwhile wake nothing: no thread waits on the queue
            while not self._queue.empty():
                batch.append(self._queue.get())
            if any(item is self._STOP for item in batch):  # what was queued after the stop is dropped
                stopping = True
                batch = batch[: next(i for i, item in enumerate(batch) if item is self._STOP)]
            lines = [item for item in batch if type(item) is str]
            if lines:
                self._file.write("".join(f"{line}\n" for line in lines))
                self._file.flush()
            for item in batch:
                if isinstance(item, threading.Event):
                    item.set()  # a reader waits for the lines queued before it (:meth:`read_back`)
        if self.path is not None:  # an anonymous file is closed (and so deleted) by :meth:`close`
            self._file.close()

    def close(self) -> None:
        """Write the queued lines, close the file, then return (blocking: async code awaits :meth:`aclose`)."""
        self._stop()
        self._thread.join()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the loop: the thread is awaited from a worker thread."""
        self._stop()
        if self._thread.is_alive():
            await asyncio.to_thread(self._thread.join)

    def _stop(self) -> None:
        if not self._stopping:
            self._stopping = True
            self._queue.put(self._STOP)

    def read_back(self, start: int = 0, *, wait: bool = True) -> Iterator[tuple[int, str]]:
        """``(offset, line)`` of every line written from byte ``start`` on, once every line queued so
        far is on disk (blocking; a finished session reads its spilled events through this).
        ``wait=False``: what is on disk now (the caller has just waited)."""
        if wait and self._stopping:
            self._thread.join()
        elif wait and self._thread.is_alive():
            written = threading.Event()
            self._queue.put(written)
            while self._thread.is_alive() and not written.wait(0.05):
                pass
        fd = self._file.fileno()
        offset, rest = start, b""
        while chunk := os.pread(fd, 1 << 20, offset + len(rest)):
            rest += chunk
            *lines, rest = rest.split(b"\n")
            for line in lines:
                yield offset, line.decode("utf-8")
                offset += len(line) + 1

    def end(self) -> None:
        """Let the thread write what is queued and end, without waiting for it."""
        self._stop()


def read_events(path: Path) -> list[RunEvent]:
    """The events of an ``events.jsonl``.

    Only a torn last line (no newline after it: the writer died mid-line) is left out. Any other line
    that is not an event raises :class:`EventLogError` naming the file and line, so replay, regrade
    and metrics never run silently on a subset of the session.
    """
    text = Path(path).read_text(encoding="utf-8")
    lines = text.split("\n")
    torn = lines.pop()  # "" when the file ends with a newline, else the unfinished last line
    events = []
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            events.append(RunEvent.model_validate(json.loads(line)))
        except ValueError as exc:
            raise EventLogError(Path(path), line_no, str(exc).splitlines()[0]) from None
    if torn.strip():
        try:
            events.append(RunEvent.model_validate(json.loads(torn)))
        except ValueError:
            pass  # the event in flight when the writer stopped
    return events
