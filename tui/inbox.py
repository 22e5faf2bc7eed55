"""The app's inbox: updates from sources on other threads, bounded by the events it holds.

A live campaign's bus subscriber must never block (it runs on the session's loop), and an agent
decides how fast its session emits events: under a flood the UI thread folds fewer events a second
than arrive, and an unbounded queue grows with the session. So the inbox holds at most
:data:`MAX_EVENTS` events; past that a session's further events are counted, not kept, until the UI
has caught up to half, and the session view is then told how many it did not see
(:class:`~tui.state.updates.EventsSkipped`; its ``events.jsonl`` has them all). A tailing source can
afford to wait instead (:meth:`Inbox.put_when_room`), so ``watch`` shows every event.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable

from .state.campaign_view import CellKey
from .state.updates import EventsRead, EventsSkipped, SessionRestarted, Update

__all__ = ["MAX_EVENTS", "Inbox"]

#: Events the inbox holds at most (a few kB each with their payloads: tens of MB at worst).
MAX_EVENTS = 20_000


class Inbox:
    """Thread-safe: sources append from any thread, the UI thread takes with :meth:`popleft`."""

    def __init__(self, max_events: int = MAX_EVENTS) -> None:
        self.max_events = max_events
        self._updates: deque[Update] = deque()
        self._events = 0
        #: Events not kept, per session, since its last kept one (told once the UI catches up).
        self._skipped: dict[CellKey, int] = {}
        self._room = threading.Condition()

    def __len__(self) -> int:
        return len(self._updates)

    def __bool__(self) -> bool:
        return bool(self._updates)

    def append(self, update: Update) -> None:
        """Keep ``update``, or count its events as skipped when the inbox is full. Never blocks."""
        with self._room:
            if isinstance(update, EventsRead):
                if update.key in self._skipped or self._events + len(update.events) > self.max_events:
                    self._skipped[update.key] = self._skipped.get(update.key, 0) + len(update.events)
                    return
                self._events += len(update.events)
            elif isinstance(update, SessionRestarted):
                self._skipped.pop(update.key, None)  # the attempt they belonged to is over
            self._updates.append(update)

    def extend(self, updates: Iterable[Update]) -> None:
        for update in updates:
            self.append(update)

    def put_when_room(self, update: Update, cancelled: Callable[[], bool], poll_s: float = 0.1) -> None:
        """Keep ``update`` once the UI has folded the inbox down to half (a tailing source reads
        on when it likes); gives up only if ``cancelled()``."""
        with self._room:
            while self._events > self.max_events // 2 and not cancelled():
                self._room.wait(poll_s)
            if isinstance(update, EventsRead):
                self._events += len(update.events)
            self._updates.append(update)

    def popleft(self) -> Update:
        """The oldest update (``IndexError`` when empty, as a deque's)."""
        with self._room:
            update = self._updates.popleft()
            if isinstance(update, EventsRead):
                self._events -= len(update.events)
            if self._events <= self.max_events // 2:
                if self._skipped:
                    self._updates.extend(EventsSkipped(key, n) for key, n in self._skipped.items())
                    self._skipped.clear()
                self._room.notify_all()
            return update
