"""The task MCP server, served by uvicorn on loopback, seen by clients that are not ours.

The SDK's own ``mcp.Client`` lists and calls the tools; plain httpx exercises the control API.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from mcp import Client

from harness.tasks.loader import load_task
from mcp_servers.environment import TaskEnvironment
from mcp_servers.server import CALL_INDEX_META_KEY, CALL_RECORD_META_KEY, TaskServer
from mcp_servers.state_file import fold_journal, journal_lines
from tests.served_server import TOKEN
from tests.served_server import serving as _serving


def _persisted(journal: Path) -> dict:
    return fold_journal(journal_lines(journal.read_bytes()))


@pytest.fixture
async def served(toy_form: Path, tmp_path: Path):
    """(base_url, task_server, state_file) for a live server on a free loopback port."""
    bundle = load_task(toy_form).public_bundle()
    state_file = tmp_path / "state" / "state.jsonl"
    task_server = TaskServer(bundle, state_file=state_file)
    async with _serving(task_server) as base:
        yield base, task_server, state_file


@pytest.fixture
def bundle_files(toy_form: Path, tmp_path: Path) -> dict[str, str]:
    """The toy form's public bundle as the upload ``POST /control/load`` takes."""
    load_task(toy_form).public_bundle().write(tmp_path / "public")
    return {path.name: path.read_text() for path in (tmp_path / "public").iterdir()}


async def test_an_empty_server_serves_nothing_until_its_task_is_loaded_once(bundle_files, tmp_path):
    task_server = TaskServer(state_file=tmp_path / "state.jsonl")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with _serving(task_server) as base, httpx.AsyncClient(base_url=base) as http:
        health_before = (await http.get("/control/health")).json()
        mcp_before = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        snapshot_before = await http.get("/control/snapshot", headers=auth)
        no_token = await http.post("/control/load", json={"files": bundle_files})
        wrong_token = await http.post(
            "/control/load", json={"files": bundle_files}, headers={"Authorization": "Bearer x"}
        )
        loaded = await http.post("/control/load", json={"files": bundle_files}, headers=auth)
        again = await http.post("/control/load", json={"files": bundle_files}, headers=auth)
        async with Client(f"{base}/mcp") as client:
            names = [t.name for t in (await client.list_tools()).tools]
        health_after = (await http.get("/control/health")).json()
    assert health_before == {"ok": True, "task_id": None}
    assert mcp_before.status_code == 503 and snapshot_before.status_code == 409
    assert (no_token.status_code, wrong_token.status_code) == (401, 401)
    assert loaded.status_code == 200 and loaded.json() == {"task_id": "toy_form_001"}
    assert again.status_code == 409 and "already serves task 'toy_form_001'" in again.json()["error"]
    assert names == ["update_expense", "request_approval", "submit_expense"]
    assert health_after == {"ok": True, "task_id": "toy_form_001"}
    assert _persisted(tmp_path / "state.jsonl")["call_log"] == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda files: files.pop("tools.json"), "missing: tools.json"),
        (lambda files: files.update({"../escape.json": "{}"}), "unexpected: ../escape.json"),
        (lambda files: files.update({"tools.json": "[1"}), "uploaded bundle/tools.json: invalid JSON"),
    ],
)
async def test_a_bad_upload_is_refused_naming_the_file_and_the_server_stays_empty(
    bundle_files, change, message
):
    task_server = TaskServer()
    change(bundle_files)
    async with _serving(task_server) as base, httpx.AsyncClient(base_url=base) as http:
        response = await http.post(
            "/control/load", json={"files": bundle_files}, headers={"Authorization": f"Bearer {TOKEN}"}
        )
    assert response.status_code == 400 and message in response.json()["error"]
    assert task_server.env is None


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


async def test_non_object_arguments_on_the_control_plane_are_refused_like_in_process(served, toy_form):
    base, task_server, _ = served
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        response = await http.post(
            "/control/call", json={"name": "update_expense", "arguments": ["E1042"], "media_time_ms": 1500}
        )
    in_process = TaskEnvironment(load_task(toy_form).public_bundle()).call_tool(
        "update_expense", ["E1042"], 1500
    )
    served_record = task_server.env.snapshot().call_log[0]
    assert response.status_code == 200 and response.json() == served_record.model_dump(mode="json")
    assert served_record.args == ["E1042"] and not served_record.ok
    assert served_record.error == in_process.error and served_record.media_time_ms == 1500


async def test_an_mcp_callers_meta_cannot_forward_arguments(served):
    """Only the harness forwards what a model sent instead of an object, and only on the control plane."""
    base, task_server, _ = served
    async with Client(f"{base}/mcp") as client:
        await client.call_tool(
            "update_expense", None, meta={"apex_voice/raw_arguments": {"fields": {"employee_id": "E1"}}}
        )
    (logged,) = task_server.env.snapshot().call_log
    assert logged.args is None and not logged.ok


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}])
@pytest.mark.parametrize(
    ("method", "route"),
    [
        ("GET", "/control/snapshot"),
        ("POST", "/control/approvals/grant"),
        ("GET", "/control/calls/0"),
        ("GET", "/control/tools"),
        ("POST", "/control/call"),
    ],
)
async def test_control_api_refuses_a_missing_or_wrong_token(served, headers, method, route):
    base, _, _ = served
    async with httpx.AsyncClient() as http:
        response = await http.request(method, f"{base}{route}", headers=headers, json={})
    assert response.status_code == 401


