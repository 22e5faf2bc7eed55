"""The local backend: a real server subprocess, and teardown that always happens."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.session.mcp_environment import McpEnvironment
from harness.tasks.loader import load_task
from sandbox.backend import SandboxUnavailableError, get_backend
from sandbox.control_client import ControlClient
from sandbox.errors import ControlRequestError
from sandbox.local import LocalBackend
from tests.waiting import eventually


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
            await eventually(lambda: not _alive(sandbox.metadata["pid"]))
            with pytest.raises(SandboxUnavailableError):
                await env.call_tool("update_expense", {"fields": {"cost_center": "CC-330"}}, 4000)
            snapshot = await env.snapshot()
    assert record.ok
    assert env.snapshot_recovered
    assert snapshot.artifacts["expense_1"].fields["employee_id"] == "E1042"
    assert [c.name for c in snapshot.call_log] == ["update_expense"]


async def test_server_that_cannot_start_fails_fast_with_its_error(public_dir: Path):
    backend = LocalBackend(python="/bin/false", ready_timeout_s=60, pool_size=0)  # exits at once, code 1
    with pytest.raises(SandboxUnavailableError, match="exited while starting: exit code 1"):
        async with backend.start(public_dir, "run-e", task_id="broken"):
            pass


async def test_a_broken_bundle_is_refused_naming_the_file_and_leaves_no_process(public_dir: Path):
    (public_dir / "tools.json").write_text("{not json", encoding="utf-8")
    before = _our_servers()
    with pytest.raises(ControlRequestError, match="tools.json: invalid JSON") as refused:
        async with LocalBackend(pool_size=0).start(public_dir, "run-e2", task_id="broken"):
            pass
    assert refused.value.status == 400
    assert _our_servers() <= before


def _children(parents: set[int]) -> set[int]:
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid in parents:
            found.add(int(proc.name))
    return found


def _our_servers() -> set[int]:
    """Live task-server processes started for this (test) process: its forkservers' children."""
    forkservers = {
        pid for pid in _children({os.getpid()})
        if b"mcp_servers.forkserver" in _cmdline(pid)
    }  # fmt: skip
    return _children(forkservers)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


async def test_a_warm_server_serves_exactly_one_session_then_is_stopped(public_dir: Path):
    backend = LocalBackend(pool_size=1)
    try:
        async with backend.start(public_dir, "run-w", task_id="toy_form_001") as first:
            first_pid, first_warm = first.metadata["pid"], first.metadata["warm"]
        async with backend.start(public_dir, "run-w", task_id="toy_form_001") as second:
            second_pid, second_warm = second.metadata["pid"], second.metadata["warm"]
            with pytest.raises(ControlRequestError, match="already serves task 'toy_form_001'") as reload:
                await second.control.load({})
            async with McpEnvironment(second) as env:
                await env.call_tool("update_expense", {"fields": {"employee_id": "E1"}}, 0)
                snapshot = await env.snapshot()
    finally:
        await backend.aclose()
    assert (first_warm, second_warm) == (False, True)
    assert first_pid != second_pid and not _alive(first_pid) and not _alive(second_pid)
    assert reload.value.status == 409
    assert len(snapshot.call_log) == 1  # the warm server started empty: nothing from session one


async def test_closing_the_backend_stops_every_spare(public_dir: Path):
    before = _our_servers()
    backend = LocalBackend(pool_size=2)
    async with backend.start(public_dir, "run-x", task_id="toy_form_001") as sandbox:
        session_pid = sandbox.metadata["pid"]
    spares = _our_servers() - before
    await backend.aclose()
    assert len(spares) == 2 and session_pid not in spares
    assert _our_servers() <= before


