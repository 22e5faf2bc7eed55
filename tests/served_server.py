"""A task server served by uvicorn on loopback, for tests that speak its real wire.

Production serves ``/mcp`` and ``/control/...`` on separate listeners (``python -m mcp_servers``);
here one loopback port routes ``/control/...`` to the control app and the rest to the MCP app, so a
test reaches both at one base URL. ``serving(..., control=False)`` serves the MCP app alone, exactly
as the agent's listener is.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_servers.server import TaskServer, build_app, build_control_app
from sandbox.backend import SandboxEnvironment
from sandbox.control_client import ControlClient

TOKEN = "test-token-0123456789"


def _beside(mcp_app: ASGIApp, control_app: ASGIApp) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        wanted = control_app if scope["type"] == "http" and scope["path"].startswith("/control/") else mcp_app
        await wanted(scope, receive, send)

    return app


@asynccontextmanager
async def serving(task_server: TaskServer, *, control: bool = True) -> AsyncIterator[str]:
    """The base URL of ``task_server`` served by uvicorn on a free loopback port."""
    import uvicorn

    app = build_app(task_server)
    if control:
        app = _beside(app, build_control_app(task_server, token=TOKEN))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    serving_task = asyncio.create_task(server.serve())
    while not server.started:
        assert not serving_task.done(), "uvicorn stopped while starting"
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving_task


@asynccontextmanager
async def served_sandbox(task_server: TaskServer, state_file: Path | None = None) -> AsyncIterator[SandboxEnvironment]:
    """``task_server`` as the sandbox a session gets (MCP URL, control client, state reader)."""
    async with serving(task_server) as base:
        control = ControlClient(base, TOKEN)

        async def read_state() -> bytes:
            raise AssertionError("the state file is not read in this test")

        try:
            yield SandboxEnvironment(f"{base}/mcp", control, "test", read_state)
        finally:
            await control.aclose()
