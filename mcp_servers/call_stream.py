"""An append-only stream of call records that the harness can follow while a session runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["CallStream"]


class CallStream:
    """Records in publication order; readers wait for new ones without polling."""

    def __init__(self) -> None:
        self._records: list[dict[str, Any]] = []
        self._changed = asyncio.Condition()
        self._closed = False

    def __len__(self) -> int:
        return len(self._records)

    def publish(self, record: dict[str, Any]) -> None:
        self._records.append(record)
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def close(self) -> None:
        self._closed = True
        await self._notify()

    def _has_more(self, position: int):
        return lambda: position < len(self._records) or self._closed

    async def follow(self, after: int = 0) -> AsyncIterator[dict[str, Any]]:
        """Yield records from index ``after`` on, waiting for new ones until the stream closes."""
        position = max(0, after)
        while True:
            while position < len(self._records):
                yield self._records[position]
                position += 1
            if self._closed:
                return
            async with self._changed:
                await self._changed.wait_for(self._has_more(position))
