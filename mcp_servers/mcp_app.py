"""The task's tools served over MCP (streamable HTTP at ``/mcp``) with the official SDK.

The one module of the server that imports the MCP SDK, which costs about a CPU-second (its package
``__init__`` loads client, server and two protocol versions of its models). The harness's own bridge
calls tools through the control plane, so a server no MCP client will reach can defer this import to
the first ``/mcp`` request (:func:`mcp_servers.server.build_app`, ``lazy=True``).

Media time is never the caller's: a call is stamped with the media time the harness last set
through the control plane, and the caller's ``_meta`` is not read at all.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import mcp.types as mcp_types
from mcp.server import Server, ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette

from .task_server import CALL_INDEX_META_KEY, CALL_RECORD_META_KEY, MAX_REQUEST_BODY

if TYPE_CHECKING:
    from .task_server import TaskServer

__all__ = ["build_mcp_app", "call_result", "mcp_server"]


async def call_result(server: TaskServer, name: str, args: Any) -> mcp_types.CallToolResult:
    """One call as an MCP tool result, the whole call record in its ``_meta``.

    A call the server itself failed on (``server_fault``: a bug in our handler) is logged and
    published like any other, then answered with a JSON-RPC internal error instead of a tool
    result: it is not a tool error the caller could be scored on.
    """
    record, record_json = await server.call_tool(name, args)
    if record.server_fault is not None:
        raise MCPError(
            mcp_types.INTERNAL_ERROR, record.error or "task server fault", {CALL_INDEX_META_KEY: record.index}
        )
    output = record.output
    text = json.dumps(output, ensure_ascii=False, default=str)
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)],
        structured_content=output if isinstance(output, dict) else None,
        is_error=not record.ok,
        _meta={CALL_INDEX_META_KEY: record.index, CALL_RECORD_META_KEY: record_json},
    )


def mcp_server(server: TaskServer) -> Server[Any]:
    """The SDK's low-level server listing exactly the task's tools."""
    tools: list[mcp_types.Tool] = []

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        if not tools:
            tools.extend(
                mcp_types.Tool(
                    name=s["name"], description=s.get("description", ""), input_schema=s["parameters"]
                )
                for s in server.loaded_env().tool_schemas()
            )
        return mcp_types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        # ``_meta`` is not read: a media time there is ignored (only the harness sets it, through
        # the control plane), and arguments travel only as ``arguments``.
        return await call_result(server, params.name, params.arguments)

    sdk_server: Server[Any] = Server("apex-voice-task", on_list_tools=list_tools, on_call_tool=call_tool)
    # The SDK's only default middleware opens an OpenTelemetry span per message; nothing here
    # exports traces, so it is pure per-call overhead.
    sdk_server.middleware.clear()
    return sdk_server


def build_mcp_app(server: TaskServer, *, host: str) -> Starlette:
    """The SDK's stateless, JSON-answering streamable-HTTP app at ``/mcp`` (no gate: see ``build_app``)."""
    if host in ("127.0.0.1", "localhost", "::1"):
        security = None  # the SDK's DNS-rebinding protection for loopback binds
    else:
        # Inside the sandbox the harness reaches us by container address; the network itself is
        # internal, and the control plane is not on this listener at all.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return mcp_server(server).streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        host=host,
        transport_security=security,
        max_request_body_size=MAX_REQUEST_BODY,
    )
