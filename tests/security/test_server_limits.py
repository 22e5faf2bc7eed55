"""A flooding agent meets the server's per-session limits: refusals it sees, never an exhausted server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from harness.session.mcp_environment import McpEnvironment
from harness.tasks.loader import load_task
from mcp_servers import tool_runtime
from mcp_servers.environment import TaskEnvironment
from mcp_servers.server import TaskServer
from mcp_servers.state_file import fold_journal, journal_lines
from tests.served_server import TOKEN, served_sandbox, serving


@pytest.fixture
def form_env(toy_form: Path) -> TaskEnvironment:
    return TaskEnvironment(load_task(toy_form).public_bundle())


def test_calls_beyond_the_log_limit_are_refused_and_counted(form_env, monkeypatch):
    monkeypatch.setattr(tool_runtime, "MAX_LOGGED_CALLS", 5)
    records = [form_env.call_tool("update_expense", {"fields": {"employee_id": f"E{i}"}}, i) for i in range(8)]
    snapshot = form_env.snapshot()
    assert [r.ok for r in records] == [True] * 5 + [False] * 3
    assert "already made 5 tool calls" in records[-1].error and "not run" in records[-1].error
    assert len(snapshot.call_log) == 5 and snapshot.calls_not_logged == 3
    assert snapshot.artifacts["expense_1"].fields["employee_id"] == "E4"  # refused calls did nothing


def test_a_full_call_log_refuses_more_arguments_without_keeping_them(form_env, monkeypatch):
    monkeypatch.setattr(tool_runtime, "MAX_LOG_BYTES", 200_000)
    padding = "x" * 60_000
    records = [form_env.call_tool("update_expense", {"fields": {}, "padding": padding}, i) for i in range(6)]
    refused = [r for r in records if not r.ok]
    assert refused and all("call log is full" in r.error for r in refused)
    assert all(r.args == "<arguments not kept: the session's call log is full>" for r in refused)
    assert sum(r.ok for r in records) == 3


def test_the_state_journal_folds_back_to_the_snapshot(toy_form: Path, tmp_path: Path):
    journal = tmp_path / "state.jsonl"
    server = TaskServer(load_task(toy_form).public_bundle(), state_file=journal)
    env = server.loaded_env()

    async def session() -> None:
        env.call_tool("update_expense", {"fields": {"employee_id": "E1042", "cost_center": "CC-330"}}, 100)
        await server.persist()
        env.call_tool("request_approval", {"target_id": "expense_1"}, 200)
        await server.persist()
        env.grant_approval("submit_expense", "expense_1", 300)
        await server.persist()
        env.call_tool("submit_expense", {"target_id": "expense_1", "artifact_id": "expense_1"}, 400)
        await server.persist()
        env.apply_event("e1", stale_fields=[], world_updates={"policy.limit": 5}, media_time_ms=500)
        await server.persist()
        await server.persist()  # nothing changed: nothing appended

    asyncio.run(session())
    assert fold_journal(journal_lines(journal.read_bytes())) == env.snapshot().model_dump(mode="json")
    assert len(journal.read_bytes().splitlines()) == 6
    torn = journal.read_bytes() + b'{"append": {"call_lo'
    assert fold_journal(journal_lines(torn)) == env.snapshot().model_dump(mode="json")


async def test_unauthenticated_get_floods_do_not_starve_health_or_tool_calls(toy_form: Path):
    task_server = TaskServer(load_task(toy_form).public_bundle())
    async with served_sandbox(task_server) as sandbox, McpEnvironment(sandbox) as env:
        limits = httpx.Limits(max_connections=400)
        async with httpx.AsyncClient(timeout=httpx.Timeout(10.0), limits=limits) as http:
            flood = await asyncio.gather(
                *(http.get(sandbox.mcp_url, headers={"accept": "text/event-stream"}) for _ in range(300))
            )
        health = await asyncio.wait_for(sandbox.control.health(), 5)
        record = await asyncio.wait_for(env.call_tool("update_expense", {"fields": {}}, 0), 5)
    assert {response.status_code for response in flood} == {405}
    assert health["ok"] and record.ok


async def test_requests_beyond_the_in_flight_limit_are_refused_at_once(toy_form: Path, monkeypatch):
    from mcp_servers import server as server_module

    monkeypatch.setattr(server_module, "MAX_MCP_IN_FLIGHT", 0)
    async with serving(TaskServer(load_task(toy_form).public_bundle())) as base:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            response = await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            health = await http.get(f"{base}/control/health")
    assert response.status_code == 503 and "at once" in response.json()["error"]
    assert health.status_code == 200


async def test_the_mcp_listener_does_not_serve_the_control_plane(toy_form: Path):
    async with serving(TaskServer(load_task(toy_form).public_bundle()), control=False) as base:
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            answers = [
                (await http.get("/control/health")).status_code,
                (await http.get("/control/snapshot")).status_code,
                (await http.post("/control/media_time", json={"media_time_ms": 1})).status_code,
            ]
    assert answers == [404, 404, 404]
