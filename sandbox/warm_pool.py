"""Sandboxes started ahead of need, each handed to exactly one session.

Booting a task server costs seconds (python, then ``import mcp``); a pool keeps ``size`` spares
booting or booted, empty, so a session only has to take one and upload its task. A spare is never
returned to the pool: the session that took it stops it, and the next session gets a fresh one.
The pool spawns and disposes through callables, so each backend decides what a spare is (a
subprocess, or a future of a container being provisioned) and how it is removed.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["WarmPool"]

Spare = TypeVar("Spare")


class WarmPool(Generic[Spare]):
    """Up to ``size`` spares, made by the ``spawn`` callables given (which must return quickly).

    ``dispose`` removes a spare nobody took (blocking; :meth:`drain` runs it off the event loop).
    """

    def __init__(self, dispose: Callable[[Spare], None], *, size: int) -> None:
        if size < 0:
            raise ValueError(f"warm pool size must be >= 0, got {size}")
        self.size = size
        self._dispose = dispose
        self._spares: deque[Spare] = deque()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._spares)

    def take(self, spawn: Callable[[], Spare]) -> tuple[Spare, bool]:
        """A spare for one session and ``True``, or a fresh ``spawn()`` and ``False`` (pool empty)."""
        with self._lock:
            if self._spares:
                return self._spares.popleft(), True
        return spawn(), False

    def refill(self, spawn: Callable[[], Spare]) -> None:
        """``spawn()`` spares until the pool holds ``size`` of them."""
        while True:
            with self._lock:
                if len(self._spares) >= self.size:
                    return
            spare = spawn()
            with self._lock:
                self._spares.append(spare)

    def drain(self) -> None:
        """Dispose of every spare (blocking); the pool refills only when asked again."""
        while True:
            with self._lock:
                if not self._spares:
                    return
                spare = self._spares.popleft()
            self._dispose(spare)
