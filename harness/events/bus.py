"""One session's event bus: every part of a session publishes here, in order.

Subscribers are plain callables, called synchronously in emission order (the ``events.jsonl``
writer, the metrics, a campaign's progress). Each is isolated, as pipecat isolates its observers: a
subscriber that raises neither fails the session nor stops the others; the first failure is logged
with its traceback (and kept in :attr:`EventBus.first_subscriber_error`), later ones are counted. :meth:`EventBus.stream` gives an async iterator of the
same events — past ones first, then live ones until the bus closes — for consumers that run on
their own schedule, such as the TUI. Emitting never blocks the session loop.

Memory does not grow with a session's length: :attr:`EventBus.events` keeps the newest
``WINDOW_EVENTS`` events in memory and hands older ones to a temporary file (written by a
:class:`~harness.events.jsonl.JsonlEventWriter` thread, as ``events.jsonl`` is), from where a
reader after the session (metrics, grading, results) gets them back in order. An honest session
has a few thousand events and never spills; an agent that floods the session with signals costs
disk, not memory.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from array import array
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, overload

from .lines import parse_event_line
from .payloads import validate_payload
from .types import Actor, EventType, RunEvent

if TYPE_CHECKING:
    from .jsonl import JsonlEventWriter

__all__ = ["WINDOW_EVENTS", "EventBus", "EventLog", "EventSubscriber"]

EventSubscriber = Callable[[RunEvent], None]

#: Events a bus keeps in memory (an honest session has a few thousand; ~1.6 KiB each)...
WINDOW_EVENTS = 10_000
#: ...and the characters of their payloads' strings (an agent's strings may each be 32,000 long).
WINDOW_CHARS = 4_000_000

_log = logging.getLogger(__name__)


def _chars(value: Any) -> int:
    """Characters of the strings in a payload (keys included): what its memory grows with."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(key) + _chars(item) for key, item in value.items())
    if isinstance(value, list):
        return sum(_chars(item) for item in value)
    return 0


class EventLog(Sequence[RunEvent]):
    """A session's events in order: the newest ``window`` (within ``window_chars`` of payload
    strings) in memory, older ones on disk.

    Reading the spilled part (iterating past the window, or indexing into it) waits for the
    spill's thread to write what it holds: done after the session, never in its frame loop.
    """

    def __init__(self, window: int = WINDOW_EVENTS, window_chars: int = WINDOW_CHARS) -> None:
        self.window, self.window_chars = window, window_chars
        self._recent: deque[RunEvent] = deque()
        self._weights: deque[int] = deque()
        self._chars = 0
        self._spilled = 0
        #: Writes the spilled events to an anonymous file, once the window first overflows.
        self._spill: JsonlEventWriter | None = None
        self._finished = False

    def append(self, event: RunEvent) -> None:
        weight = _chars(event.payload)
        self._recent.append(event)
        self._weights.append(weight)
        self._chars += weight
        while not self._finished and len(self._recent) > 1 and (len(self._recent) > self.window or self._chars > self.window_chars):
            if self._spill is None:
                from .jsonl import JsonlEventWriter  # jsonl's writer module imports this one

                self._spill = JsonlEventWriter(None)
            self._spill(self._recent.popleft())
            self._chars -= self._weights.popleft()
            self._spilled += 1

    @property
    def spilled(self) -> int:
        """How many events are on disk, not in memory."""
        return self._spilled

    def __len__(self) -> int:
        return self._spilled + len(self._recent)

    def _spilled_lines(self) -> Iterator[tuple[int, str]]:
        """``(byte offset, line)`` of every spilled event, in order."""
        if self._spill is not None:
            yield from islice(self._spill.read_back(), self._spilled)

    def _from_disk(self, start: int = 0) -> Iterator[RunEvent]:
        """The spilled events from index ``start`` on."""
        for offset, line in islice(self._spilled_lines(), start, None):
            yield self._parsed(line, offset)

    @staticmethod
    def _parsed(line: str, offset: int) -> RunEvent:
        event = parse_event_line(line)
        if event is None:
            raise RuntimeError(f"the event bus's spill file has a line that is not an event at byte {offset}")
        return event

    def __iter__(self) -> Iterator[RunEvent]:
        yield from self._from_disk()
        yield from list(self._recent)  # a copy: an event emitted meanwhile must not break the iteration

    def __reversed__(self) -> Iterator[RunEvent]:
        yield from reversed(list(self._recent))
        if self._spill is not None:  # offsets only (8 bytes an event), then each line read again
            offsets = array("q", (offset for offset, _ in self._spilled_lines()))
            for offset in reversed(offsets):
                _, line = next(self._spill.read_back(offset, wait=False))
                yield self._parsed(line, offset)

    @overload
    def __getitem__(self, index: int) -> RunEvent: ...
    @overload
    def __getitem__(self, index: slice) -> list[RunEvent]: ...
    def __getitem__(self, index: int | slice) -> RunEvent | list[RunEvent]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return list(islice(self, start, max(start, stop)))
            return [self[i] for i in range(start, stop, step)]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("event index out of range")
        if index >= self._spilled:
            return self._recent[index - self._spilled]
        return next(self._from_disk(index))

    def finish(self) -> None:
        """No more spilling: the spill's thread writes what it holds and ends (its anonymous file is
        deleted with this log); an event appended later stays in memory."""
        self._finished = True
        if self._spill is not None:
            self._spill.end()


