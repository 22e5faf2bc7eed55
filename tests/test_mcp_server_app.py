"""The task MCP server, served by uvicorn on loopback, seen by clients that are not ours.

The SDK's own ``mcp.Client`` lists and calls the tools; plain httpx exercises the control API.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
import uvicorn
from mcp import Client

from harness.tasks.loader import load_task
from mcp_servers.environment import TaskEnvironment
from mcp_servers.server import (
    CALL_INDEX_META_KEY,
    CALL_RECORD_META_KEY,
    MEDIA_TIME_META_KEY,
    RAW_ARGUMENTS_META_KEY,
    TaskServer,
    build_app,
)

TOKEN = "test-token-0123456789"


@pytest.fixture
async def served(toy_form: Path, tmp_path: Path):
    """(base_url, task_server, state_file) for a live server on a free loopback port."""
    bundle = load_task(toy_form).public_bundle()
    state_file = tmp_path / "state" / "state.json"
    task_server = TaskServer(bundle, state_file=state_file)
    config = uvicorn.Config(
        build_app(task_server, token=TOKEN), host="127.0.0.1", port=0, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        assert not serving.done(), "uvicorn stopped while starting"
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", task_server, state_file
    finally:
        server.should_exit = True
        await serving


async def test_sdk_client_lists_exactly_the_task_tools_with_their_schemas(served, toy_form):
    base, task_server, _ = served
    async with Client(f"{base}/mcp") as client:
        listing = await client.list_tools()
    expected = {s["name"]: s["parameters"] for s in task_server.env.tool_schemas()}
    assert {t.name: t.input_schema for t in listing.tools} == expected
    assert set(expected) == {"update_expense", "request_approval", "submit_expense"}


async def test_sdk_client_calls_a_tool_and_the_result_carries_its_call_log_record(served):
    base, _, _ = served
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with Client(f"{base}/mcp") as client:
            await client.list_tools()
            result = await client.call_tool("update_expense", {"fields": {"employee_id": "E1042"}})
        assert not result.is_error
        index = result.meta[CALL_INDEX_META_KEY]
        record = (await http.get(f"{base}/control/calls/{index}")).json()
    assert record["name"] == "update_expense" and record["ok"] is True
    assert record["mutations"] == ["expense_1.employee_id"]
    assert json.loads(result.content[0].text) == record["result"]
    assert result.meta[CALL_RECORD_META_KEY] == record


async def test_bad_arguments_are_an_error_result_the_model_can_act_on(served):
    base, _, _ = served
    async with Client(f"{base}/mcp") as client:
        await client.list_tools()
        missing = await client.call_tool("update_expense", {})
        unknown = await client.call_tool("no_such_tool", {})
    assert missing.is_error and "fields" in missing.content[0].text
    assert unknown.is_error and "no_such_tool" in unknown.content[0].text


async def test_non_object_arguments_forwarded_in_meta_are_refused_like_in_process(served, toy_form):
    base, task_server, _ = served
    async with Client(f"{base}/mcp") as client:
        await client.list_tools()
        result = await client.call_tool("update_expense", None, meta={RAW_ARGUMENTS_META_KEY: ["E1042"]})
    in_process = TaskEnvironment(load_task(toy_form).public_bundle()).call_tool("update_expense", ["E1042"], 0)
    served_record = task_server.env.snapshot().call_log[0]
    assert result.is_error
    assert served_record.args == ["E1042"] and not served_record.ok
    assert served_record.error == in_process.error


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}])
@pytest.mark.parametrize(
    ("method", "route"),
    [("GET", "/control/snapshot"), ("POST", "/control/approvals/grant"), ("GET", "/control/calls/0")],
)
async def test_control_api_refuses_a_missing_or_wrong_token(served, headers, method, route):
    base, _, _ = served
    async with httpx.AsyncClient() as http:
        response = await http.request(method, f"{base}{route}", headers=headers, json={})
    assert response.status_code == 401


async def test_control_routes_are_never_listed_as_tools(served):
    base, _, _ = served
    async with Client(f"{base}/mcp") as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert not any("control" in n or "snapshot" in n or "approv" in n.replace("request_approval", "") for n in names)


async def test_snapshot_shape_and_state_file_after_every_call(served):
    base, _, state_file = served
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with Client(f"{base}/mcp") as client:
            await client.list_tools()
            await client.call_tool("update_expense", {"fields": {"employee_id": "E1042"}})
            assert len(json.loads(state_file.read_text())["call_log"]) == 1
            await client.call_tool("update_expense", {"fields": {"cost_center": "CC-330"}})
            assert len(json.loads(state_file.read_text())["call_log"]) == 2
        snapshot = (await http.get(f"{base}/control/snapshot")).json()
    assert set(snapshot) >= {"state", "artifacts", "versions", "call_log", "approval_log", "search_log", "tokens"}
    assert snapshot["artifacts"]["expense_1"]["fields"]["cost_center"] == "CC-330"
    assert [v["path"] for v in snapshot["versions"]] == ["employee_id", "cost_center"]
    assert json.loads(state_file.read_text()) == snapshot


async def test_grant_through_control_authorizes_the_commit(served):
    base, _, _ = served
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with Client(f"{base}/mcp") as client:
            await client.list_tools()
            premature = await client.call_tool(
                "submit_expense", {"target_id": "expense_1", "artifact_id": "expense_1"}
            )
            grant = await http.post(
                f"{base}/control/approvals/grant",
                json={"action_type": "submit_expense", "target_id": "expense_1", "media_time_ms": 4000},
            )
            committed = await client.call_tool(
                "submit_expense",
                {"target_id": "expense_1", "artifact_id": "expense_1"},
                meta={MEDIA_TIME_META_KEY: 6000},
            )
        records = [(await http.get(f"{base}/control/calls/{i}")).json() for i in (0, 1)]
    assert premature.is_error and records[0]["auth_decision"] == "PREMATURE_COMMIT"
    assert grant.status_code == 200 and grant.json()["action_type"] == "submit_expense"
    assert not committed.is_error and records[1]["auth_decision"] == "AUTHORIZED"
    assert records[1]["media_time_ms"] == 6000


async def test_control_refuses_a_malformed_body_naming_the_field(served):
    base, _, _ = served
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        response = await http.post(f"{base}/control/approvals/grant", json={"action_type": "submit_expense"})
    assert response.status_code == 400
    assert "target_id" in response.json()["error"]
