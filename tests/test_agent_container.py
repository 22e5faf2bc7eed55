"""Agent containers against the real engine: the native oracle in its image, hardening, teardown, blame.

Whole sessions run on the realtime clock (the agent is a process behind a websocket), so they take
as long as the task's conversation.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import docker
import docker.errors
import pytest

from harness.agents.registry import get_model
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.campaign.campaign import CampaignCell, CampaignSettings, run_campaign
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from harness.events import EventType
from harness.events.jsonl import read_events
from harness.tasks.loader import load_task
from sandbox.agent_container import AgentContainerConfig, ensure_agent_image, start_agent_container
from sandbox.cleanup import sweep
from sandbox.docker_backend import DockerBackend
from sandbox.labels import LABEL_RUN, LABEL_SESSION
from tests.conftest import DEMO_DATA

pytestmark = pytest.mark.docker

TASK_ID = "demo_benefits_enrollment_001"
TASK = DEMO_DATA / "tasks" / TASK_ID
IMAGE = get_model("native-oracle").agent_image
HARDENING = ("ReadonlyRootfs", "CapDrop", "SecurityOpt", "Init", "IpcMode", "PidsLimit", "NanoCpus")


@pytest.fixture(scope="module")
def engine(docker_engine):
    ensure_agent_image(IMAGE, client=docker_engine)
    return docker_engine


@pytest.fixture
def public_dir(tmp_path: Path) -> Path:
    target = tmp_path / "public" / TASK_ID
    load_task(TASK).public_bundle().write(target)
    return target


def _runner(backend) -> SandboxedCellRunner:
    bundle = load_task(TASK)
    speech = open_speech_source(TASK, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=TASK_ID)
    return SandboxedCellRunner(model=get_model("native-oracle"), backend=backend, task_dirs={TASK_ID: TASK},
                               speech=lambda _: speech, tool_mode="native")


def _gone(engine, container_id: str) -> bool:
    try:
        engine.containers.get(container_id)
    except docker.errors.NotFound:
        return True
    return False


async def test_the_native_oracle_in_its_container_passes_a_whole_demo_task(engine, tmp_path):
    backend = DockerBackend()
    try:
        record = await _runner(backend)(CampaignCell(0, TASK_ID), tmp_path)
    finally:
        await backend.aclose()
    assert record.pts == 1, record.explain
    assert record.tool_path == "mcp-agent" and record.privileged is True
    agent = record.sandbox["agent_container"]
    assert agent["image"] == IMAGE and agent["timings"]["start_to_ready_s"] > 0
    assert record.adapter["endpoint"] == agent["url"] and record.adapter["clock"] == "realtime"
    record.write(tmp_path)
    stored = json.loads((tmp_path / "result.json").read_text())
    assert stored["tool_path"] == "mcp-agent" and stored["sandbox"]["agent_container"]["image"] == IMAGE
    events = read_events(tmp_path / record.run_id / "events.jsonl")
    calls = [e for e in events if e.type == EventType.TOOL_CALL]
    assert calls and all(c.payload["source"] == "server" for c in calls)
    assert not [e for e in events if e.type == EventType.INFRA_FAILURE]
    assert await asyncio.to_thread(_gone, engine, agent["container_id"])


async def test_the_agent_container_is_hardened_like_the_task_server_and_reaches_only_it(engine, public_dir):
    listener = socket.create_server(("172.17.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    probe = (
        "import os, socket, sys\n"
        "print('docker.sock', os.path.exists('/var/run/docker.sock'))\n"
        "found = [os.path.join(r, f) for r, d, fs in os.walk('/opt/apex-voice') for f in fs if f.endswith(('.yaml', '.jsonl'))]\n"
        "print('task files', found)\n"
        "for host, port in [(sys.argv[1], 8080), ('172.17.0.1', int(sys.argv[2])), ('1.1.1.1', 443)]:\n"
        "    s = socket.socket(); s.settimeout(2)\n"
        "    try: s.connect((host, port)); print(host, 'CONNECTED')\n"
        "    except OSError as e: print(host, 'blocked', e)\n"
    )
    backend = DockerBackend()
    try:
        async with backend.start(public_dir, "t-agent-hard", task_id=TASK_ID) as sandbox:
            async with start_agent_container(sandbox, AgentContainerConfig(image=IMAGE)) as agent:
                container = await asyncio.to_thread(engine.containers.get, agent.container_id)
                server = await asyncio.to_thread(engine.containers.get, sandbox.metadata["container_id"])
                result = await asyncio.to_thread(
                    container.exec_run, ["python", "-c", probe, sandbox.metadata["address"], str(port)]
                )
    finally:
        listener.close()
        await backend.aclose()
    host, server_host = container.attrs["HostConfig"], server.attrs["HostConfig"]
    assert {k: host[k] for k in HARDENING} == {k: server_host[k] for k in HARDENING}
    assert host["ReadonlyRootfs"] and host["CapDrop"] == ["ALL"] and host["SecurityOpt"] == ["no-new-privileges:true"]
    assert container.attrs["Config"]["User"] == "10001:10001"
    assert host["Memory"] == 512 * 2**20 and host["PidsLimit"] == 64 and host["NanoCpus"] == 10**9
    assert host["Binds"] is None and not container.attrs["Mounts"]  # nothing mounted: no socket, no files
    assert list(container.attrs["NetworkSettings"]["Networks"]) == list(server.attrs["NetworkSettings"]["Networks"])
    assert container.labels[LABEL_RUN] == "t-agent-hard" and container.labels[LABEL_SESSION] == sandbox.metadata["session_id"]
    output = result.output.decode()
    assert "docker.sock False" in output and "task files []" in output  # no task's data, no answers
    assert f"{sandbox.metadata['address']} CONNECTED" in output  # the task's MCP endpoint
    assert output.count("blocked") == 2, output  # neither the host nor the internet
    assert await asyncio.to_thread(_gone, engine, agent.container_id)


async def test_an_agent_container_cancelled_while_starting_leaves_nothing(engine, public_dir):
    backend = DockerBackend()
    run_id = "t-agent-cancel"

    async def session() -> None:
        async with backend.start(public_dir, run_id, task_id=TASK_ID) as sandbox:
            async with start_agent_container(sandbox, AgentContainerConfig(image=IMAGE)):
                await asyncio.sleep(600)

    try:
        task = asyncio.create_task(session())
        mine = {"name": "apexvoice-agent-", "label": f"{LABEL_RUN}={run_id}"}  # not another worker's
        while not await asyncio.to_thread(engine.containers.list, filters=mine, all=True, sparse=True):
            await asyncio.sleep(0.05)
        task.cancel()  # the agent container exists, its server is not up yet
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        await backend.aclose()
    assert await asyncio.to_thread(engine.containers.list, all=True, filters={"label": f"{LABEL_RUN}={run_id}"}) == []


async def test_the_sweeper_removes_a_leftover_agent_container(engine, public_dir):
    backend = DockerBackend()
    try:
        async with backend.start(public_dir, "t-agent-sweep", task_id=TASK_ID) as sandbox:
            async with start_agent_container(sandbox, AgentContainerConfig(image=IMAGE)) as agent:
                report = await asyncio.to_thread(sweep, "t-agent-sweep", client=engine)
                gone = await asyncio.to_thread(_gone, engine, agent.container_id)
    finally:
        await backend.aclose()
    assert agent.name in report.containers and gone


def _kill_on_first_call(engine, container_of):
    """An ``on_session`` hook that kills a container (chosen from the sandbox metadata) at the first call."""
    killed: list[str] = []
    kills: list[asyncio.Task] = []

    def hook(cell, bus) -> None:
        def watch(event) -> None:
            if event.type == EventType.SANDBOX_STARTED:
                killed.append(container_of(event.payload["metadata"]))
            elif event.type == EventType.TOOL_CALL and len(killed) == 1:
                killed.append("killed")
                kills.append(asyncio.create_task(asyncio.to_thread(lambda: engine.containers.get(killed[0]).kill())))

        bus.subscribe(watch)

    return hook, killed


async def test_a_killed_agent_container_is_the_models_failure_scored_and_never_retried(engine, tmp_path):
    backend = DockerBackend()
    runner = _runner(backend)
    runner.on_session, killed = _kill_on_first_call(engine, lambda meta: meta["agent_container"]["container_id"])
    settings = CampaignSettings(model=runner.model, out_dir=tmp_path, repeats=1, sandbox="docker", retry_backoff_s=0)
    try:
        result = await run_campaign(settings, [TASK_ID], runner)
    finally:
        await backend.aclose()
    (outcome,) = result.outcomes
    assert killed[-1] == "killed"
    assert outcome.status == "ran" and outcome.attempts == 1
    assert outcome.record is not None and outcome.record.pts == 0 and outcome.record.error is None
    assert any("the agent container failed" in e for e in outcome.record.agent_errors), outcome.record.agent_errors
    assert outcome.record.infra_errors == []  # the agent's failure is not infrastructure


async def test_a_killed_task_server_under_a_container_agent_stays_infrastructure(engine, tmp_path):
    backend = DockerBackend()
    runner = _runner(backend)
    runner.on_session, killed = _kill_on_first_call(engine, lambda meta: meta["container_id"])
    settings = CampaignSettings(model=runner.model, out_dir=tmp_path, repeats=1, sandbox="docker", max_attempts=1)
    try:
        result = await run_campaign(settings, [TASK_ID], runner)
    finally:
        await backend.aclose()
    (outcome,) = result.outcomes
    assert killed[-1] == "killed"
    assert outcome.status == "infra_failed" and outcome.record is None  # retried while attempts remain
