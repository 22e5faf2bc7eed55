"""The agent token on ``/mcp``: per session, required, compared in constant time; sent by every client.

Both sandbox backends generate one per session and the server refuses ``/mcp`` requests without it
(401); a native agent's endpoint (``McpEndpoint``) sends it (the harness's bridge calls tools on
the control plane instead, which needs the control token). The control token is not an agent token, and the agent token opens no control route.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.campaign.sandboxed_cell import native_endpoint
from harness.session.mcp_environment import McpEnvironment
from harness.tasks.loader import load_task
from sandbox.backend import SandboxBackend, SandboxEnvironment
from sandbox.control_client import ControlClient
from sandbox.errors import ControlRequestError
from sandbox.local import LocalBackend
from tests.conftest import require_docker

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}
_MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def public_dir(toy_form: Path, tmp_path: Path) -> Path:
    target = tmp_path / "public"
    load_task(toy_form).public_bundle().write(target)
    return target


def _control_token(sandbox: SandboxEnvironment) -> str:
    return (Path(sandbox.metadata["private_dir"]) / "token").read_text(encoding="utf-8")


async def _statuses(sandbox: SandboxEnvironment) -> dict[str, int]:
    """The ``/mcp`` status for no token, a wrong one, the control token and the agent token."""
    offered = {
        "none": {},
        "wrong": {"Authorization": "Bearer not-the-token"},
        "wrong scheme": {"Authorization": f"Basic {sandbox.agent_token}"},
        "control token": {"Authorization": f"Bearer {_control_token(sandbox)}"},
        "agent token": sandbox.mcp_headers(),
    }
    async with httpx.AsyncClient(trust_env=False, timeout=30) as http:
        return {
            name: (await http.post(sandbox.mcp_url, json=_INITIALIZE, headers={**_MCP_HEADERS, **headers})).status_code
            for name, headers in offered.items()
        }


async def _check_backend(backend: SandboxBackend, public_dir: Path) -> None:
    async with backend.start(public_dir, "t-agent-token", task_id="toy_form_001") as sandbox:
        assert sandbox.agent_token and sandbox.agent_token != _control_token(sandbox)
        statuses = await _statuses(sandbox)
        async with McpEnvironment(sandbox) as env:  # the bridge: on the control plane, with its token
            tools = await env.list_tools()
            record = await env.call_tool("update_expense", {"expense_id": "expense_1", "amount": 12}, 1000)
        agent_on_control = ControlClient("", sandbox.agent_token, uds=sandbox.control.uds)
        try:
            with pytest.raises(ControlRequestError) as refused:
                await agent_on_control.snapshot()
        finally:
            await agent_on_control.aclose()
        private_dir = Path(sandbox.metadata["private_dir"])
        token_file = private_dir / "agent-token"
        assert token_file.read_text(encoding="utf-8") == sandbox.agent_token
    assert statuses == {"none": 401, "wrong": 401, "wrong scheme": 401, "control token": 401, "agent token": 200}
    assert [t["name"] for t in tools] == ["update_expense", "request_approval", "submit_expense"]
    assert record.index == 0
    assert refused.value.status == 401
    assert not private_dir.exists()


@pytest.mark.parametrize("mcp_clients", [True, False], ids=["mcp-preloaded", "mcp-on-first-use"])
async def test_local_backend_requires_the_agent_token_on_mcp(public_dir: Path, mcp_clients: bool):
    backend = LocalBackend()
    backend.expects_mcp_clients = mcp_clients
    try:
        await _check_backend(backend, public_dir)
    finally:
        await backend.aclose()


async def test_the_local_agent_token_file_is_private(public_dir: Path):
    async with LocalBackend().start(public_dir, "t-agent-token-mode", task_id="toy_form_001") as sandbox:
        mode = (Path(sandbox.metadata["private_dir"]) / "agent-token").stat().st_mode & 0o777
    assert mode == 0o600


@pytest.mark.docker
async def test_docker_backend_requires_the_agent_token_on_mcp(public_dir: Path):
    require_docker()
    from sandbox.docker_backend import DockerBackend
    from sandbox.image_build import build_images

    build_images(["mcp-server"], report=lambda line: None)
    backend = DockerBackend()
    try:
        await _check_backend(backend, public_dir)
    finally:
        await backend.aclose()


async def test_a_native_agent_endpoint_carries_the_token_and_an_sdk_client_gets_through(public_dir: Path):
    async with LocalBackend().start(public_dir, "t-agent-token-native", task_id="toy_form_001") as sandbox:
        endpoint = native_endpoint(sandbox)
        async with (
            httpx2.AsyncClient(headers=endpoint.headers) as http,
            Client(streamable_http_client(endpoint.url, http_client=http)) as client,
        ):
            listing = await client.list_tools()
    assert endpoint.url == sandbox.mcp_url
    assert endpoint.headers == {"Authorization": f"Bearer {sandbox.agent_token}"}
    assert [t.name for t in listing.tools] == ["update_expense", "request_approval", "submit_expense"]
