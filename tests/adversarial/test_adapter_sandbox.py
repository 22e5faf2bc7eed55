"""A hosted adapter sees nothing of the harness, and ends whole (docs/security.md).

Through the real CLI (``run --model tests.adversarial.isolation_adapters:Class``): under
``--sandbox local`` the adapter's host runs in the bubblewrap sandbox (:mod:`sandbox.adapter_jail`),
under ``--sandbox docker`` in the adapter-host container. The :class:`Prober` looks everywhere
(``/proc/<pid>/*`` and its parent's memory, a walk of ``/`` for task answers, tokens and sockets,
connecting to every socket and loopback port it can list, importing the harness to load the task)
and says what it found: hosted, nothing, and it fails; in the harness's process (``--trust-adapter``)
the same code finds the task and passes. A host whose ``close()`` never returns, deaf to SIGTERM,
with two children deaf to it too (one a daemon in its own session), leaves no process behind.
The CLI's probe of the adapter, before the campaign, runs where its sessions will: in the OS sandbox,
or, under ``--sandbox docker`` where none can be made, in the adapter-host container; never on the host.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from sandbox import adapter_jail
from tests.conftest import DEMO_DATA

from . import isolation_adapters
from .isolation_adapters import CANARY

pytestmark = pytest.mark.slow

TASK = "demo_benefits_enrollment_001"
ADAPTERS = "tests.adversarial.isolation_adapters"
NO_USERNS = "bwrap could not make the sandbox (no userns)"
NOTHING = {"canary": [], "task_files": [], "secrets": [], "sockets": [], "connected": [], "harness_modules": []}


@pytest.fixture
def needs_jail():
    problem = adapter_jail.jail_problem()
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must be able to sandbox hosted adapters: {problem}")
        pytest.skip(problem)


def _run(out: Path, model: str, *extra: str):
    args = ["run", "--model", model, "--data", str(DEMO_DATA), "--only", TASK, "--repeats", "1", "--out", str(out),
            *extra]
    return CliRunner().invoke(app, args)


def _record(out: Path) -> dict:
    return json.loads((out / TASK / "rep0" / "result.json").read_text())


def _agent_words(out: Path) -> str:
    events = next((out / TASK / "rep0").rglob("events.jsonl")).read_text().splitlines()
    return "".join(e["payload"]["text"] for e in map(json.loads, events) if e["type"] == "AGENT_TRANSCRIPT_PARTIAL")


def _findings(out: Path) -> dict[str, list[str]]:
    words = _agent_words(out)
    assert words.startswith("probe "), words
    return json.loads(words.removeprefix("probe "))


@pytest.fixture
def planted(monkeypatch):
    """The harness holds a canary in its environment (hence in its memory), as it holds keys."""
    monkeypatch.setenv("APEXVOICE_PROBE_SECRET", CANARY.decode())


@pytest.mark.usefixtures("needs_jail", "planted")
def test_a_sandboxed_prober_finds_nothing_and_fails_while_trusted_it_finds_the_task_and_passes(tmp_path):
    hosted = _run(tmp_path / "hosted", f"{ADAPTERS}:Prober", "--sandbox", "local")
    assert hosted.exit_code == 0, hosted.output
    record = _record(tmp_path / "hosted")
    assert record["agent_isolation"] == "process" and record["sandbox"]["agent_process"]["jail"] == "bwrap"
    assert record["error"] is None and record["pts"] == 0 and record["privileged"] is False
    found = _findings(tmp_path / "hosted")
    assert {k: v for k, v in found.items() if k != "proc_cwd"} == NOTHING, found
    assert set(found["proc_cwd"]) <= {adapter_jail.JAIL_HOME}, found  # its own processes' cwd, and none else

    trusted = _run(tmp_path / "trusted", f"{ADAPTERS}:Prober", "--sandbox", "local", "--trust-adapter")
    assert trusted.exit_code == 0, trusted.output
    record = _record(tmp_path / "trusted")
    assert record["agent_isolation"] == "in-process" and record["privileged"] is False
    assert record["pts"] == 1  # the same probe, unsandboxed, finds the task's policy and passes


def test_without_a_sandbox_run_refuses_a_hosted_adapter_and_names_both_ways_forward(tmp_path, monkeypatch):
    monkeypatch.setattr("harness.cli.campaign_request.jail_problem", lambda: NO_USERNS)
    result = _run(tmp_path, f"{ADAPTERS}:BridgeCaller", "--sandbox", "local")
    assert result.exit_code == 2
    assert "cannot be sandboxed on this machine: bwrap could not make the sandbox (no userns)" in result.output
    assert "--sandbox docker" in result.output and "--trust-adapter" in result.output
    assert not (tmp_path / TASK).exists()


def test_the_sandbox_is_missing_where_bwrap_is(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert "bubblewrap (bwrap) is not installed" in (adapter_jail.jail_problem.__wrapped__() or "")


@pytest.mark.usefixtures("needs_jail")
def test_a_forking_host_deaf_to_sigterm_with_a_close_that_never_returns_leaves_no_process(tmp_path, monkeypatch):
    marker = f"apexvoice-orphan-{uuid.uuid4().hex}"
    monkeypatch.setenv("APEXVOICE_MARKER", marker)
    result = _run(tmp_path, f"{ADAPTERS}:ForkingDeafCloser", "--sandbox", "local", "--adapter-env", "APEXVOICE_MARKER")
    assert result.exit_code == 0, result.output
    assert _record(tmp_path)["error"] is None
    assert "forked 2" in _agent_words(tmp_path)  # they were started
    assert _alive(marker) == []


def _alive(marker: str) -> list[str]:
    """Processes whose command line carries ``marker`` (a zombie's is empty: it is dead)."""
    alive = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                alive.append(entry.name)
        except OSError:
            continue  # gone while we looked
    return alive


#: A harness in miniature: hosts the forking adapter, lets it fork, hangs up (its close() then
#: blocks its host for good) and waits to be killed.
_HARNESS = """
import asyncio, json, os
from websockets.asyncio.client import connect
from harness.agents.adapter_process import start_adapter_process

async def main():
    async with start_adapter_process("tests.adversarial.isolation_adapters:ForkingDeafCloser",
                                     env={"APEXVOICE_MARKER": os.environ["APEXVOICE_MARKER"]}) as host:
        async with connect(host.url) as ws:
            await ws.recv()
            tools = [{"type": "function", "name": "get_enrollment_window", "parameters": {"type": "object"}}]
            await ws.send(json.dumps({"type": "session.update", "session": {"type": "realtime", "tools": tools}}))
            while json.loads(await ws.recv())["type"] != "session.updated":
                pass
        print("forked and hung up", flush=True)
        await asyncio.sleep(3600)

asyncio.run(main())
"""


@pytest.mark.usefixtures("needs_jail")
def test_a_sigkilled_harness_takes_a_stuck_host_and_everything_it_started_with_it():
    marker = f"apexvoice-orphan-{uuid.uuid4().hex}"
    harness = subprocess.Popen([sys.executable, "-c", _HARNESS], stdout=subprocess.PIPE, text=True, env={
        **os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "APEXVOICE_MARKER": marker})
    try:
        assert harness.stdout is not None and harness.stdout.readline() == "forked and hung up\n"
        assert len(_alive(marker)) == 2  # the children run, their host is stuck in close()
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    deadline = time.monotonic() + 30  # the kernel delivers the deaths: wait for them, a bounded while
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive(marker) == []


@pytest.mark.docker
@pytest.mark.usefixtures("planted")
def test_a_prober_in_the_adapter_host_container_finds_nothing_and_fails(docker_engine, tmp_path):
    result = _run(tmp_path, f"{ADAPTERS}:Prober", "--sandbox", "docker")
    assert result.exit_code == 0, result.output
    record = _record(tmp_path)
    assert record["agent_isolation"] == "container" and record["error"] is None and record["pts"] == 0
    found = _findings(tmp_path)
    assert {k: v for k, v in found.items() if k != "proc_cwd"} == NOTHING, found


@pytest.mark.usefixtures("needs_jail")
def test_the_adapter_is_probed_in_the_sandbox():
    from harness.agents.adapter_process import AdapterLoadError, HostedDescription, probe_adapter

    described = probe_adapter(f"{ADAPTERS}:BridgeCaller")
    assert described == HostedDescription(f"{ADAPTERS}:BridgeCaller", "bridge-caller", ("bridge",))
    with pytest.raises(AdapterLoadError, match="has no attribute 'Missing'"):
        probe_adapter(f"{ADAPTERS}:Missing")


def test_under_docker_without_the_os_sandbox_the_probe_runs_in_the_container_and_no_host_process(tmp_path, monkeypatch):
    from harness.agents.adapter_process import AdapterLoadError

    monkeypatch.setattr("harness.cli.campaign_request.jail_problem", lambda: NO_USERNS)
    probed = []

    def in_container(target, *, task_dirs, environment):
        probed.append((target, [d.name for d in task_dirs], environment))
        raise AdapterLoadError("stopped in its container")

    def no_host_process(*args, **kwargs):
        raise AssertionError(f"a process was started on the host: {args}")

    monkeypatch.setattr("harness.cli.campaign_request.probe_hosted_in_container", in_container)
    monkeypatch.setattr(subprocess, "run", no_host_process)
    monkeypatch.setattr(subprocess, "Popen", no_host_process)
    monkeypatch.setenv("APEXVOICE_MARKER", "passed")
    result = _run(tmp_path, f"{ADAPTERS}:BridgeCaller", "--sandbox", "docker", "--adapter-env", "APEXVOICE_MARKER")
    assert result.exit_code == 2, result.output
    assert "cannot be hosted: stopped in its container" in result.output
    assert probed == [(f"{ADAPTERS}:BridgeCaller", [TASK], {"APEXVOICE_MARKER": "passed"})]


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_the_probe_refuses_an_adapter_whose_package_holds_a_task_of_the_campaign(tmp_path, monkeypatch, request,
                                                                                 sandbox):
    if sandbox == "local":
        request.getfixturevalue("needs_jail")
    else:  # refused before any container: no engine needed
        monkeypatch.setattr("harness.cli.campaign_request.jail_problem", lambda: NO_USERNS)
    package = tmp_path / "taskful_adapter"
    shutil.copytree(DEMO_DATA / "tasks" / TASK, package / "tasks" / TASK)
    (package / "__init__.py").write_text(f"from {ADAPTERS} import BridgeCaller\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(app, ["run", "--model", "taskful_adapter:BridgeCaller", "--data", str(package / "tasks"),
                                      "--repeats", "1", "--out", str(tmp_path / "out"), "--sandbox", sandbox])
    assert result.exit_code == 2, result.output
    assert f"holds task {TASK}" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.docker