class EventBus:
    """Collects a session's events in order and hands each one to every subscriber."""

    def __init__(
        self,
        *,
        run_id: str,
        task_version: str,
        condition: str,
        wall_clock_ns: Callable[[], int] | None = None,
    ) -> None:
        self.run_id = run_id
        self.task_version = task_version
        self.condition = condition
        #: Every event so far, in order (the newest in memory, older ones on disk).
        self.events = EventLog()
        self._wall_clock_ns = wall_clock_ns
        self._subscribers: list[EventSubscriber] = []
        self._streams: list[asyncio.Queue[RunEvent | None]] = []
        self._closers: list[Callable[[], None]] = []
        self.closed = False
        #: How many times a subscriber (or a closer) raised, and the first traceback.
        self.subscriber_failures = 0
        self.first_subscriber_error: str | None = None

    def subscribe(self, subscriber: EventSubscriber, *, on_close: Callable[[], None] | None = None) -> None:
        """Call ``subscriber`` with every event emitted from now on (and ``on_close`` at the end)."""
        self._subscribers.append(subscriber)
        if on_close is not None:
            self._closers.append(on_close)

    def emit(
        self, type: EventType, actor: Actor, media_time_ms: int, payload: dict[str, Any] | None = None
    ) -> RunEvent:
        """Publish one event; its payload must match the type's model (a harness bug otherwise)."""
        # The envelope is built here from trusted values; only the payload needs validating.
        event = RunEvent.model_construct(
            seq=len(self.events),
            type=type,
            actor=actor,
            wall_time_ns=self._wall_clock_ns() if self._wall_clock_ns else 0,
            media_time_ms=int(media_time_ms),
            payload=validate_payload(type, payload or {}),
            run_id=self.run_id,
            task_version=self.task_version,
            condition=self.condition,
            causal_parents=[],
        )
        self.events.append(event)
        for subscriber in self._subscribers:
            try:
                subscriber(event)
            except Exception:
                self._subscriber_failed(f"{subscriber!r} on {event.type.value} (seq {event.seq})")
        for queue in self._streams:
            queue.put_nowait(event)
        return event

    def of_type(self, type: EventType) -> list[RunEvent]:
        return [e for e in self.events if e.type == type]

    async def stream(self) -> AsyncIterator[RunEvent]:
        """Every event of the session: those already emitted, then live ones until :meth:`close`."""
        queue: asyncio.Queue[RunEvent | None] = asyncio.Queue()
        for past in self.events:
            queue.put_nowait(past)
        if self.closed:
            queue.put_nowait(None)
        else:
            self._streams.append(queue)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            if queue in self._streams:
                self._streams.remove(queue)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.events.finish()
        for queue in self._streams:
            queue.put_nowait(None)
        for closer in self._closers:
            try:
                closer()
            except Exception:
                self._subscriber_failed(f"closer {closer!r}")

    def _subscriber_failed(self, what: str) -> None:
        """Called inside the ``except`` of a failed subscriber: log the first, count the rest."""
        self.subscriber_failures += 1
        if self.first_subscriber_error is None:
            self.first_subscriber_error = traceback.format_exc()
            _log.error("event subscriber %s raised; the session goes on without it "
                       "(later failures are only counted)", what, exc_info=True)
