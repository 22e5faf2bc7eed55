"""The local backend: a real server subprocess, and teardown that always happens."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from harness.session.mcp_environment import McpEnvironment
from harness.tasks.loader import load_task
from sandbox.backend import SandboxUnavailableError, get_backend
from sandbox.control_client import ControlClient
from sandbox.errors import ControlRequestError
from sandbox.local import LocalBackend


@pytest.fixture
def public_dir(toy_form: Path, tmp_path: Path) -> Path:
    target = tmp_path / "public"
    load_task(toy_form).public_bundle().write(target)
    return target


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_start_serves_the_task_and_teardown_removes_process_and_files(public_dir: Path):
    async with LocalBackend().start(public_dir, "run-a", task_id="toy_form_001") as sandbox:
        pid = sandbox.metadata["pid"]
        health = await sandbox.control.health()
        async with McpEnvironment(sandbox) as env:
            tools = await env.list_tools()
        private_dir = Path(sandbox.metadata["private_dir"])
        assert private_dir.stat().st_mode & 0o077 == 0
        assert (private_dir / "token").stat().st_mode & 0o777 == 0o600
    assert health == {"ok": True, "task_id": "toy_form_001"}
    assert [t["name"] for t in tools] == ["update_expense", "request_approval", "submit_expense"]
    await asyncio.sleep(0)  # the reaped child is gone once wait() returned
    assert not _alive(pid)
    assert not private_dir.exists()


async def test_teardown_happens_on_an_exception_inside_the_block(public_dir: Path):
    with pytest.raises(RuntimeError, match="boom"):
        async with LocalBackend().start(public_dir, "run-b", task_id="toy_form_001") as sandbox:
            pid = sandbox.metadata["pid"]
            raise RuntimeError("boom")
    assert not _alive(pid)


async def test_cancelled_session_leaves_no_process(public_dir: Path):
    started = asyncio.Event()
    pids: list[int] = []

    async def session() -> None:
        async with LocalBackend().start(public_dir, "run-c", task_id="toy_form_001") as sandbox:
            pids.append(sandbox.metadata["pid"])
            started.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(session())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(pids[0])


async def test_killed_server_is_an_infra_error_and_the_persisted_state_is_recovered(public_dir: Path):
    async with LocalBackend().start(public_dir, "run-d", task_id="toy_form_001") as sandbox:
        async with McpEnvironment(sandbox) as env:
            await env.list_tools()
            record = await env.call_tool("update_expense", {"fields": {"employee_id": "E1042"}}, 2000)
            os.kill(sandbox.metadata["pid"], signal.SIGKILL)
            await asyncio.sleep(0.2)
            with pytest.raises(SandboxUnavailableError):
                await env.call_tool("update_expense", {"fields": {"cost_center": "CC-330"}}, 4000)
            snapshot = await env.snapshot()
    assert record.ok
    assert env.snapshot_recovered
    assert snapshot.artifacts["expense_1"].fields["employee_id"] == "E1042"
    assert [c.name for c in snapshot.call_log] == ["update_expense"]


async def test_server_that_cannot_start_fails_fast_with_its_error(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SandboxUnavailableError, match="exited while starting"):
        async with LocalBackend(ready_timeout_s=60).start(tmp_path / "empty", "run-e", task_id="broken"):
            pass


async def test_control_client_errors_name_the_cause(public_dir: Path):
    async with LocalBackend().start(public_dir, "run-f", task_id="toy_form_001") as sandbox:
        wrong = ControlClient(sandbox.control.base_url, "not-the-token")
        try:
            with pytest.raises(ControlRequestError) as refused:
                await wrong.snapshot()
        finally:
            await wrong.aclose()
        with pytest.raises(ControlRequestError) as missing_call:
            await sandbox.control.call(99)
        address = sandbox.control.base_url
    assert refused.value.status == 401
    assert missing_call.value.status == 404 and "99" in str(missing_call.value)
    gone = ControlClient(address, "token")
    try:
        with pytest.raises(SandboxUnavailableError, match="/control/health"):
            await gone.health()
    finally:
        await gone.aclose()


async def test_follow_streams_call_records_as_they_happen(public_dir: Path):
    async with LocalBackend().start(public_dir, "run-g", task_id="toy_form_001") as sandbox:
        async with McpEnvironment(sandbox) as env:
            await env.list_tools()
            await env.call_tool("update_expense", {"fields": {"employee_id": "E1042"}}, 0)
            stream = sandbox.control.follow(0)
            first = await anext(stream)
            await env.call_tool("update_expense", {"fields": {"cost_center": "CC-330"}}, 2000)
            second = await anext(stream)
            await stream.aclose()
    assert (first["index"], first["mutations"]) == (0, ["expense_1.employee_id"])
    assert (second["index"], second["media_time_ms"]) == (1, 2000)


def test_registry_names_and_refuses_unknown_backends():
    assert get_backend("local").name == "local"
    with pytest.raises(ValueError, match="unknown sandbox backend 'nope'"):
        get_backend("nope")
