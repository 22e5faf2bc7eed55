"""One task's environment served over MCP (streamable HTTP at ``/mcp``) plus a control API.

The model-facing side lists exactly the task's tools and nothing else. The control side
(``/control/...``) is for the harness only and is served by a separate app on a separate listener
(a unix socket the harness owns; the MCP listener answers 404 for it): every route except health
also needs the bearer token given at start, compared in constant time. ``/mcp`` needs a bearer
token of its own, the agent token (per session, distinct from the control token), when one is given. After every change the environment appends what changed to a
state journal (:mod:`mcp_servers.state_file`), so the harness can still grade a session whose
server hangs.

A server either gets its task at start (``--task DIR``) or boots empty and receives it once through
``POST /control/load``: a warm pool starts servers ahead of need and each one serves exactly one
session. Until a task is loaded ``/mcp`` answers 503 and nothing can be called.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
from mcp.server import Server, ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .argument_validation import ArgumentsProblem, safe_text
from .bearer import bearer_matches
from .bundle_upload import TaskAlreadyLoadedError
from .call_stream import CallStream
from .control_api import control_routes
from .environment import TaskEnvironment
from .public_bundle import PublicBundle
from .state_file import StateJournal

__all__ = [
    "CALL_INDEX_META_KEY",
    "CALL_RECORD_META_KEY",
    "RAW_ARGUMENTS_META_KEY",
    "REFUSED_ARGUMENTS_META_KEY",
    "TaskAlreadyLoadedError",
    "TaskServer",
    "build_app",
    "build_control_app",
]

#: ``_meta`` key a bridging harness uses to forward arguments that are not a JSON object (a model
#: emitted a list or a string). MCP's ``arguments`` must be an object, so they travel here and the
#: environment refuses them exactly as it would in process: same call log, same grade.
RAW_ARGUMENTS_META_KEY = "apex_voice/raw_arguments"

#: ``_meta`` key a bridging harness uses instead of arguments it cannot send (a lone surrogate,
#: NaN, too deep, too large): ``{"message", "logged"}`` of an ``ArgumentsProblem``. The call is
#: refused and logged with that message, as in process. It can only make the caller's own call fail.
REFUSED_ARGUMENTS_META_KEY = "apex_voice/refused_arguments"
_MAX_FORWARDED_CHARS = 500

#: ``_meta`` key on every tool result: the call's index in the call log (``/control/calls/{index}``).
CALL_INDEX_META_KEY = "apex_voice/call_index"

#: ``_meta`` key on every tool result: the whole ``ToolCallRecord`` as JSON, so a bridging harness
#: needs one request per call. It holds nothing the caller does not already know (its own call,
#: the output it was shown, the fields it changed).
CALL_RECORD_META_KEY = "apex_voice/call_record"

#: Tool arguments larger than this are refused by the environment; the HTTP body cap sits above it.
MAX_REQUEST_BODY = 1024 * 1024

#: ``/mcp`` requests served at once; more answer 503 at once instead of queueing (a flood's limit).
MAX_MCP_IN_FLIGHT = 32


class TaskServer:
    """The environment, its media clock, its persisted state and its call stream, for one session.

    ``bundle`` and ``env`` are ``None`` until a task is loaded (at construction or by :meth:`load`).
    """

    def __init__(self, bundle: PublicBundle | None = None, *, state_file: Path | None = None) -> None:
        self.bundle: PublicBundle | None = None
        self.env: TaskEnvironment | None = None
        self.media_time_ms = 0
        self.calls = CallStream()
        self.state_file = StateJournal(state_file) if state_file else None
        self._tools: list[mcp_types.Tool] = []
        # Calls are applied one at a time so the log order is the execution order.
        self._lock = asyncio.Lock()
        if bundle is not None:
            self.load(bundle)

    @property
    def task_id(self) -> str | None:
        return self.bundle.task_id if self.bundle is not None else None

    def refuse_second_load(self) -> None:
        """Raise :class:`TaskAlreadyLoadedError` when a task is loaded: a server is never reused."""
        if self.bundle is not None:
            raise TaskAlreadyLoadedError(
                f"this server already serves task {self.bundle.task_id!r}; a server serves one session"
            )

    def load(self, bundle: PublicBundle) -> None:
        """Serve ``bundle`` from now on; refused when a task is already loaded."""
        self.refuse_second_load()
        env = TaskEnvironment(bundle)
        self._tools = [
            mcp_types.Tool(name=s["name"], description=s.get("description", ""), input_schema=s["parameters"])
            for s in env.tool_schemas()
        ]
        self.bundle, self.env = bundle, env
        if self.state_file is not None:
            self.state_file.start(env.journal_base())

    def loaded_env(self) -> TaskEnvironment:
        if self.env is None:
            raise RuntimeError("no task is loaded on this server yet (POST /control/load)")
        return self.env

    async def call_tool(self, name: str, args: Any) -> mcp_types.CallToolResult:
        """Run one call, stamped with the media time the harness last set (never the caller's).

        A call the server itself failed on (``server_fault``: a bug in our handler) is logged and
        published like any other, then answered with a JSON-RPC internal error instead of a tool
        result: it is not a tool error the caller could be scored on.
        """
        env = self.loaded_env()
        async with self._lock:
            record = env.call_tool(name, args, self.media_time_ms)
            await self.persist()
            record_json = record.model_dump(mode="json")
            self.calls.publish(record_json)
        if record.server_fault is not None:
            raise MCPError(mcp_types.INTERNAL_ERROR, record.error or "task server fault", {CALL_INDEX_META_KEY: record.index})
        output = record.output
        text = json.dumps(output, ensure_ascii=False, default=str)
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=text)],
            structured_content=output if isinstance(output, dict) else None,
            is_error=not record.ok,
            _meta={CALL_INDEX_META_KEY: record.index, CALL_RECORD_META_KEY: record_json},
        )

    async def persist(self) -> None:
        """Append what the last operation changed to the state journal (nothing when unchanged)."""
        if self.state_file is not None:
            changes = self.loaded_env().journal_changes()
            if changes is not None:
                self.state_file.append(changes)

    def mcp_server(self) -> Server[Any]:
        async def list_tools(
            ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
        ) -> mcp_types.ListToolsResult:
            return mcp_types.ListToolsResult(tools=self._tools)

        async def call_tool(
            ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
        ) -> mcp_types.CallToolResult:
            return await self.call_tool(params.name, _arguments(params))

        server: Server[Any] = Server("apex-voice-task", on_list_tools=list_tools, on_call_tool=call_tool)
        # The SDK's only default middleware opens an OpenTelemetry span per message; nothing here
        # exports traces, so it is pure per-call overhead.
        server.middleware.clear()
        return server


class _McpGate:
    """ASGI gate in front of ``/mcp``: what the SDK would hold open or queue is answered at once.

    401 without the session's agent token (when the server was given one): the endpoint may be
    reachable by more than the session's own agent (a provider's MCP client on the internet); 503 until a task is loaded (an empty server serves nothing); 405 for ``GET`` (this server is
    stateless and answers in JSON, so it never streams to a client: an open ``GET`` would only hold
    a file descriptor); 503 beyond ``MAX_MCP_IN_FLIGHT`` requests at once. Control routes pass.
    """

    def __init__(self, app: ASGIApp, server: TaskServer, agent_token: str | None = None) -> None:
        self.app = app
        self.server = server
        self.agent_token = agent_token
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/mcp"):
            await self.app(scope, receive, send)
            return
        refusal = self._unauthorized(scope) or self._refusal(scope["method"])
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1

    def _unauthorized(self, scope: Scope) -> JSONResponse | None:
        if self.agent_token is None:
            return None
        header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), None)
        if bearer_matches(header, self.agent_token):
            return None
        return JSONResponse(
            {"error": "missing or wrong bearer token (Authorization: Bearer <agent token>)"},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="apex-voice task"'},
        )

    def _refusal(self, method: str) -> JSONResponse | None:
        if self.server.env is None:
            return JSONResponse({"error": "no task is loaded on this server yet"}, status_code=503)
        if method == "GET":
            return JSONResponse(
                {"error": "this server does not stream: POST JSON-RPC requests to /mcp"},
                status_code=405,
                headers={"Allow": "POST, DELETE"},
            )
        if self.in_flight >= MAX_MCP_IN_FLIGHT:
            return JSONResponse({"error": f"more than {MAX_MCP_IN_FLIGHT} requests at once"}, status_code=503)
        return None


def _meta_dict(params: mcp_types.CallToolRequestParams) -> dict[str, Any]:
    meta = params.meta
    if meta is None:
        return {}
    return dict(meta) if isinstance(meta, dict) else meta.model_dump(by_alias=True)


def _arguments(params: mcp_types.CallToolRequestParams) -> Any:
    """The call's arguments: MCP ``arguments``, else what a bridging harness forwarded in ``_meta``.

    Any media time in ``_meta`` is ignored: only the harness sets it, through the control plane.
    """
    if params.arguments is not None:
        return params.arguments
    meta = _meta_dict(params)
    refused = meta.get(REFUSED_ARGUMENTS_META_KEY)
    if isinstance(refused, dict) and isinstance(refused.get("message"), str):
        logged = refused.get("logged")
        return ArgumentsProblem(
            safe_text(refused["message"])[:_MAX_FORWARDED_CHARS],
            safe_text(logged)[:_MAX_FORWARDED_CHARS] if isinstance(logged, str) else None,
        )
    return meta.get(RAW_ARGUMENTS_META_KEY)


def build_app(server: TaskServer, *, host: str = "127.0.0.1", agent_token: str | None = None) -> Starlette:
    """The agent's ASGI app: ``/mcp`` only (``/control/...`` is a 404 here, see :func:`build_control_app`).

    With ``agent_token`` every ``/mcp`` request needs ``Authorization: Bearer <agent_token>`` (else 401).
    """
    if host in ("127.0.0.1", "localhost", "::1"):
        security = None  # the SDK's DNS-rebinding protection for loopback binds
    else:
        # Inside the sandbox the harness reaches us by container address; the network itself is
        # internal, and the control plane is not on this listener at all.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.mcp_server().streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        host=host,
        transport_security=security,
        max_request_body_size=MAX_REQUEST_BODY,
    )
    app.add_middleware(_McpGate, server=server, agent_token=agent_token)
    return app


def build_control_app(server: TaskServer, *, token: str) -> Starlette:
    """The harness's ASGI app: ``/control/...`` only, served on its own listener (a unix socket in
    the session's private directory), so no agent that can reach ``/mcp`` can route to it."""
    return Starlette(routes=control_routes(server, token))
