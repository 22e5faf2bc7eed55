"""The gate monitor alone: one provisional grade at a time, the calls of a burst covered by two."""

from __future__ import annotations

import asyncio

from harness.events import EventBus, EventType
from harness.grading.report import GradeReport
from harness.session.deferred import DeferredWork
from harness.session.gate_monitor import GateMonitor


def _report(pts: int) -> GradeReport:
    return GradeReport(components={"GS": True, "PC": bool(pts), "RA": True, "WA": True}, pts=pts, afa=None,
                       progress_score=0.0)


async def test_a_burst_of_calls_costs_two_grades_and_the_last_status_covers_the_last_call():
    log = EventBus(run_id="r", task_version="1", condition="C2")
    work = DeferredWork(wait_at_boundary=True)
    release = asyncio.Event()
    grades = []

    async def grade_so_far() -> GradeReport:
        grades.append(len(grades))
        await release.wait()
        return _report(len(grades) - 1)

    gate = GateMonitor(grade_so_far, work, log)
    gate.call_landed(0, 100)
    await asyncio.sleep(0)  # the first grade is under way when the rest of the burst lands
    for index in range(1, 5):
        gate.call_landed(index, 100)
    release.set()
    await work.settle(100)
    statuses = [e.payload for e in log.of_type(EventType.GATE_STATUS)]
    assert len(grades) == 2
    assert [s["after_call"] for s in statuses] == [0, 4]
    assert [s["pts"] for s in statuses] == [0, 1] and statuses[0]["PC"] is False
