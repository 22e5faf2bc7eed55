"""Following the environment by deltas: a mirror kept up to date call by call equals a whole
snapshot, in process and over the control API."""

from __future__ import annotations

import pytest

from harness.session.environment_port import InProcessEnvironment
from harness.session.mcp_environment import McpEnvironment
from harness.tasks.loader import load_task
from mcp_servers.server import TaskServer
from tests.conftest import DEMO_DATA
from tests.served_server import served_sandbox

BENEFITS = DEMO_DATA / "tasks" / "demo_benefits_enrollment_001"

CALLS = [
    ("get_enrollment_window", {}),
    ("update_enrollment", {"fields": {"full_name": "Dana Whitfield"}}),
    ("update_enrollment", {"fields": {"no_such_field": 1}}),
    ("submit_enrollment", {"target_id": "enrollment_1"}),
]


async def _follow(env) -> None:
    mirror = await env.snapshot()
    for name, args in CALLS:
        await env.call_tool(name, args, 100)
        delta = await env.snapshot_since(mirror.cursor())
        assert len(delta.call_log) == 1  # only what is new travels
        mirror.extend(delta)
        assert mirror == await env.snapshot()
    await env.grant_approval("submit", "enrollment_1", 200, "approve")
    await env.apply_event("e1", stale_fields=["enrollment_1.full_name"], world_updates={}, media_time_ms=300)
    mirror.extend(await env.snapshot_since(mirror.cursor()))
    assert mirror == await env.snapshot()


async def test_a_mirror_follows_the_in_process_environment():
    await _follow(InProcessEnvironment(load_task(BENEFITS).public_bundle()))


async def test_a_mirror_follows_a_served_environment_over_the_control_api():
    server = TaskServer(load_task(BENEFITS).public_bundle())
    async with served_sandbox(server) as sandbox, McpEnvironment(sandbox) as env:
        await _follow(env)


async def test_an_unknown_log_in_the_cursor_is_refused():
    env = InProcessEnvironment(load_task(BENEFITS).public_bundle())
    with pytest.raises(ValueError, match="unknown logs"):
        await env.snapshot_since({"secrets": 0})
