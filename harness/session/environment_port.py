"""How a session talks to its task environment, wherever the environment runs.

The runners only see this async interface. :class:`InProcessEnvironment` serves validation and unit
tests; the sandboxed MCP server (docker or local subprocess) implements the same interface through its
MCP endpoint and control API, so a session's results do not depend on where its tools ran.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Protocol

from mcp_servers.environment import TaskEnvironment
from mcp_servers.public_bundle import PublicBundle
from mcp_servers.records import ApprovalToken, EnvironmentSnapshot, SnapshotDelta, ToolCallRecord

from .tool_faults import checked_record

__all__ = ["EnvironmentPort", "InProcessEnvironment"]


class EnvironmentPort(Protocol):
    """The operations a session needs from its environment.

    ``call_tool`` never raises for a bad call by the agent: refusals are ``ok=False`` records.
    Infrastructure failures (a dead server) raise, so they are never graded as the model's fault;
    a call the server itself failed on raises :class:`~harness.blame.errors.HarnessBug`.
    """

    async def list_tools(self) -> list[dict[str, Any]]: ...

    async def call_tool(self, name: str, args: Any, media_time_ms: int) -> ToolCallRecord: ...

    async def grant_approval(
        self, action_type: str, target_id: str, media_time_ms: int, source_event_id: str | None
    ) -> ApprovalToken: ...

    async def revoke_approval(self, action_type: str, target_id: str, media_time_ms: int) -> list[str]: ...

    async def apply_event(
        self, event_id: str, *, stale_fields: list[str], world_updates: dict[str, Any], media_time_ms: int
    ) -> None: ...

    async def snapshot(self) -> EnvironmentSnapshot: ...

    async def snapshot_since(self, cursor: dict[str, int]) -> SnapshotDelta:
        """What changed after ``cursor`` (``EnvironmentSnapshot.cursor()``): for following a session."""
        ...

    def follow_calls(self) -> AsyncIterator[ToolCallRecord]:
        """Every call the server records, as it records it (native tool mode: the agent's own calls)."""
        ...

    async def set_media_time(self, media_time_ms: int) -> int:
        """Set the media time the server stamps calls with that arrive without one (native tool
        mode); returns how many calls the server has recorded, so a follower can catch up."""
        ...


class InProcessEnvironment:
    """The task environment as a plain object in this process (no isolation).

    ``media_time_ms`` and :meth:`follow_calls` let an in-process agent call tools "natively" in
    tests, through :meth:`call_tool` with ``media_time_ms=None``.
    """

    def __init__(self, bundle: PublicBundle) -> None:
        self._env = TaskEnvironment(bundle)
        self.media_time_ms = 0
        self._followers: list[asyncio.Queue[ToolCallRecord]] = []

    async def list_tools(self) -> list[dict[str, Any]]:
        return self._env.tool_schemas()

    async def call_tool(self, name: str, args: Any, media_time_ms: int | None) -> ToolCallRecord:
        record = self._env.call_tool(name, args, self.media_time_ms if media_time_ms is None else media_time_ms)
        for queue in self._followers:
            queue.put_nowait(record)
        return checked_record(record)

    async def follow_calls(self) -> AsyncIterator[ToolCallRecord]:
        queue: asyncio.Queue[ToolCallRecord] = asyncio.Queue()
        self._followers.append(queue)
        try:
            while True:
                yield checked_record(await queue.get())
        finally:
            self._followers.remove(queue)

    async def set_media_time(self, media_time_ms: int) -> int:
        self.media_time_ms = media_time_ms
        return self._env.call_count

    async def grant_approval(
        self, action_type: str, target_id: str, media_time_ms: int, source_event_id: str | None
    ) -> ApprovalToken:
        return self._env.grant_approval(action_type, target_id, media_time_ms, source_event_id)

    async def revoke_approval(self, action_type: str, target_id: str, media_time_ms: int) -> list[str]:
        return self._env.revoke_approval(action_type, target_id, media_time_ms)

    async def apply_event(
        self, event_id: str, *, stale_fields: list[str], world_updates: dict[str, Any], media_time_ms: int
    ) -> None:
        self._env.apply_event(
            event_id, stale_fields=stale_fields, world_updates=world_updates, media_time_ms=media_time_ms
        )

    async def snapshot(self) -> EnvironmentSnapshot:
        return self._env.snapshot()

    async def snapshot_since(self, cursor: dict[str, int]) -> SnapshotDelta:
        return self._env.snapshot_since(cursor)