def test_spares_die_with_the_harness_even_when_it_is_killed(public_dir: Path, tmp_path: Path):
    script = (
        "import asyncio, os, sys\n"
        "from pathlib import Path\n"
        "from sandbox.local import LocalBackend\n"
        "async def main():\n"
        "    backend = LocalBackend(pool_size=1)\n"
        "    async with backend.start(Path(sys.argv[1]), 'run-k', task_id='toy_form_001'):\n"
        "        pass\n"
        "    forkservers = [p for p in os.listdir('/proc') if p.isdigit() and _parent(p) == str(os.getpid())]\n"
        "    print(*[p for p in os.listdir('/proc') if p.isdigit() and _parent(p) in forkservers], flush=True)\n"
        "    os.kill(os.getpid(), 9)\n"
        "def _parent(pid):\n"
        "    try: return open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1]\n"
        "    except OSError: return None\n"
        "asyncio.run(main())\n"
    )
    harness = subprocess.run(
        [sys.executable, "-c", script, str(public_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )
    spare_pids = [int(p) for p in harness.stdout.split()]
    assert harness.returncode == -9 and len(spare_pids) == 1, harness.stderr
    deadline = time.monotonic() + 30
    while _alive(spare_pids[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(spare_pids[0])


async def test_control_client_errors_name_the_cause(public_dir: Path):
    async with LocalBackend().start(public_dir, "run-f", task_id="toy_form_001") as sandbox:
        wrong = ControlClient("", "not-the-token", uds=sandbox.control.uds)
        try:
            with pytest.raises(ControlRequestError) as refused:
                await wrong.snapshot()
        finally:
            await wrong.aclose()
        with pytest.raises(ControlRequestError) as missing_call:
            await sandbox.control.call(99)
        socket_path = sandbox.control.uds
    assert socket_path is not None and socket_path.startswith(sandbox.metadata["private_dir"])
    assert refused.value.status == 401
    assert missing_call.value.status == 404 and "99" in str(missing_call.value)
    gone = ControlClient("", "token", uds=socket_path)
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


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def test_a_bridging_backend_leaves_the_mcp_sdk_out_and_still_serves_mcp_on_first_use(public_dir: Path):
    backend = LocalBackend(pool_size=0)
    backend.expects_mcp_clients = False
    try:
        async with backend.start(public_dir, "run-l", task_id="toy_form_001") as sandbox:
            forkserver = (
                Path(f"/proc/{_parent_of(sandbox.metadata['pid'])}/cmdline").read_bytes().split(b"\0")
            )
            async with McpEnvironment(sandbox) as env:
                bridged = await env.call_tool("update_expense", {"fields": {"employee_id": "E1"}}, 1000)
            http = httpx2.AsyncClient(headers=sandbox.mcp_headers())
            async with http, Client(streamable_http_client(sandbox.mcp_url, http_client=http)) as client:
                listed = [tool.name for tool in (await client.list_tools()).tools]  # the SDK is imported now
                native = await client.call_tool("update_expense", {"fields": {"cost_center": "CC-330"}})
            snapshot = await env.snapshot()
    finally:
        await backend.aclose()
    assert forkserver[-2:] == [b"--lazy-mcp", b""]
    assert bridged.ok and not native.is_error
    assert listed == ["update_expense", "request_approval", "submit_expense"]
    # The MCP caller is stamped with the media time the bridged call set: the harness's clock.
    assert [(r.index, r.media_time_ms) for r in snapshot.call_log] == [(0, 1000), (1, 1000)]


def test_registry_names_and_refuses_unknown_backends():
    assert get_backend("local").name == "local"
    with pytest.raises(ValueError, match="unknown sandbox backend 'nope'"):
        get_backend("nope")


@pytest.mark.parametrize(("tool_mode", "expected"), [("bridge", False), ("native", True)])
async def test_only_a_native_campaign_expects_mcp_clients_on_its_sandboxes(tool_mode: str, expected: bool):
    from harness.agents.registry import get_model
    from harness.campaign.sandboxed_cell import SandboxedCellRunner
    from harness.session.mcp_environment import SandboxedEnvironments

    backend = LocalBackend()
    SandboxedCellRunner(get_model("oracle"), backend, {}, speech=lambda bundle: None, tool_mode=tool_mode)
    validating = LocalBackend()
    async with SandboxedEnvironments(validating):
        pass
    assert backend.expects_mcp_clients is expected
    assert validating.expects_mcp_clients is False and LocalBackend().expects_mcp_clients is True
