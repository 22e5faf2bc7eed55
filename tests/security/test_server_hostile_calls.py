"""Hostile tool calls from the agent under test, through the real MCP client and server.

Whatever the agent sends (a lone surrogate, NaN, deep or huge arguments, a hostile tool name) is
data: the call is refused as a tool error the model sees, logged in the server's call log, and the
harness's MCP client keeps working. Media time is the harness's alone: a caller's ``_meta`` cannot
stamp a call.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from mcp import Client

from harness.session.mcp_environment import McpEnvironment
from harness.tasks.loader import load_task
from mcp_servers.environment import TaskEnvironment
from mcp_servers.server import TaskServer
from tests.served_server import TOKEN, served_sandbox, serving

_deep: list = []
for _ in range(200):
    _deep = [_deep]

HOSTILE_CALLS = [
    pytest.param("update_expense", {"fields": {"employee_id": "\ud800"}}, "not JSON", id="surrogate-in-value"),
    pytest.param("update_expense", {"fi\udfffelds": {}}, "not JSON", id="surrogate-in-key"),
    pytest.param("update_\ud800expense", {"fields": {}}, "unknown tool", id="surrogate-in-name"),
    pytest.param("update_expense", {"fields": {"employee_id": float("nan")}}, "not JSON", id="nan"),
    pytest.param("update_expense", {"fields": {"employee_id": float("inf")}}, "not JSON", id="infinity"),
    pytest.param("update_expense", {"fields": _deep}, "nested deeper", id="deep"),
    pytest.param("update_expense", {"fields": {"employee_id": "x" * 2_000_000}}, "bytes of JSON", id="2-MB"),
    pytest.param("x" * 2_000_000, {}, "unknown tool", id="2-MB-name"),
    pytest.param("update_expense", ["\ud800", float("nan")], "not JSON", id="surrogate-in-a-list"),
]


@pytest.fixture
def task_server(toy_form: Path) -> TaskServer:
    return TaskServer(load_task(toy_form).public_bundle())


@pytest.mark.parametrize(("name", "args", "message"), HOSTILE_CALLS)
async def test_hostile_call_is_a_logged_refusal_and_the_client_keeps_working(
    task_server, toy_form, name, args, message
):
    async with served_sandbox(task_server) as sandbox, McpEnvironment(sandbox) as env:
        refused = await env.call_tool(name, args, 1000)
        after = await env.call_tool("update_expense", {"fields": {"employee_id": "E1042"}}, 2000)
        snapshot = await env.snapshot()
    in_process = TaskEnvironment(load_task(toy_form).public_bundle()).call_tool(name, args, 1000)
    assert not refused.ok and message in (refused.error or "")
    assert refused.model_dump(exclude={"wall_time_ns"}) == in_process.model_dump(exclude={"wall_time_ns"})
    assert after.ok and after.index == 1
    assert [(r.ok, r.media_time_ms) for r in snapshot.call_log] == [(False, 1000), (True, 2000)]


async def test_a_callers_meta_media_time_is_ignored(task_server):
    """A commit stamped (by the caller) before the user's revocation is still after it."""
    async with serving(task_server) as base:
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            await http.post(
                "/control/approvals/grant",
                json={"action_type": "submit_expense", "target_id": "expense_1", "media_time_ms": 1000},
            )
            await http.post(
                "/control/approvals/revoke",
                json={"action_type": "submit_expense", "target_id": "expense_1", "media_time_ms": 5000},
            )
            await http.post("/control/media_time", json={"media_time_ms": 6000})
            async with Client(f"{base}/mcp") as client:
                result = await client.call_tool(
                    "submit_expense",
                    {"target_id": "expense_1", "artifact_id": "expense_1"},
                    meta={"apex_voice/media_time_ms": 2000},
                )
                spoofed_clock = await client.call_tool(
                    "update_expense", {"fields": {"employee_id": "E1"}}, meta={"apex_voice/media_time_ms": 10**400}
                )
            snapshot = (await http.get("/control/snapshot")).json()
    assert result.is_error and not spoofed_clock.is_error
    assert [c["media_time_ms"] for c in snapshot["call_log"]] == [6000, 6000]
    assert snapshot["call_log"][0]["auth_decision"] == "POST_REVOCATION_COMMIT"
    assert snapshot["media_time_ms"] == 6000


@pytest.mark.parametrize(
    "body",
    [b'{"media_time_ms": NaN}', b'{"media_time_ms": Infinity}', b'{"media_time_ms": 1e400}',
     b'{"media_time_ms": 1' + b"0" * 400 + b"}", b'{"media_time_ms": -1}', b'{"media_time_ms": 5.5}',
     b'{"media_time_ms": true}'],
)  # fmt: skip
async def test_control_plane_refuses_unusable_media_times_with_a_clear_400(task_server, body):
    async with serving(task_server) as base:
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            response = await http.post("/control/media_time", content=body)
            call = await http.post("/control/call", content=body.replace(b"{", b'{"name": "update_expense", ', 1))
            grant = await http.post(
                "/control/approvals/grant",
                content=body.replace(b"{", b'{"action_type": "a", "target_id": "t", ', 1),
            )
    assert response.status_code == 400
    assert "media_time_ms" in response.json()["error"] or "not JSON" in response.json()["error"]
    assert grant.status_code == 400 and call.status_code == 400
    assert task_server.media_time_ms == 0 and task_server.loaded_env().call_count == 0


async def test_control_plane_refuses_text_that_cannot_be_persisted(task_server):
    async with serving(task_server) as base:
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            response = await http.post(
                "/control/approvals/grant",
                content=b'{"action_type": "\\ud800", "target_id": "t", "media_time_ms": 1}',
            )
            snapshot = await http.get("/control/snapshot")
    assert response.status_code == 400 and "not valid Unicode" in response.json()["error"]
    assert snapshot.status_code == 200 and snapshot.json()["tokens"] == []


@pytest.mark.parametrize("after", ["abc", "-1", "1.5", "٣"])
async def test_stream_with_a_bad_cursor_is_a_400_not_a_500(task_server, after):
    async with serving(task_server) as base:
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            response = await http.get("/control/stream", params={"after": after})
    assert response.status_code == 400 and "after" in response.json()["error"]
