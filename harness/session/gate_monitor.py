"""The provisional grade after tool calls, logged as ``GATE_STATUS`` without holding up a frame.

One gate status is computed at a time, off the frame (``deferred.py``); calls that land while one
is computed are covered by the next. An agent flooding tool calls thus costs at most two grades per
burst, not one per call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from harness.events import EventBus, EventType
from harness.grading.report import GradeReport

from .deferred import DeferredWork

__all__ = ["GateMonitor"]


class GateMonitor:
    def __init__(self, grade_so_far: Callable[[], Awaitable[GradeReport]], work: DeferredWork, log: EventBus) -> None:
        self._grade_so_far = grade_so_far
        self._work = work
        self._log = log
        self._latest_call = -1

    def call_landed(self, index: int, t: int) -> None:
        """Call ``index`` took effect at ``t``: a gate status follows (now, or after the one running)."""
        self._latest_call = index
        if not self._work.pending("gate"):
            self._submit(t)

    def _submit(self, t: int) -> None:
        self._work.submit("gate", self._grade(), due_ms=t, deliver=self._status)

    async def _grade(self) -> tuple[int, GradeReport]:
        after_call = self._latest_call
        return after_call, await self._grade_so_far()

    async def _status(self, graded: tuple[int, GradeReport], t: int) -> None:
        after_call, report = graded
        self._log.emit(EventType.GATE_STATUS, "harness", t,
                       {**report.components, "pts": report.pts, "after_call": after_call, "failing": report.explain(),
                        "failing_items": report.failing_items()})
        if self._latest_call > after_call:
            self._submit(t)
