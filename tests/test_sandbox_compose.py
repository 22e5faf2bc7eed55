"""The compose stack end to end: one session, results in ./runs that survive ``down -v``.

Needs a Docker engine and ``docker-compose`` (or ``docker compose``); the images are built before
any Docker test starts (conftest). Skipped without an engine, failing instead under CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.conftest import DEMO_DATA, REPO, require_docker

pytestmark = pytest.mark.docker

TASK = "demo_warranty_advice_001"


def _compose() -> list[str]:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but neither docker-compose nor `docker compose` is installed")
    pytest.skip("neither docker-compose nor `docker compose` is installed")


def test_one_session_as_a_stack_keeps_its_results_after_down(tmp_path):
    require_docker()
    compose = [*_compose(), "-f", str(REPO / "compose.yaml"), "--project-directory", str(tmp_path), "-p", "avxtest"]
    env = {**os.environ, "APEX_VOICE_DATA_DIR": str(DEMO_DATA), "APEX_VOICE_TASK": f"tasks/{TASK}"}
    try:
        up = subprocess.run([*compose, "up", "-d"], env=env, capture_output=True, text=True, timeout=300)
        assert up.returncode == 0, up.stderr
        # `logs -f` returns once the harness has run its session (the container exits).
        logs = subprocess.run([*compose, "logs", "-f", "harness"], env=env, capture_output=True, text=True, timeout=600)
        # Then runs-handback gives the session's files to the owner of ./runs, and exits.
        subprocess.run([*compose, "logs", "-f", "runs-handback"], env=env, capture_output=True, timeout=120)
        down = subprocess.run([*compose, "down", "-v"], env=env, capture_output=True, text=True, timeout=120)
    finally:
        subprocess.run([*compose, "down", "-v"], env=env, capture_output=True, timeout=120)
    assert logs.returncode == 0 and "passed" in logs.stdout, logs.stdout[-2000:]
    assert down.returncode == 0, down.stderr
    results = list((tmp_path / "runs" / "compose" / "oracle").rglob("result.json"))
    assert results, "no result.json kept in ./runs"
    assert json.loads(results[0].read_text())["task_id"] == TASK
    owner = (tmp_path / "runs").stat().st_uid
    assert {path.stat().st_uid for path in (tmp_path / "runs" / "compose").rglob("*")} == {owner}  # not uid 10001
