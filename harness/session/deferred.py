"""Work that must not hold up a frame — tool calls, grading, ASR — run as tasks, delivered at frame boundaries.

Both channels keep moving while a job runs. A job is delivered at the first frame boundary at or
after its due time (``submitted + latency``) once it has finished. On the virtual clock the
boundary waits for it, so the job takes zero media time beyond its injected latency and a session
is deterministic however long the job took on the wall; on the realtime clock a boundary never
waits: an unfinished job is looked at again at the next one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

__all__ = ["DeferredWork", "Job"]


@dataclass
class Job:
    name: str
    due_ms: int
    task: asyncio.Task[Any]
    deliver: Callable[[Any, int], Awaitable[None]]
    cancelled: bool = False


class DeferredWork:
    def __init__(self, *, wait_at_boundary: bool) -> None:
        self._wait = wait_at_boundary
        self._jobs: list[Job] = []

    def submit(
        self,
        name: str,
        work: Coroutine[Any, Any, Any],
        *,
        due_ms: int,
        deliver: Callable[[Any, int], Awaitable[None]],
    ) -> Job:
        job = Job(name, due_ms, asyncio.ensure_future(work), deliver)
        self._jobs.append(job)
        return job

    def pending(self, prefix: str = "") -> list[Job]:
        return [job for job in self._jobs if job.name.startswith(prefix)]

    def has_due(self, t: int) -> bool:
        """:meth:`settle` would deliver something at ``t`` (a cheap check for every frame)."""
        return self._ready(t) is not None

    async def settle(self, t: int) -> None:
        """Deliver, in submission order, every job due by ``t`` (waiting for them on the virtual clock).

        A job's exception propagates: the session fails with the job's own (typed) error.
        """
        while (ready := self._ready(t)) is not None:
            self._jobs.remove(ready)
            result = await ready.task
            await ready.deliver(result, t)

    def _ready(self, t: int) -> Job | None:
        """The first job, in submission order, that is due by ``t`` and deliverable now."""
        for job in self._jobs:
            if job.due_ms <= t and (self._wait or job.task.done()):
                return job
        return None

    async def aclose(self) -> None:
        """Cancel whatever is still running (the session is over)."""
        for job in self._jobs:
            job.task.cancel()
        await asyncio.gather(*(job.task for job in self._jobs), return_exceptions=True)
        self._jobs.clear()
