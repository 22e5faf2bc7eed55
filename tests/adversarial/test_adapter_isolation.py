"""An out-of-tree adapter cannot reach what the harness holds unless the user says it may.

Through the real CLI (``run --model tests.adversarial.isolation_adapters:Class --sandbox local``):
hosted out of process by default, the thieves of :mod:`tests.adversarial.isolation_adapters` find
no task bundle in memory and no task file where they look, and fail; with ``--trust-adapter`` the
same code, in the harness's process, steals the reference policy and passes — recorded as
``agent_isolation: in-process``. An honest adapter works through the host, its bridge tool call
executed over the protocol. The task server's environment holds no key of the harness's.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path

import pytest
from openai.types.realtime import RealtimeServerEvent
from typer.testing import CliRunner
from websockets.asyncio.client import connect

from harness.agents.realtime_server import RealtimeAgentServer
from harness.agents.registry import get_model
from harness.cli.main import app
from harness.tasks.loader import load_task
from sandbox.local import LocalBackend
from tests.conftest import DEMO_DATA
from tests.fakes.loopback import discriminated

from .isolation_adapters import BridgeCaller

pytestmark = pytest.mark.slow

TASK = "demo_benefits_enrollment_001"
ADAPTERS = "tests.adversarial.isolation_adapters"
SERVER_EVENTS = discriminated(RealtimeServerEvent)


def _run(tmp_path: Path, model: str, *extra: str):
    args = ["run", "--model", model, "--data", str(DEMO_DATA), "--only", TASK, "--sandbox", "local",
            "--repeats", "1", "--out", str(tmp_path), *extra]
    return CliRunner().invoke(app, args)


def _record(tmp_path: Path) -> dict:
    return json.loads((tmp_path / TASK / "rep0" / "result.json").read_text())


def test_naming_an_out_of_tree_adapter_imports_none_of_it():
    spec = get_model(f"{ADAPTERS}_unimported:Whatever")
    assert spec.hosted_adapter == f"{ADAPTERS}_unimported:Whatever" and spec.agent_kind == "remote_agent"
    assert f"{ADAPTERS}_unimported" not in sys.modules


@pytest.mark.parametrize("thief", ["GcThief", "TaskFileThief"])
def test_a_hosted_thief_finds_nothing_and_fails_while_trusted_it_steals_the_policy(tmp_path, thief):
    isolated = _run(tmp_path / "isolated", f"{ADAPTERS}:{thief}")
    assert isolated.exit_code == 0, isolated.output
    record = _record(tmp_path / "isolated")
    assert record["agent_isolation"] == "process" and record["privileged"] is False
    assert record["error"] is None and record["pts"] == 0  # scored, and it failed: it found nothing

    trusted = _run(tmp_path / "trusted", f"{ADAPTERS}:{thief}", "--trust-adapter")
    assert trusted.exit_code == 0, trusted.output
    assert "runs in the harness's process (--trust-adapter)" in trusted.output
    record = _record(tmp_path / "trusted")
    assert record["agent_isolation"] == "in-process" and record["privileged"] is False
    assert record["pts"] == 1  # what in-process means: the stolen policy passes the task


def test_a_hosted_grader_patcher_patches_only_its_own_process_while_trusted_it_passes(tmp_path, monkeypatch):
    from harness.session import session_effects

    monkeypatch.setattr(session_effects, "grade", session_effects.grade)  # undone after the test, patched or not
    isolated = _run(tmp_path / "isolated", f"{ADAPTERS}:GraderPatcher")
    assert isolated.exit_code == 0, isolated.output
    record = _record(tmp_path / "isolated")
    assert record["agent_isolation"] == "process" and record["error"] is None and record["pts"] == 0

    trusted = _run(tmp_path / "trusted", f"{ADAPTERS}:GraderPatcher", "--trust-adapter")
    assert trusted.exit_code == 0, trusted.output
    record = _record(tmp_path / "trusted")
    assert record["agent_isolation"] == "in-process" and record["privileged"] is False
    assert record["pts"] == 1  # what in-process means: the patched grader passes a call that did nothing


def test_an_honest_adapter_works_through_its_host_process_and_its_bridge_call_is_executed(tmp_path):
    result = _run(tmp_path, f"{ADAPTERS}:BridgeCaller")
    assert result.exit_code == 0, result.output
    record = _record(tmp_path)
    assert record["agent_isolation"] == "process" and record["tool_path"] == "bridge" and record["error"] is None
    assert record["sandbox"]["agent_process"]["timings"]["start_to_ready_s"] > 0
    events = [json.loads(line) for line in next((tmp_path / TASK / "rep0").rglob("events.jsonl")).read_text().splitlines()]
    calls = [e["payload"] for e in events if e["type"] == "TOOL_RESULT"]
    assert [(c.get("tool"), c.get("ok")) for c in calls] == [("get_enrollment_window", True)], calls


def test_an_adapter_module_that_does_not_import_is_a_usage_error_before_any_session(tmp_path):
    result = _run(tmp_path, f"{ADAPTERS}_missing:Agent")
    assert result.exit_code == 2
    assert f"cannot load adapter '{ADAPTERS}_missing:Agent'" in result.output
    assert not (tmp_path / TASK).exists()


async def test_the_local_task_server_sees_none_of_the_harness_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    monkeypatch.setenv("APEX_VOICE_LLM_API_KEY", "judge-key-must-not-leak")
    bundle = load_task(DEMO_DATA / "tasks" / TASK)
    public = tmp_path / "public"
    bundle.public_bundle(seed=1).write(public)
    backend = LocalBackend(pool_size=0)
    async with backend.start(public, "run-env", task_id=TASK) as env:
        environ = Path(f"/proc/{env.metadata['pid']}/environ").read_bytes()
    await backend.aclose()
    assert b"must-not-leak" not in environ
    names = {entry.partition(b"=")[0] for entry in environ.split(b"\0") if entry}
    assert names <= {b"PATH", b"HOME", b"TMPDIR", b"PYTHONPATH", b"PYTHONUNBUFFERED", b"PYTHONDONTWRITEBYTECODE",
                     b"LANG", b"LANGUAGE", b"TZ"} | {n for n in names if n.startswith(b"LC_")}


async def test_function_calls_cross_the_hosting_server_as_openai_sends_them():
    async with RealtimeAgentServer(BridgeCaller, agent_name="bridge-caller", port=0) as server:
        async with connect(server.url) as ws:
            tools = [{"type": "function", "name": "get_enrollment_window", "parameters": {"type": "object"}}]
            await ws.send(json.dumps({"type": "session.update", "session": {"type": "realtime", "tools": tools}}))
            await ws.send(json.dumps({"type": "input_audio_buffer.append",
                                      "audio": base64.b64encode(bytes(960)).decode()}))
            received = [json.loads(await asyncio.wait_for(ws.recv(), 30))]
            while received[-1]["type"] != "response.done":
                received.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
            await ws.send(json.dumps({"type": "conversation.item.create", "item": {
                "type": "function_call_output", "call_id": "call_window", "output": json.dumps({"open": True})}}))
            while received[-1]["type"] != "response.done" or len([e for e in received if e["type"] == "response.done"]) < 2:
                received.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
    for event in received:
        SERVER_EVENTS.validate_python(event)
    done = next(e for e in received if e["type"] == "response.function_call_arguments.done")
    assert (done["call_id"], done["name"], done["arguments"]) == ("call_window", "get_enrollment_window", "{}")
    first, second = [e["response"] for e in received if e["type"] == "response.done"]
    assert [item["type"] for item in first["output"]] == ["function_call"]  # a response of calls ends at once
    assert [item["type"] for item in second["output"]] == ["message"]
    assert second["output"][0]["content"][0]["transcript"] == "The enrollment window is open."
    added = [e["item"]["type"] for e in received if e["type"] == "conversation.item.added"]
    assert added == ["function_call", "function_call_output"]


@pytest.mark.docker
async def test_a_hosted_adapter_container_holds_its_package_read_only_and_no_task_file(docker_engine, tmp_path):
    from harness.campaign.hosted_agent import ADAPTER_HOST_IMAGE, hosted_container_config
    from sandbox.agent_container import AgentContainerConfig, ensure_agent_image, start_agent_container
    from sandbox.docker_backend import DockerBackend

    ensure_agent_image(ADAPTER_HOST_IMAGE, client=docker_engine)
    task_dir = (DEMO_DATA / "tasks" / TASK).resolve()
    public = tmp_path / "public" / TASK
    load_task(task_dir).public_bundle(seed=1).write(public)
    config = hosted_container_config(f"{ADAPTERS}:BridgeCaller", AgentContainerConfig(image=ADAPTER_HOST_IMAGE),
                                     task_dirs=[task_dir])
    probe = (
        "import os, sys\n"
        "print('task dir', os.path.exists(sys.argv[1]), 'control', os.path.exists(sys.argv[2]), os.path.exists('/run/control'))\n"
        "found = [os.path.join(r, f) for top in ('/opt', '/home', '/tmp') for r, d, fs in os.walk(top)\n"
        "         for f in fs if f in ('gold.yaml', 'policy.yaml', 'tasks.jsonl')]\n"
        "print('task files', found)\n"
        "try: open('/opt/adapter/tests/planted.py', 'w')\n"
        "except OSError as e: print('mount read-only', e.errno)\n"
        "print('env keys', sorted(k for k in os.environ if 'KEY' in k or 'TOKEN' in k))\n"
    )
    backend = DockerBackend()
    try:
        async with backend.start(public, "t-hosted-adapter", task_id=TASK) as sandbox:
            async with start_agent_container(sandbox, config) as agent:
                async with connect(agent.url) as ws:
                    hello = json.loads(await asyncio.wait_for(ws.recv(), 30))
                container = await asyncio.to_thread(docker_engine.containers.get, agent.container_id)
                control = str(sandbox.metadata.get("private_dir", "/nonexistent"))
                result = await asyncio.to_thread(container.exec_run, ["python", "-c", probe, str(task_dir), control])
    finally:
        await backend.aclose()
    assert hello["type"] == "session.created" and hello["session"]["model"] == f"{ADAPTERS}:BridgeCaller"
    mounts = [(m["Destination"], m["RW"]) for m in container.attrs["Mounts"]]
    assert mounts == [("/opt/adapter/tests", False)]  # the adapter's package, read-only, and nothing else
    output = result.output.decode()
    assert "task dir False control False False" in output and "task files []" in output, output
    assert "mount read-only 30" in output and "env keys []" in output, output  # EROFS


def test_a_package_holding_a_task_of_the_campaign_is_never_mounted_and_agent_images_get_no_mount():
    from harness.agents.adapter_process import AdapterLoadError
    from harness.campaign.hosted_agent import hosted_container_config
    from sandbox.agent_container import AgentContainerConfig, _hosting_options

    base = AgentContainerConfig(image="apex-voice/adapter-host:latest")
    assert _hosting_options(base) == {}  # an agent image runs as built: its command, no mount
    planted = Path(__file__).parent / "planted_task"  # inside the package that would be mounted
    with pytest.raises(AdapterLoadError, match="holds task planted_task"):
        hosted_container_config(f"{ADAPTERS}:BridgeCaller", base, task_dirs=[planted])
    config = hosted_container_config(f"{ADAPTERS}:BridgeCaller", base, task_dirs=[DEMO_DATA / "tasks" / TASK])
    assert config.read_only_mounts == ((str(Path(__file__).parent.parent.resolve()), "/opt/adapter/tests"),)
