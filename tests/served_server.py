"""A task server served by uvicorn on a free loopback port, for tests that speak its real wire."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp_servers.server import TaskServer, build_app
from sandbox.backend import SandboxEnvironment
from sandbox.control_client import ControlClient

TOKEN = "test-token-0123456789"


@asynccontextmanager
async def serving(task_server: TaskServer) -> AsyncIterator[str]:
    """The base URL of ``task_server`` served by uvicorn on a free loopback port."""
    import uvicorn

    config = uvicorn.Config(
        build_app(task_server, token=TOKEN), host="127.0.0.1", port=0, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
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

        async def read_state() -> list:
            raise AssertionError("the state file is not read in this test")

        try:
            yield SandboxEnvironment(f"{base}/mcp", control, "test", read_state)
        finally:
            await control.aclose()
