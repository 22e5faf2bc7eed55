"""Faults of the sandbox container against the real engine: blame stays right, nothing is lost.

A paused container is an infrastructure failure (retried), never the model's; a full state disk
(a tiny ``/state`` tmpfs) costs only the fallback copy: calls and the control snapshot go on.
Skipped without an engine (failing instead under CI=true).
"""

from __future__ import annotations

import asyncio

import pytest

from harness.session.mcp_environment import McpEnvironment
from sandbox.docker_backend import DockerBackend, DockerSandboxConfig
from sandbox.errors import SandboxUnavailableError

pytestmark = pytest.mark.docker


async def test_a_paused_container_is_an_infra_error(docker_engine, toy_public_dir):
    backend = DockerBackend(DockerSandboxConfig(pool_size=0))
    async with backend.start(toy_public_dir, "t-pause", task_id="toy_form_001") as sandbox:
        container = docker_engine.containers.get(sandbox.metadata["container_id"])
        async with McpEnvironment(sandbox, call_timeout_s=3) as env:
            first = await env.call_tool("update_expense", {"fields": {"employee_id": "E1"}}, 1000)
            await asyncio.to_thread(container.pause)
            with pytest.raises(SandboxUnavailableError):
                await env.call_tool("update_expense", {"fields": {"employee_id": "E2"}}, 2000)
            with pytest.raises(SandboxUnavailableError):
                await env.snapshot()
    await backend.aclose()
    assert first.ok
    assert not docker_engine.containers.list(all=True, filters={"label": "apexvoice.run=t-pause"})


async def test_a_full_state_disk_costs_only_the_fallback_copy(docker_engine, toy_public_dir):
    backend = DockerBackend(DockerSandboxConfig(state_size="64k", pool_size=0))
    padding = "x" * 30_000
    async with backend.start(toy_public_dir, "t-full", task_id="toy_form_001") as sandbox:
        container = docker_engine.containers.get(sandbox.metadata["container_id"])
        async with McpEnvironment(sandbox) as env:
            records = [
                await env.call_tool("update_expense", {"fields": {"employee_id": f"E{i}"}, "padding": padding}, i)
                for i in range(6)
            ]
            snapshot = await env.snapshot()
        logs = await asyncio.to_thread(lambda: container.logs().decode(errors="replace"))
    await backend.aclose()
    assert all(record.ok for record in records)
    assert len(snapshot.call_log) == 6 and snapshot.artifacts["expense_1"].fields["employee_id"] == "E5"
    assert logs.count("persisting state") == 1 and "No space left on device" in logs
