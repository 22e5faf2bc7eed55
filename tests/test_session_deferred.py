"""Deferred jobs: delivered at the first frame boundary at or after their due time, in order."""

from __future__ import annotations

import asyncio

from harness.session.deferred import DeferredWork


async def _value(value: str, gate: asyncio.Event | None = None) -> str:
    if gate is not None:
        await gate.wait()
    return value


def _recorder(delivered: list[tuple[str, int]]):
    async def deliver(result: str, t: int) -> None:
        delivered.append((result, t))

    return deliver


async def test_nothing_is_due_without_jobs_or_before_the_due_time():
    work = DeferredWork(wait_at_boundary=True)
    assert not work.has_due(0)
    delivered: list[tuple[str, int]] = []
    work.submit("tool:a", _value("a"), due_ms=40, deliver=_recorder(delivered))
    assert not work.has_due(20)
    await work.settle(20)
    assert delivered == []
    assert work.has_due(40)
    await work.settle(40)
    assert delivered == [("a", 40)]
    assert not work.has_due(40)


async def test_the_virtual_clock_waits_for_an_unfinished_job_and_keeps_submission_order():
    work = DeferredWork(wait_at_boundary=True)
    gate = asyncio.Event()
    delivered: list[tuple[str, int]] = []
    work.submit("slow", _value("slow", gate), due_ms=0, deliver=_recorder(delivered))
    work.submit("fast", _value("fast"), due_ms=0, deliver=_recorder(delivered))
    assert work.has_due(0)  # due: the boundary waits for it
    asyncio.get_running_loop().call_later(0.01, gate.set)
    await work.settle(0)
    assert delivered == [("slow", 0), ("fast", 0)]


async def test_the_realtime_clock_delivers_only_finished_jobs():
    work = DeferredWork(wait_at_boundary=False)
    gate = asyncio.Event()
    delivered: list[tuple[str, int]] = []
    job = work.submit("slow", _value("slow", gate), due_ms=0, deliver=_recorder(delivered))
    await asyncio.sleep(0)
    assert not work.has_due(20)  # due but still running: looked at again at the next boundary
    await work.settle(20)
    assert delivered == []
    gate.set()
    await asyncio.wait([job.task])
    assert work.has_due(20)
    await work.settle(20)
    assert delivered == [("slow", 20)]
    await work.aclose()