async def test_the_control_plane_lists_the_tools_mcp_lists_and_a_call_carries_its_media_time(served):
    base, task_server, _ = served
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        listed = (await http.get("/control/tools")).json()
        bridged = await http.post(
            "/control/call",
            json={
                "name": "update_expense",
                "arguments": {"fields": {"employee_id": "E1"}},
                "media_time_ms": 4200,
            },
        )
        refused = await http.post(
            "/control/call",
            json={
                "name": "update_expense",
                "refused": {"message": "arguments are not JSON", "logged": "<x>"},
                "media_time_ms": 4300,
            },
        )
        async with Client(f"{base}/mcp") as client:
            sdk_listing = await client.list_tools()
            after = await client.call_tool("update_expense", {"fields": {"cost_center": "CC-330"}})
    assert [(t["name"], t["parameters"]) for t in listed] == [
        (t.name, t.input_schema) for t in sdk_listing.tools
    ]
    log = task_server.env.snapshot().call_log
    assert bridged.json() == log[0].model_dump(mode="json") and log[0].ok
    assert refused.json()["ok"] is False and log[1].error == "update_expense: arguments are not JSON"
    assert log[1].args == "<x>"
    # The MCP caller is stamped with the harness's media time, which the bridged calls set.
    assert [r.media_time_ms for r in log] == [4200, 4300, 4300] and after.meta[CALL_INDEX_META_KEY] == 2


async def test_control_routes_are_never_listed_as_tools(served):
    base, _, _ = served
    async with Client(f"{base}/mcp") as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert not any(
        "control" in n or "snapshot" in n or "approv" in n.replace("request_approval", "") for n in names
    )


async def test_snapshot_shape_and_state_file_after_every_call(served):
    base, _, state_file = served
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with Client(f"{base}/mcp") as client:
            await client.list_tools()
            await client.call_tool("update_expense", {"fields": {"employee_id": "E1042"}})
            assert len(_persisted(state_file)["call_log"]) == 1
            await client.call_tool("update_expense", {"fields": {"cost_center": "CC-330"}})
            assert len(_persisted(state_file)["call_log"]) == 2
        snapshot = (await http.get(f"{base}/control/snapshot")).json()
    assert set(snapshot) >= {
        "state",
        "artifacts",
        "versions",
        "call_log",
        "approval_log",
        "search_log",
        "tokens",
    }
    assert snapshot["artifacts"]["expense_1"]["fields"]["cost_center"] == "CC-330"
    assert [v["path"] for v in snapshot["versions"]] == ["employee_id", "cost_center"]
    assert _persisted(state_file) == snapshot
    assert len(state_file.read_bytes().splitlines()) == 3  # the base, then one entry per call


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
            await http.post(f"{base}/control/media_time", json={"media_time_ms": 6000})
            committed = await client.call_tool(
                "submit_expense", {"target_id": "expense_1", "artifact_id": "expense_1"}
            )
        records = [(await http.get(f"{base}/control/calls/{i}")).json() for i in (0, 1)]
    assert premature.is_error and records[0]["auth_decision"] == "PREMATURE_COMMIT"
    assert grant.status_code == 200 and grant.json()["action_type"] == "submit_expense"
    assert not committed.is_error and records[1]["auth_decision"] == "AUTHORIZED"
    assert records[1]["media_time_ms"] == 6000


@pytest.mark.parametrize(("route", "decision"), [("grant", "AUTHORIZED"), ("revoke", "POST_REVOCATION_COMMIT")])
async def test_a_native_call_is_stamped_no_earlier_than_the_last_grant_or_revocation(served, route, decision):
    """Issue 33 break 7: the media time is pushed every 100 ms (here 1,000) while a grant or revocation
    carries its exact time (1,060): a commit the server receives after it is no earlier than it."""
    base, _, _ = served
    scope = {"action_type": "submit_expense", "target_id": "expense_1"}
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with Client(f"{base}/mcp") as client:
            await client.list_tools()
            await http.post(f"{base}/control/media_time", json={"media_time_ms": 1000})
            if route == "revoke":
                await http.post(f"{base}/control/approvals/grant", json={**scope, "media_time_ms": 500})
            answer = await http.post(f"{base}/control/approvals/{route}", json={**scope, "media_time_ms": 1060})
            assert answer.status_code == 200, answer.text
            await client.call_tool("submit_expense", {"target_id": "expense_1", "artifact_id": "expense_1"})
        (record,) = [(await http.get(f"{base}/control/calls/{i}")).json() for i in (0,)]
    assert (record["media_time_ms"], record["auth_decision"]) == (1060, decision)


async def test_a_harness_call_keeps_the_exact_time_it_carries(served):
    base, task_server, _ = served
    task_server.loaded_env().grant_approval("submit_expense", "expense_1", 1060)
    record, _ = await task_server.call_tool("submit_expense", {"target_id": "expense_1", "artifact_id": "expense_1"},
                                            media_time_ms=1000)
    assert (record.media_time_ms, record.auth_decision) == (1000, "PREMATURE_COMMIT")


async def test_control_refuses_a_malformed_body_naming_the_field(served):
    base, _, _ = served
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        response = await http.post(f"{base}/control/approvals/grant", json={"action_type": "submit_expense"})
    assert response.status_code == 400
    assert "target_id" in response.json()["error"]
