"""The provider's own MCP client, as a fake provider runs it (native tool mode, ``mcp`` tools).

A cloud provider given ``{"type": "mcp", "server_url", "headers", ...}`` in its session connects to
that URL itself, lists the tools and calls them while it generates. The fakes do the same with the
official MCP SDK client over streamable HTTP (as ``harness.agents.native_oracle`` does), sending
exactly the headers the session declared, so the task server's token check and call stream see
what they would see from the provider.

The client is entered and left in the task that serves the provider's websocket (the SDK's anyio
scopes must be exited where they were entered).
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

__all__ = ["ProviderMcpClient", "mcp_tools_of"]


def mcp_tools_of(session: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``mcp`` tools a ``session.update`` declared (any dialect's session object)."""
    return [tool for tool in session.get("tools") or [] if tool.get("type") == "mcp"]


@dataclass
class ProviderMcpClient:
    """One declared MCP server: its label, the tools it listed, and the connection that calls them."""

    server_label: str
    allowed: list[str] | None
    tools: list[dict[str, Any]] = field(default_factory=list)
    _client: Client | None = None

    @classmethod
    async def connect(cls, declared: dict[str, Any], stack: AsyncExitStack) -> ProviderMcpClient:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=dict(declared.get("headers") or {}), timeout=httpx2.Timeout(30, read=300))
        )
        client = await stack.enter_async_context(Client(streamable_http_client(declared["server_url"], http_client=http)))
        allowed = declared.get("allowed_tools")
        provider = cls(str(declared.get("server_label") or ""), list(allowed) if isinstance(allowed, list) else None)
        provider._client = client
        listing = await client.list_tools()
        provider.tools = [
            {"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
            for t in listing.tools
            if provider.allowed is None or t.name in provider.allowed
        ]
        return provider

    def offers(self, name: str) -> bool:
        return any(tool["name"] == name for tool in self.tools)

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """``(output text, is_error)`` of one ``tools/call``, as the provider hands it to its model."""
        assert self._client is not None
        result = await self._client.call_tool(name, arguments)
        if result.structured_content is not None:
            text = json.dumps(result.structured_content, ensure_ascii=False)
        else:
            text = "".join(getattr(block, "text", "") for block in result.content)
        return text, bool(result.is_error)
