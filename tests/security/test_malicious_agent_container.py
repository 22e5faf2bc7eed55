"""A malicious agent image, run as the agent under test through the real path, finds no way out.

The attacker (tests/security/attacker/attacker.py) is run as ``container:IMAGE`` in native tool
mode: its own container beside the task's MCP server container on the session network. It speaks
just enough OpenAI Realtime to be connected to, then probes from inside and sends its findings back
as its transcript (an ``AGENT_TRANSCRIPT_PARTIAL`` event: the container is gone by the time the
test reads it). A second session (its MCP server and a silent agent container) runs meanwhile, so
the attacker has a neighbour to reach for. Every finding is one assertion below; ``own_mcp`` (the
attacker does reach its own task server) shows the probes work at all.

Containment: a fork bomb in the agent container is held by its pids limit, a memory hog is
OOM-killed inside its own limit; both sessions end scored as the agent's failure while the task
server and the host carry on.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

import docker.errors
import pytest

from harness.tasks.loader import load_task
from sandbox.agent_container import AgentContainerConfig, start_agent_container
from sandbox.docker_backend import SERVER_PORT, DockerBackend, DockerSandboxConfig
from sandbox.labels import LABEL_OWNER_PID
from tests.security.attacker.image import build_attacker, build_plan_image, remove_plan_images
from tests.security.attacker.sessions import TASK_ID, gold_needles, native_campaign, report_of, short_task

# Faults and attacks land at wall-clock moments inside a session: pace it at 1x.
# One worker runs the module: the attacker is built and its session run once, not once per worker.
pytestmark = [pytest.mark.docker, pytest.mark.wall_clock, pytest.mark.xdist_group("attacker")]

PUBLIC_IPS = ["1.1.1.1", "8.8.8.8", "9.9.9.9"]
PROBE_BUDGET_S = 25  # the probes take ~11 s (a refused name lookup alone takes 10 s)
CONTAINMENT_BUDGET_S = 10
AGENT_LIMITS = AgentContainerConfig(image="")  # the limits every agent container gets


def host_addresses() -> list[str]:
    """Every IPv4 address of this host (its LAN address, docker0, every session bridge's gateway)."""
    lines = Path("/proc/net/fib_trie").read_text().splitlines()
    found = {lines[i - 1].split()[-1] for i, line in enumerate(lines) if "/32 host LOCAL" in line}
    return sorted(a for a in found if not IPv4Address(a).is_loopback)


def listening_ports() -> list[int]:
    """TCP ports something on this host listens on, on an address a container could route to."""
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, port = local.rsplit(":", 1)
            loopback = address in ("0100007F", "00000000000000000000000001000000")
            if state == "0A" and not loopback:
                ports.add(int(port, 16))
    return sorted(ports)


@pytest.fixture(scope="module")
def attacker(docker_engine):
    image = build_attacker(docker_engine)
    yield image
    remove_plan_images(docker_engine)


async def _probe_beside_another_session(engine, attacker: str, root: Path, host_listener: int) -> dict:
    other_public = root / "other" / TASK_ID
    load_task(short_task(root / "other-task", PROBE_BUDGET_S)).public_bundle().write(other_public)
    silent = await asyncio.to_thread(build_plan_image, engine, attacker, {"mode": "benign"})
    other_backend = DockerBackend(DockerSandboxConfig(pool_size=0))
    try:
        async with (
            other_backend.start(other_public, "t-attack-neighbour", task_id=TASK_ID) as other,
            start_agent_container(other, AgentContainerConfig(image=silent)) as other_agent,
        ):
            other_subnet = IPv4Network(other.metadata["subnet"])
            plan = {
                "mode": "probe",
                "public_ips": PUBLIC_IPS,
                "host_addresses": host_addresses(),
                "host_ports": [*listening_ports(), host_listener],
                "other_targets": [
                    (str(a), p) for a in other_subnet.hosts() for p in (SERVER_PORT, 8765, 22, 80)
                ],
                "needles": gold_needles(),
            }
            image = await asyncio.to_thread(build_plan_image, engine, attacker, plan)
            result = await native_campaign(image, short_task(root / "task", PROBE_BUDGET_S), root / "runs")
    finally:
        await other_backend.aclose()
    (outcome,) = result.outcomes
    assert outcome.status == "ran" and outcome.record is not None, outcome
    return {
        "report": report_of(outcome.record, root / "runs"),
        "record": outcome.record,
        "plan": plan,
        "other": {
            "server": other.metadata["address"],
            "agent": other_agent.address,
            "subnet": str(other_subnet),
        },
    }


@pytest.fixture(scope="module")
def probed(docker_engine, attacker, tmp_path_factory):
    """One attacked session beside another one; the attacker's report and what it was told to try."""
    listener = socket.create_server(("0.0.0.0", 0))
    listener.setblocking(False)
    try:
        found = asyncio.run(
            _probe_beside_another_session(
                docker_engine, attacker, tmp_path_factory.mktemp("attack"), listener.getsockname()[1]
            )
        )
        try:
            listener.accept()
            found["host_listener"] = "connected"
        except BlockingIOError:
            found["host_listener"] = "never reached"
    finally:
        listener.close()
    return found


def _connected(results: list[dict]) -> list[dict]:
    return [r for r in results if r["outcome"] == "connected"]


def test_the_attacker_ran_as_the_agent_and_reached_its_own_task_server(probed):
    report, record = probed["report"], probed["record"]
    assert report["own_mcp"] == "connected"  # the probes can succeed: every "blocked" below means it
    assert report["mcp_url"].endswith(f":{SERVER_PORT}/mcp") and report["mcp"]["tools/list"][0] == 200
    assert record.tool_path == "mcp-agent" and record.privileged is False
    assert record.sandbox["agent_container"]["image"].startswith("apex-voice/attacker-test:plan-")
    assert record.pts == 0 and record.error is None  # a scored session: the attacker did no task


def test_the_control_plane_is_out_of_reach(probed):
    report = probed["report"]
    assert set(report["control_over_mcp_listener"].values()) == {404}, report["control_over_mcp_listener"]
    fs = report["filesystem"]
    assert fs["sockets"] == []  # no control socket (nor any other) in the agent's filesystem
    assert fs["token_files"] == []
    assert not fs["well_known"]["/run/control"] and not fs["well_known"]["/run/secrets"]
    assert _connected(report["mcp_server_other_ports"]) == []  # the task server listens on /mcp's port only


def test_no_docker_engine_is_reachable(probed):
    report = probed["report"]
    assert not report["filesystem"]["well_known"]["/var/run/docker.sock"]
    assert not report["filesystem"]["well_known"]["/run/docker.sock"]
    engine_ports = [r for r in report["host"] if r["port"] in (2375, 2376)]
    assert engine_ports and _connected(engine_ports) == []


def test_no_host_service_is_reachable(probed):
    report, plan = probed["report"], probed["plan"]
    tried = {(r["host"], r["port"]) for r in report["host"]}
    assert {(report["gateway"], 22), (report["gateway"], 8080), ("172.17.0.1", 80)} <= tried
    assert {a for a, _ in tried} >= set(plan["host_addresses"])  # every address of the host, every listener
    assert _connected(report["host"]) == []
    assert probed["host_listener"] == "never reached"
    assert probed["record"].sandbox["host_guard"] == "on"  # the drop rule did it, not a missing listener


def test_no_internet(probed):
    report = probed["report"]
    assert len(report["internet_tcp"]) == 3 * len(PUBLIC_IPS) and _connected(report["internet_tcp"]) == []
    assert "connected" not in report["internet_udp_dns"].values()
    assert all(outcome.startswith("gaierror") for outcome in report["dns"].values()), report["dns"]


def test_another_sessions_containers_are_unreachable(probed):
    report, other = probed["report"], probed["other"]
    tried = {r["host"] for r in report["other_session"]}
    assert {other["server"], other["agent"]} <= tried
    assert _connected(report["other_session"]) == []
    assert report["neighbour_scan"]["scanned"] > 200 and report["neighbour_scan"]["connected"] == []


def test_no_gold_reaches_the_agent(probed):
    report, needles = probed["report"], probed["plan"]["needles"]
    assert len(needles) >= 4  # employee id, name, birth date, phone, dependents: the user's to tell
    import json

    offered = json.dumps(
        report["mcp"]
    )  # tools, resources, prompts and read-only calls, as the agent sees them
    assert [n for n in needles if n in offered] == []
    assert report["filesystem"]["needle_files"] == []
    assert not report["filesystem"]["well_known"]["/task"]
    assert (
        "session_update" in report and [n for n in needles if n in json.dumps(report["session_update"])] == []
    )
    assert "apex_voice" not in report["session_update"]  # no reference policy for an unprivileged image
    assert report["environment"] == [
        "APEX_ATTACK_B64",
        "HOME",
        "HOSTNAME",
        "LANG",
        "PATH",
    ]  # the launcher adds nothing


def test_the_mcp_endpoint_refuses_a_caller_without_its_bearer_token(probed):
    report = probed["report"]
    assert report["mcp_without_token"] == 401 and report["mcp_wrong_token"] == 401
    assert report["mcp_headers"] == ["Authorization"]


# ---- containment -------------------------------------------------------------------------------


def _agent_containers(engine) -> list:
    selector = {"label": f"{LABEL_OWNER_PID}={os.getpid()}", "name": "apexvoice-agent-"}
    return engine.containers.list(filters=selector)


async def _watch_pids(engine, seen: list[int], stop: asyncio.Event) -> None:
    """The agent container's process count, sampled while the session runs."""
    while not stop.is_set():
        for container in await asyncio.to_thread(_agent_containers, engine):
            try:
                stats = await asyncio.to_thread(container.stats, stream=False)
            except (docker.errors.NotFound, ValueError):  # removed as the session ended
                continue
            seen.append(stats.get("pids_stats", {}).get("current", 0))
        await asyncio.sleep(0.5)


async def test_a_fork_bomb_is_held_by_the_pids_limit_and_scored_as_the_agents_failure(
    docker_engine, attacker, tmp_path
):
    image = await asyncio.to_thread(build_plan_image, docker_engine, attacker, {"mode": "forkbomb"})
    seen: list[int] = []
    stop = asyncio.Event()
    watcher = asyncio.create_task(_watch_pids(docker_engine, seen, stop))
    try:
        result = await native_campaign(image, short_task(tmp_path, CONTAINMENT_BUDGET_S), tmp_path / "runs")
    finally:
        stop.set()
        await watcher
    host_still_forks = subprocess.run(["true"], check=False).returncode
    (outcome,) = result.outcomes
    assert max(seen) > AGENT_LIMITS.pids_limit // 2, seen  # the bomb went off
    assert max(seen) <= AGENT_LIMITS.pids_limit, seen  # and stopped at the limit
    assert host_still_forks == 0
    assert outcome.status == "ran" and outcome.attempts == 1 and outcome.record is not None
    record = outcome.record
    assert record.pts == 0 and record.error is None and record.outcome == "FAILURE"  # scored, the agent's
    assert record.turns is not None  # the task server answered to the end: the session was graded


async def test_a_memory_hog_is_oom_killed_in_its_limit_and_scored_as_the_agents_failure(
    docker_engine, attacker, tmp_path
):
    image = await asyncio.to_thread(build_plan_image, docker_engine, attacker, {"mode": "memhog"})
    since = int(time.time()) - 1
    result = await native_campaign(image, short_task(tmp_path, CONTAINMENT_BUDGET_S), tmp_path / "runs")
    events = await asyncio.to_thread(
        lambda: list(
            docker_engine.events(
                since=since,
                until=int(time.time()) + 1,
                decode=True,
                filters={"event": "oom", "label": f"{LABEL_OWNER_PID}={os.getpid()}"},
            )
        )
    )
    oom_killed = {e["Actor"]["Attributes"].get("name", "") for e in events}
    (outcome,) = result.outcomes
    assert outcome.record is not None
    agent = outcome.record.sandbox["agent_container"]["name"]
    assert oom_killed == {agent}  # the agent, in its own cgroup; never the task server beside it
    assert outcome.status == "ran" and outcome.attempts == 1
    record = outcome.record
    assert record.pts == 0 and record.error is None and record.outcome == "FAILURE"
    assert any("the agent container failed" in e for e in record.agent_errors), record.agent_errors
    assert record.infra_errors == []  # the agent's failure is not infrastructure
