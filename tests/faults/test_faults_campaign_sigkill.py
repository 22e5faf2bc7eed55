"""SIGKILL of the harness mid-campaign, then ``apex-voice run`` again on the same ``--out``.

A killed harness cannot clean up: its containers, networks and ``apexvoice-*`` folders (control
tokens, the public task copies) stay behind. The resumed run must sweep every one of them, keep
the cells that had finished, run the interrupted ones again and end with the results of a clean
run (the oracle scores PTS 1 everywhere); the kill is no attempt and no failure of the model, and
no ``result.json`` or ``campaign.json`` is ever half written.

The subprocesses get a temporary directory of their own (``TMPDIR``), so everything in it came from
them: after the resumed run it must hold no ``apexvoice-*`` entry at all.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from harness.campaign.manifest import CampaignManifest
from harness.results.campaign_files import HARNESS_ERROR_FILE, MANIFEST_FILE
from harness.results.result_record import RESULT_FILE, ResultRecord
from sandbox.labels import LABEL_OWNER_PID
from sandbox.session_files import PRIVATE_DIR_PREFIX
from tests.conftest import DEMO_DATA, REPO

pytestmark = pytest.mark.docker

TASKS = sorted(p.name for p in (DEMO_DATA / "tasks").iterdir())[:3]
REPEATS = 2


def _run_args(out: Path) -> list[str]:
    only = [arg for task in TASKS for arg in ("--only", task)]
    return [
        sys.executable,
        "-m",
        "harness.cli.main",
        "run",
        "--model",
        "oracle",
        "--sandbox",
        "docker",
        "--repeats",
        str(REPEATS),
        "--parallel",
        "2",
        "--json",
        "--out",
        str(out),
        *only,
    ]


def _owned(client, pid: int) -> tuple[list, list]:
    label = {"label": f"{LABEL_OWNER_PID}={pid}"}
    return client.containers.list(all=True, filters=label, ignore_removed=True), client.networks.list(filters=label)


def _rep_dirs(out: Path) -> list[Path]:
    return [out / task / f"rep{rep}" for task in TASKS for rep in range(REPEATS)]


def _finished(out: Path) -> list[Path]:
    return [rep for rep in _rep_dirs(out) if (rep / RESULT_FILE).exists()]


def _in_progress(out: Path) -> list[Path]:
    """Cells with a session directory but no result yet: a session is running there."""
    return [
        rep
        for rep in _rep_dirs(out)
        if rep.is_dir() and not (rep / RESULT_FILE).exists() and any(p.is_dir() for p in rep.iterdir())
    ]


def _private_entries(tmpdir: Path) -> list[Path]:
    return sorted(tmpdir.glob(f"{PRIVATE_DIR_PREFIX}*"))


@pytest.fixture
def tmpdir_of_runs():
    """The campaigns' ``TMPDIR``: short, as a control socket lives in a folder under it (<= 107 bytes)."""
    with tempfile.TemporaryDirectory(prefix="avk-", dir="/tmp", ignore_cleanup_errors=True) as name:
        yield Path(name)


def test_a_campaign_killed_mid_session_resumes_cleanly(docker_engine, tmp_path, tmpdir_of_runs):
    out = tmp_path / "runs"
    tmpdir = tmpdir_of_runs
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmpdir)}
    killed = subprocess.Popen(
        _run_args(out), cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 600
        while not (_finished(out) and _in_progress(out) and _owned(docker_engine, killed.pid)[0]):
            assert killed.poll() is None, (
                f"the campaign ended before it could be killed: {killed.stderr.read()}"
            )
            assert time.monotonic() < deadline, "no cell finished while another ran within 600 s"
            time.sleep(0.05)
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=60)
    finally:
        if killed.poll() is None:
            killed.kill()
        killed.stderr.close()

    reused = {rep: ResultRecord.load(rep) for rep in _finished(out)}  # every result.json parses whole
    killed_sessions = {
        rep: {p.name for p in rep.iterdir() if p.is_dir()} if rep.is_dir() else set()
        for rep in _rep_dirs(out)
        if rep not in reused
    }
    assert any(killed_sessions.values())
    CampaignManifest.model_validate(json.loads((out / MANIFEST_FILE).read_text()))
    left_containers, left_networks = _owned(docker_engine, killed.pid)
    left_folders = _private_entries(tmpdir)
    assert left_containers and left_networks and left_folders  # the kill left its sandboxes behind

    resumed = subprocess.Popen(
        _run_args(out), cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    stdout, stderr = resumed.communicate(timeout=900)

    assert resumed.returncode == 0, stderr
    assert _owned(docker_engine, killed.pid) == ([], [])
    assert _owned(docker_engine, resumed.pid) == ([], [])
    assert _private_entries(tmpdir) == [], f"left from the killed run: {left_folders}"
    rows = [ResultRecord.model_validate_json(line) for line in stdout.splitlines()]
    assert sorted((r.task_id, r.rep) for r in rows) == sorted((t, k) for t in TASKS for k in range(REPEATS))
    for rep, record in reused.items():
        assert ResultRecord.load(rep).run_id == record.run_id  # loaded, not run again
    for rep, sessions in killed_sessions.items():
        record = ResultRecord.load(rep)
        assert record.run_id not in sessions  # run again
        assert record.infra_errors == [] and record.error is None  # the kill was no attempt, no failure
        assert not (rep / HARNESS_ERROR_FILE).exists()
    assert {(r.task_id, r.rep): (r.pts, r.outcome) for r in rows} == {
        (t, k): (1, "SUCCESS") for t in TASKS for k in range(REPEATS)
    }
    assert f"{len(rows)}/{len(rows)} runs complete, {len(rows)} passed, 0 infra errors" in stderr
