"""Twenty native sessions with agent containers, some cancelled mid-way, leave nothing behind.

Twelve run in this process as a campaign task that is cancelled while its last sessions are in
flight; eight run in ``apex-voice run`` as a subprocess that gets SIGINT while four are in flight.
Afterwards, nothing the harness created is left: no container and no network labelled with its
pid (task servers, agent containers, spares of the warm pool), no private session folder or public
bundle folder in its temporary directory (each harness gets a directory of its own, so other
processes on the engine are not counted). The agent is the silent attacker image (``benign``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from harness.events import EventType
from tests.conftest import REPO
from tests.security.attacker.image import build_attacker, build_plan_image, remove_plan_images
from tests.security.attacker.sessions import leftovers, native_campaign, short_task

pytestmark = pytest.mark.docker

BUDGET_S = 6
IN_PROCESS_SESSIONS = 12
CLI_SESSIONS = 8
PARALLEL = 4


@pytest.fixture(scope="module")
def silent_agent(docker_engine):
    image = build_plan_image(docker_engine, build_attacker(docker_engine), {"mode": "benign"})
    yield image
    remove_plan_images(docker_engine)


@pytest.fixture
def private_tmp(monkeypatch):
    """A temporary directory for this harness alone, short enough for the control socket's path."""
    directory = Path(tempfile.mkdtemp(prefix="avleak-", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


async def test_a_campaign_cancelled_with_sessions_in_flight_leaves_nothing(
    docker_engine, silent_agent, private_tmp, tmp_path
):
    started, settled = [], []
    all_started = asyncio.Event()

    def on_session(cell, bus) -> None:
        def watch(event) -> None:
            if event.type == EventType.SANDBOX_STARTED:
                started.append(cell)
                if len(started) == IN_PROCESS_SESSIONS:
                    all_started.set()

        bus.subscribe(watch)

    campaign = asyncio.create_task(
        native_campaign(silent_agent, short_task(tmp_path, BUDGET_S), tmp_path / "runs", repeats=IN_PROCESS_SESSIONS,
                        parallel=PARALLEL, on_session=on_session, on_cell=settled.append)
    )  # fmt: skip
    await all_started.wait()
    in_flight_at_cancel = len(started) - len(settled)
    campaign.cancel()
    with pytest.raises(asyncio.CancelledError):
        await campaign
    left = await asyncio.to_thread(leftovers, docker_engine, os.getpid(), private_tmp)
    assert in_flight_at_cancel >= 1 and len(settled) < IN_PROCESS_SESSIONS  # some were cut mid-way
    assert [o.status for o in settled] == ["ran"] * len(settled)
    assert left.none, left


def test_sigint_to_the_cli_with_sessions_in_flight_leaves_nothing(docker_engine, silent_agent, tmp_path):
    tmp_dir = Path(tempfile.mkdtemp(prefix="avleak-", dir="/tmp"))
    short_task(tmp_path / "tasks", BUDGET_S)
    out = tmp_path / "runs"
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.cli.main", "run", "--model", f"container:{silent_agent}",
         "--sandbox", "docker", "--tool-mode", "native", "--data", str(tmp_path / "tasks"),
         "--repeats", str(CLI_SESSIONS), "--parallel", str(PARALLEL), "--out", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp_dir)},
    )  # fmt: skip
    try:
        finished = in_flight = 0
        while not (finished >= CLI_SESSIONS // 2 and in_flight >= 1):
            assert process.poll() is None, process.communicate()
            finished = len(list(out.glob("*/rep*/result.json")))
            agents = docker_engine.containers.list(  # sparse: a container removed meanwhile is no 404
                filters={"label": f"apexvoice.owner_pid={process.pid}", "name": "apexvoice-agent-"}, sparse=True
            )
            in_flight = len(agents)
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    try:
        left = leftovers(docker_engine, process.pid, tmp_dir)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    assert process.returncode == 130, stderr
    assert finished < CLI_SESSIONS  # the campaign was cut short, with sessions in flight
    assert left.none, left
