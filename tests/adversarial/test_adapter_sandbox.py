"""A hosted adapter sees nothing of the harness, and ends whole (docs/security.md).

Through the real CLI (``run --model tests.adversarial.isolation_adapters:Class``): under
``--sandbox local`` the adapter's host runs in the bubblewrap sandbox (:mod:`sandbox.adapter_jail`),
under ``--sandbox docker`` in the adapter-host container. The :class:`Prober` looks everywhere
(``/proc/<pid>/*`` and its parent's memory, a walk of ``/`` for task answers, tokens and sockets,
connecting to every socket and loopback port it can list, importing the harness to load the task)
and says what it found: hosted, nothing, and it fails; in the harness's process (``--trust-adapter``)
the same code finds the task and passes. A host whose ``close()`` never returns, deaf to SIGTERM,
with two children deaf to it too (one a daemon in its own session), leaves no process behind.
"""

from __future__ import annotations

import json
import os
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

from .isolation_adapters import CANARY

pytestmark = pytest.mark.slow

TASK = "demo_benefits_enrollment_001"
ADAPTERS = "tests.adversarial.isolation_adapters"
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
    monkeypatch.setattr("harness.cli.campaign_request.jail_problem", lambda: "bwrap could not make the sandbox (no userns)")
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
@pytest.mark.parametrize("jail", [True, False])
def test_the_adapter_is_probed_in_the_sandbox_and_bare_only_where_docker_will_host_it(jail):
    from harness.agents.adapter_process import AdapterLoadError, HostedDescription, probe_adapter

    described = probe_adapter(f"{ADAPTERS}:BridgeCaller", jail=jail)
    assert described == HostedDescription(f"{ADAPTERS}:BridgeCaller", "bridge-caller", ("bridge",))
    with pytest.raises(AdapterLoadError, match="has no attribute 'Missing'"):
        probe_adapter(f"{ADAPTERS}:Missing", jail=jail)