def test_under_docker_without_the_os_sandbox_the_probe_sees_nothing_of_the_host_and_writes_nothing(
    docker_engine, tmp_path, monkeypatch
):
    """The adapter refuses to load where it can read a file of the host (``saw the host: <path>``):
    probed in a bare process on the host it would; in the adapter-host container it loads, and its
    write into its own package directory (mounted read-only) leaves nothing on the host."""
    monkeypatch.setattr("harness.cli.campaign_request.jail_problem", lambda: NO_USERNS)
    secret = tmp_path / "host-secret"
    secret.write_text("only the host has this\n")
    gold = DEMO_DATA / "tasks" / TASK / "grading" / "gold.yaml"
    assert gold.is_file()
    monkeypatch.setenv("APEXVOICE_HOST_PATHS", os.pathsep.join([str(secret), str(gold)]))
    mark = f"written-by-{uuid.uuid4().hex}"
    monkeypatch.setenv("APEXVOICE_WRITE_MARK", mark)
    written = Path(isolation_adapters.__file__).parent / mark
    try:
        result = _run(tmp_path / "out", "tests.adversarial.host_peeker:HostPeeker", "--sandbox", "docker",
                      "--adapter-env", "APEXVOICE_HOST_PATHS", "--adapter-env", "APEXVOICE_WRITE_MARK")
        assert "saw the host" not in result.output
        assert result.exit_code == 0, result.output
        assert not written.exists()
    finally:
        written.unlink(missing_ok=True)
    record = _record(tmp_path / "out")
    assert record["agent_isolation"] == "container" and record["error"] is None
    assert "The enrollment window is open." in _agent_words(tmp_path / "out")  # loaded in its session's container
    assert docker_engine.containers.list(all=True, filters={"name": "apexvoice-agent-run-"}) == []  # the probe's: removed


@pytest.mark.docker
def test_a_probe_whose_image_is_missing_says_to_build_it(docker_engine):
    from sandbox.agent_container import run_to_completion
    from sandbox.agent_container_config import AgentContainerConfig
    from sandbox.errors import AgentImageError

    with pytest.raises(AgentImageError, match="run `apex-voice images build`"):
        run_to_completion(AgentContainerConfig(image=f"apex-voice/missing-{uuid.uuid4().hex[:8]}:latest"), timeout_s=60,
                          client=docker_engine)
