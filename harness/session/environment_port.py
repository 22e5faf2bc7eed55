"""How a session talks to its task environment, wherever the environment runs.

The runners only see this async interface. :class:`InProcessEnvironment` serves validation and unit
tests; the sandboxed MCP server (docker or local subprocess) implements the same interface through its
MCP endpoint and control API, so a session's results do not depend on where its tools ran.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcp_servers.environment import TaskEnvironment
from mcp_servers.public_bundle import PublicBundle
from mcp_servers.records import ApprovalToken, EnvironmentSnapshot, ToolCallRecord

__all__ = ["EnvironmentPort", "InProcessEnvironment"]


class EnvironmentPort(Protocol):
    """The operations a session needs from its environment.

    ``call_tool`` never raises for a bad call by the agent: refusals are ``ok=False`` records.
    Infrastructure failures (a dead server) raise, so they are never graded as the model's fault.
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


class InProcessEnvironment:
    """The task environment as a plain object in this process (no isolation)."""

    def __init__(self, bundle: PublicBundle) -> None:
        self._env = TaskEnvironment(bundle)

    async def list_tools(self) -> list[dict[str, Any]]:
        return self._env.tool_schemas()

    async def call_tool(self, name: str, args: Any, media_time_ms: int) -> ToolCallRecord:
        return self._env.call_tool(name, args, media_time_ms)

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
