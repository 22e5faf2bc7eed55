"""SIGTERM during a campaign: exit 143, every sandbox torn down, finished results kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, require_docker

pytestmark = pytest.mark.docker  # the images are built before it starts (conftest)


def _ours(client, pid: int):
    label = f"apexvoice.owner_pid={pid}"
    return (
        client.containers.list(all=True, filters={"label": label}, ignore_removed=True),
        client.networks.list(filters={"label": label}),
    )


def test_sigterm_mid_session_tears_the_sandbox_down(tmp_path):
    require_docker()
    import docker

    client = docker.from_env()
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.cli.main", "run", "--model", "noop", "--sandbox", "docker",
         "--out", str(tmp_path / "runs")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        while not _ours(client, process.pid)[0]:  # wait for a session's container to exist
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no sandbox started within 120 s"
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, stderr
    assert "terminated" in stderr
    containers, networks = _ours(client, process.pid)
    assert containers == [] and networks == []
