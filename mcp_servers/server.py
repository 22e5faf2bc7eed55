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
from collections.abc import Callable

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .bearer import bearer_matches
from .bundle_upload import TaskAlreadyLoadedError
from .control_api import control_routes
from .task_server import CALL_INDEX_META_KEY, CALL_RECORD_META_KEY, MAX_REQUEST_BODY, TaskServer

__all__ = [
    "CALL_INDEX_META_KEY",
    "CALL_RECORD_META_KEY",
    "MAX_REQUEST_BODY",
    "TaskAlreadyLoadedError",
    "TaskServer",
    "build_app",
    "build_control_app",
]

#: ``/mcp`` requests served at once; more answer 503 at once instead of queueing (a flood's limit).
MAX_MCP_IN_FLIGHT = 32


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


class _BuiltOnFirstRequest:
    """An ASGI app built on the first request that reaches it (the MCP SDK is imported then).

    Its lifespan (the SDK's session manager, an anyio task group that must be entered and left in
    one task) runs in a task of its own from that first request until this app's lifespan ends.
    """

    def __init__(self, build: Callable[[], Starlette]) -> None:
        self._build = build
        self._app: Starlette | None = None
        self._building = asyncio.Lock()
        self._stop = asyncio.Event()
        self._running: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        app = self._app or await self._start()
        await app(scope, receive, send)

    async def _start(self) -> Starlette:
        async with self._building:
            if self._app is None:
                app = self._build()
                started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._running = asyncio.create_task(self._run(app, started))
                await started
                self._app = app
            return self._app

    async def _run(self, app: Starlette, started: asyncio.Future[None]) -> None:
        try:
            async with app.router.lifespan_context(app):
                started.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not started.done():
                started.set_exception(exc)
                return
            raise

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self._stop.set()
                if self._running is not None:
                    await self._running
                await send({"type": "lifespan.shutdown.complete"})
                return


def build_app(
    server: TaskServer, *, host: str = "127.0.0.1", agent_token: str | None = None, lazy: bool = False
) -> ASGIApp:
    """The agent's ASGI app: ``/mcp`` only (``/control/...`` is a 404 here, see :func:`build_control_app`).

    With ``agent_token`` every ``/mcp`` request needs ``Authorization: Bearer <agent_token>`` (else 401).
    ``lazy`` builds the SDK's app, and imports the SDK, on the first ``/mcp`` request that passes
    the gate: for a server whose tools only the harness calls (through the control plane), which
    then never pays the import. The gate itself answers from the start either way.
    """

    def sdk_app() -> Starlette:
        from .mcp_app import build_mcp_app

        return build_mcp_app(server, host=host)

    return _McpGate(_BuiltOnFirstRequest(sdk_app) if lazy else sdk_app(), server, agent_token=agent_token)


def build_control_app(server: TaskServer, *, token: str) -> Starlette:
    """The harness's ASGI app: ``/control/...`` only, served on its own listener (a unix socket in
    the session's private directory), so no agent that can reach ``/mcp`` can route to it."""
    return Starlette(routes=control_routes(server, token))
