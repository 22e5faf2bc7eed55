"""Wait for a condition instead of sleeping a fixed time and hoping it holds by then."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(check: Callable[[], T | Awaitable[T]], *, polls: int = 1000, interval_s: float = 0.01) -> T:
    """``check()``'s first truthy value, polled up to ``polls`` times; fails with its last value.

    Bounded by a count of polls, not a deadline: a slow machine waits longer between them, never
    fails a correct system for being slow.
    """
    value: T | None = None
    for _ in range(polls):
        result = check()
        value = await result if isinstance(result, Awaitable) else result  # type: ignore[assignment]
        if value:
            return value  # type: ignore[return-value]
        await asyncio.sleep(interval_s)
    raise AssertionError(f"condition never held after {polls} polls; last value {value!r}")
