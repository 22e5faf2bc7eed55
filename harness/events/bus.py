"""One session's event bus: every part of a session publishes here, in order.

Subscribers are plain callables, called synchronously in emission order (the ``events.jsonl``
writer, the metrics, a campaign's progress). :meth:`EventBus.stream` gives an async iterator of the
same events — past ones first, then live ones until the bus closes — for consumers that run on
their own schedule, such as the TUI. Emitting never blocks the session loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from .payloads import validate_payload
from .types import Actor, EventType, RunEvent

__all__ = ["EventBus", "EventSubscriber"]

EventSubscriber = Callable[[RunEvent], None]


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
        self.events: list[RunEvent] = []
        self._wall_clock_ns = wall_clock_ns
        self._subscribers: list[EventSubscriber] = []
        self._streams: list[asyncio.Queue[RunEvent | None]] = []
        self._closers: list[Callable[[], None]] = []
        self.closed = False

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
            subscriber(event)
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
        for queue in self._streams:
            queue.put_nowait(None)
        for closer in self._closers:
            closer()
