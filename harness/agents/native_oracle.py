"""The reference native-MCP agent: the oracle's policy, calling the task's tools itself over MCP.

It is what native tool mode is tested with: the harness hands it the task's MCP endpoint
(``SessionConfig.mcp``) and never executes a call for it; every call it makes is observed at the
server, exactly as for any agent with its own MCP client. The calls go through the official MCP
SDK client over streamable HTTP. It runs on the virtual clock: a call is awaited inside
``send_audio``, so the session stays deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, ClassVar, Literal

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.audio.frames import AudioFrame

from .oracle_voice import OracleVoiceAgent
from .realtime import (
    AgentEvent,
    McpCallReported,
    RealtimeAdapter,
    SessionConfig,
    ToolCallRequested,
    ToolResult,
)

__all__ = ["NativeOracleAgent", "ToolCaller"]

#: ``(name, arguments) -> (output, is_error)``: how the agent reaches its tools.
ToolCaller = Callable[[str, Any], Awaitable[tuple[Any, bool]]]


class NativeOracleAgent(RealtimeAdapter):
    model_id: ClassVar[str] = "native-oracle"
    clock_mode: ClassVar[Literal["virtual", "realtime"]] = "virtual"

    def __init__(self, call_tool: ToolCaller | None = None, inner: OracleVoiceAgent | None = None) -> None:
        self._inner = inner or OracleVoiceAgent()
        self._call_tool = call_tool
        self._stack = AsyncExitStack()
        self._events: list[AgentEvent] = []
        self.calls_made = 0

    async def connect(self, config: SessionConfig) -> None:
        if self._call_tool is None:
            if config.mcp is None:
                raise ValueError("the native oracle needs the task's MCP endpoint (run it with --tool-mode native)")
            http = await self._stack.enter_async_context(
                httpx2.AsyncClient(headers=dict(config.mcp.headers), timeout=httpx2.Timeout(30, read=300))
            )
            client = await self._stack.enter_async_context(
                Client(streamable_http_client(config.mcp.url, http_client=http))
            )
            self._call_tool = _mcp_caller(client)
        await self._inner.connect(config)

    async def send_audio(self, frame: AudioFrame) -> None:
        await self._inner.send_audio(frame)
        await self._run_calls()

    async def send_tool_result(self, result: ToolResult) -> None:
        raise RuntimeError("native tool mode: the harness never sends tool results to a native agent")

    def poll_events(self) -> list[AgentEvent]:
        events, self._events = self._events, []
        return events

    async def _run_calls(self) -> None:
        """Make the oracle's calls itself and give it the results, until it asks for none."""
        while pending := self._inner.poll_events():
            for event in pending:
                if not isinstance(event, ToolCallRequested):
                    self._events.append(event)
                    continue
                args = json.loads(event.arguments) if event.arguments.strip() else {}
                assert self._call_tool is not None
                # Its own account of the call (diagnostics; the server's stream is the record).
                self._events.append(McpCallReported(event.call_id, event.name, "started"))
                output, is_error = await self._call_tool(event.name, args)
                self.calls_made += 1
                self._events.append(McpCallReported(event.call_id, event.name, "failed" if is_error else "completed"))
                await self._inner.send_tool_result(ToolResult(event.call_id, event.name, output, is_error))

    def metadata(self) -> dict[str, Any]:
        return {"native_calls": self.calls_made}

    async def close(self) -> None:
        await self._stack.aclose()


def _mcp_caller(client: Client) -> ToolCaller:
    async def call(name: str, args: Any) -> tuple[Any, bool]:
        result = await client.call_tool(name, args)
        if result.structured_content is not None:
            return result.structured_content, bool(result.is_error)
        text = "".join(getattr(block, "text", "") for block in result.content)
        try:
            return json.loads(text), bool(result.is_error)
        except ValueError:
            return text, bool(result.is_error)

    return call
