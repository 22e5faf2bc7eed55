"""The docker backend against the real engine: isolation, limits, failure handling, no leaks.

Skipped without an engine (failing instead under CI=true, see conftest.require_docker).
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import docker
import httpx
import pytest

from harness.session.mcp_environment import McpEnvironment, SandboxedEnvironments
from harness.tasks.loader import load_task
from harness.validate import validate_task
from sandbox.backend import SandboxUnavailableError
from sandbox.control_client import ControlClient
from sandbox.docker_backend import DockerBackend, DockerSandboxConfig
from sandbox.errors import ControlRequestError
from sandbox.labels import LABEL_RUN
from tests.conftest import require_docker

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def engine():
    require_docker()
    from sandbox.image_build import build_images

    build_images(["mcp-server"], report=lambda line: None)
    return docker.from_env(use_context=False)


@pytest.fixture
def public_dir(toy_form: Path, tmp_path: Path) -> Path:
    target = tmp_path / "public"
    load_task(toy_form).public_bundle().write(target)
    return target


def _exec_python(engine, container_id: str, code: str) -> tuple[int, str]:
    result = engine.containers.get(container_id).exec_run(["python", "-c", code], demux=False)
    return result.exit_code, result.output.decode(errors="replace").strip()


def _leftovers(engine, run_id: str) -> tuple[list, list]:
    selector = {"label": f"{LABEL_RUN}={run_id}"}
    return engine.containers.list(all=True, filters=selector, ignore_removed=True), engine.networks.list(filters=selector)


async def test_container_holds_no_grading_reference_or_user_file(engine, public_dir):
    probe = (
        "import os, json; found = []\n"
        "for root, dirs, files in os.walk('/'):\n"
        "    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ('/proc', '/sys', '/dev')]\n"
        "    found += [os.path.join(root, f) for f in files if f in ('gold.yaml', 'policy.yaml', 'flow.yaml',"
        " 'user_state.yaml', 'observer.yaml', 'events.yaml', 'persona.yaml', 'realization_bank.jsonl')]\n"
        "print(json.dumps({'task_dir': os.path.exists('/task'), 'found': found}))"
    )
    async with DockerBackend().start(public_dir, "t-files", task_id="toy_form_001") as sandbox:
        code, out = await asyncio.to_thread(_exec_python, engine, sandbox.metadata["container_id"], probe)
        harness_code, _ = await asyncio.to_thread(
            _exec_python, engine, sandbox.metadata["container_id"], "import harness"
        )
        health = await sandbox.control.health()
    listing = json.loads(out)
    assert code == 0 and listing["found"] == []
    assert listing["task_dir"] is False  # the public bundle is uploaded, nothing is mounted
    assert health["task_id"] == "toy_form_001"
    assert harness_code != 0  # the harness (and its gold-reading code) is not in the image


async def test_container_cannot_connect_to_the_host(engine, public_dir):
    listener = socket.create_server(("172.17.0.1", 0))
    port = listener.getsockname()[1]
    listener.setblocking(False)
    connect = (
        "import socket, sys\n"
        "for host in sys.argv[1:]:\n"
        "    s = socket.socket(); s.settimeout(2)\n"
        f"    try: s.connect((host, {port})); print(host, 'CONNECTED')\n"
        "    except OSError as e: print(host, 'blocked', e)\n"
    )
    try:
        async with DockerBackend().start(public_dir, "t-net", task_id="toy_form_001") as sandbox:
            gateway = (
                sandbox.metadata["subnet"].split("/")[0].rsplit(".", 1)[0]
                + "."
                + str(int(sandbox.metadata["subnet"].split("/")[0].rsplit(".", 1)[1]) + 1)
            )
            container = engine.containers.get(sandbox.metadata["container_id"])
            result = await asyncio.to_thread(
                container.exec_run, ["python", "-c", connect, "172.17.0.1", gateway, "1.1.1.1"]
            )
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever reached the listener
    finally:
        listener.close()
    output = result.output.decode()
    assert "CONNECTED" not in output, output
    assert output.count("blocked") == 3
    assert sandbox.metadata["host_guard"] == "on"


async def test_the_control_plane_is_not_served_on_the_network_and_needs_the_token(engine, public_dir):
    async with DockerBackend().start(public_dir, "t-token", task_id="toy_form_001") as sandbox:
        network_base = sandbox.mcp_url.rsplit("/mcp", 1)[0]
        async with httpx.AsyncClient(trust_env=False) as http:
            over_network = [
                (await http.get(f"{network_base}/control/{route}", headers=headers)).status_code
                for route in ("health", "snapshot")
                for headers in ({}, {"Authorization": "Bearer nope"})
            ]
        wrong = ControlClient("", "nope", uds=sandbox.control.uds)
        try:
            with pytest.raises(ControlRequestError) as refused:
                await wrong.snapshot()
        finally:
            await wrong.aclose()
        right = await sandbox.control.snapshot()
    assert over_network == [404, 404, 404, 404]  # the MCP listener has no control routes
    assert refused.value.status == 401
    assert "expense_1" in right["artifacts"]


async def test_root_filesystem_is_read_only_and_process_is_not_root(engine, public_dir):
    probe = (
        "import os\n"
        "print(os.getuid())\n"
        "for path in ('/probe', '/task/probe', '/home/apex/probe', '/opt/apex-voice/probe'):\n"
        "    try: open(path, 'w'); print(path, 'WRITABLE')\n"
        "    except OSError as e: print(path, 'refused', e.errno)\n"
        "print(open('/proc/1/status').read().split('CapEff:')[1].split()[0])"
    )
    async with DockerBackend().start(public_dir, "t-ro", task_id="toy_form_001") as sandbox:
        _, out = await asyncio.to_thread(_exec_python, engine, sandbox.metadata["container_id"], probe)
    lines = out.splitlines()
    assert lines[0] == "10001"
    assert "WRITABLE" not in out and out.count("refused") == 4
    assert int(lines[-1], 16) == 0  # the server (pid 1) holds no capability


async def test_fork_bomb_and_memory_hog_are_contained(engine, public_dir):
    fork_bomb = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    while n < 500:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(5); os._exit(0)\n"
        "        n += 1\n"
        "except OSError as e: print('stopped at', n, e.errno)\n"
    )
    hog = "x = bytearray(2 * 1024 ** 3); print('ALLOCATED')"
    async with DockerBackend().start(public_dir, "t-limits", task_id="toy_form_001") as sandbox:
        container_id = sandbox.metadata["container_id"]
        _, forks = await asyncio.to_thread(_exec_python, engine, container_id, fork_bomb)
        hog_code, hog_out = await asyncio.to_thread(_exec_python, engine, container_id, hog)
        health = await sandbox.control.health()
    assert forks.startswith("stopped at"), forks
    assert int(forks.split()[2]) < 64
    assert "ALLOCATED" not in hog_out and hog_code != 0
    assert health["ok"] is True


STOP_SERVER = (
    "import os, signal\n"
    "for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]:\n"
    "    if b'mcp_servers' in open(f'/proc/{pid}/cmdline', 'rb').read():\n"
    "        os.kill(int(pid), signal.SIGSTOP)"
)


async def test_hung_server_is_an_infra_error_and_the_state_is_recovered(engine, public_dir):
    async with DockerBackend().start(public_dir, "t-hang", task_id="toy_form_001") as sandbox:
        async with McpEnvironment(sandbox, call_timeout_s=3) as env:
            await env.list_tools()
            first = await env.call_tool("update_expense", {"fields": {"employee_id": "E1042"}}, 2000)
            code, out = await asyncio.to_thread(_exec_python, engine, sandbox.metadata["container_id"], STOP_SERVER)
            with pytest.raises(SandboxUnavailableError):
                await env.call_tool("update_expense", {"fields": {"cost_center": "CC-330"}}, 4000)
            snapshot = await env.snapshot()  # the control API times out first
    assert code == 0, out
    assert first.ok and env.snapshot_recovered
    assert snapshot.artifacts["expense_1"].fields["employee_id"] == "E1042"
    assert len(snapshot.call_log) == 1


async def test_killed_container_is_an_infra_error_and_its_state_went_with_it(engine, public_dir):
    async with DockerBackend().start(public_dir, "t-kill", task_id="toy_form_001") as sandbox:
        async with McpEnvironment(sandbox, call_timeout_s=5) as env:
            await env.list_tools()
            first = await env.call_tool("update_expense", {"fields": {"employee_id": "E1042"}}, 2000)
            await asyncio.to_thread(engine.containers.get(sandbox.metadata["container_id"]).kill)
            with pytest.raises(SandboxUnavailableError):
                await env.call_tool("update_expense", {"fields": {"cost_center": "CC-330"}}, 4000)
            with pytest.raises(SandboxUnavailableError, match="tmpfs went with it"):
                await env.snapshot()
    assert first.ok and not env.snapshot_recovered


async def test_twenty_sessions_some_cancelled_leave_nothing_behind(engine, public_dir):
    run_id = "t-leaks"
    backend = DockerBackend(DockerSandboxConfig(ready_timeout_s=300))
    parallel = asyncio.Semaphore(5)  # a small CI machine starts ~5 python servers at once in time

    async def session(index: int) -> None:
        async with parallel, backend.start(public_dir, run_id, task_id="toy_form_001") as sandbox:
            async with McpEnvironment(sandbox) as env:
                await env.list_tools()
                await env.call_tool("update_expense", {"fields": {"employee_id": f"E{index}"}}, 0)

    backend_tasks = [asyncio.create_task(session(i)) for i in range(20)]
    await asyncio.sleep(3)
    for task in backend_tasks[::3]:
        task.cancel()  # some while provisioning, some while running
    results = await asyncio.gather(*backend_tasks, return_exceptions=True)
    spares = await asyncio.to_thread(_leftovers, engine, run_id)
    await backend.aclose()
    assert not [r for r in results if isinstance(r, Exception) and not isinstance(r, asyncio.CancelledError)]
    assert len(spares[0]) == len(spares[1]) <= 1  # the warm spare, until the backend is closed
    containers, networks = await asyncio.to_thread(_leftovers, engine, run_id)
    assert (containers, networks) == ([], [])


async def test_a_pooled_container_serves_exactly_one_session(engine, public_dir):
    backend = DockerBackend()
    try:
        async with backend.start(public_dir, "t-pool", task_id="toy_form_001") as first:
            async with McpEnvironment(first) as env:
                await env.call_tool("update_expense", {"fields": {"employee_id": "E1"}}, 0)
            first_id, first_warm = first.metadata["container_id"], first.metadata["warm"]
        first_gone = not await asyncio.to_thread(_exists, engine, first_id)
        async with backend.start(public_dir, "t-pool", task_id="toy_form_001") as second:
            with pytest.raises(ControlRequestError, match="already serves task") as reload:
                await second.control.load({})
            snapshot = await second.control.snapshot()
            second_id, second_warm = second.metadata["container_id"], second.metadata["warm"]
    finally:
        await backend.aclose()
    assert (first_warm, second_warm) == (False, True) and first_id != second_id
    assert first_gone and reload.value.status == 409
    assert snapshot["call_log"] == []  # a fresh server: nothing of the first session
    assert await asyncio.to_thread(_leftovers, engine, "t-pool") == ([], [])


def _exists(engine, container_id: str) -> bool:
    try:
        engine.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


async def test_fixtures_validate_through_the_docker_backend(engine, toy_form, toy_interview):
    backend = DockerBackend()
    try:
        for task_dir in (toy_form, toy_interview):
            async with SandboxedEnvironments(backend, run_id="t-validate") as make_env:
                report = await validate_task(task_dir, make_env=make_env)
            assert report.ok, report.problems
    finally:
        await backend.aclose()
    assert await asyncio.to_thread(_leftovers, engine, "t-validate") == ([], [])
