"""The compose stack and ``make demo`` share ./runs in either order (issue 23).

``make demo`` left ``runs/oracle`` root-owned (mode 755) and the compose harness (uid 10001) then
stopped with "cannot write the campaign directory". The stack's ``runs-dir`` step gives the harness
``runs/compose`` of its own and hands a ./runs that docker created to the owner of the task data.
This runs that step's own shell command (from compose.yaml) against a temporary ./runs, then writes
as the harness's uid and as the host user would; no image is built or started.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

COMPOSE = yaml.safe_load((REPO / "compose.yaml").read_text())
ROOT = os.geteuid() == 0
#: As root, the uids of the stack; otherwise this user plays both (chown to another uid needs root).
HARNESS_UID = int(COMPOSE["services"]["harness"].get("user", "10001").split(":")[0]) if ROOT else os.geteuid()
HOST_UID = 1000 if ROOT else os.geteuid()


def _runs_dir_step(runs: Path, owner_of: Path) -> None:
    service = COMPOSE["services"]["runs-dir"]
    shell, flags, script = service["command"]
    env = {**os.environ, **service["environment"], "RUNS": str(runs), "OWNER_OF": str(owner_of),
           "HARNESS_UID": str(HARNESS_UID)}
    subprocess.run([shell, flags, script.replace("$$", "$")], env=env, check=True)


def _writes_campaign_dir(uid: int, out: Path) -> None:
    """What ``run --out`` does first, as ``uid``: create the directory and write a file in it."""
    probe = f"mkdir -p {shlex.quote(str(out))} && touch {shlex.quote(str(out / 'campaign.json'))}"
    subprocess.run(["sh", "-c", probe], check=True, **({"user": uid, "group": uid} if ROOT else {}))


def _harness_out(runs: Path) -> Path:
    command = COMPOSE["services"]["harness"]["command"][-1]
    out = shlex.split(command.replace("$${APEX_VOICE_MODEL}", "oracle"))
    return runs / Path(out[out.index("--out") + 1]).relative_to("/runs")


@pytest.fixture
def project() -> Iterator[Path]:
    """A project checkout owned by the host user, as cloned, with its task data; in a directory every
    uid can traverse (pytest's own tmp_path is private to its user)."""
    top = Path(tempfile.mkdtemp(prefix="apex-compose-runs-"))
    top.chmod(0o755)
    data = top / "project" / "harness" / "demo_data"
    data.mkdir(parents=True)
    if ROOT:
        for path in (top / "project", data.parent, data):
            os.chown(path, HOST_UID, HOST_UID)
    yield top / "project"
    shutil.rmtree(top)


def test_the_harness_writes_its_own_directory_after_make_demo(project):
    runs = project / "runs"
    (runs / "oracle").mkdir(parents=True, mode=0o755)  # `make demo` as root: runs/ and runs/oracle root-owned
    _runs_dir_step(runs, project / "harness" / "demo_data")
    out = _harness_out(runs)
    assert out == runs / "compose" / "oracle"
    _writes_campaign_dir(HARNESS_UID, out)
    assert (out / "campaign.json").stat().st_uid == HARNESS_UID
    assert (runs / "compose").stat().st_uid == HARNESS_UID


def test_make_demo_writes_after_the_stack_created_runs(project):
    runs = project / "runs"
    runs.mkdir()  # docker created it for the bind mount: root-owned when run as root
    _runs_dir_step(runs, project / "harness" / "demo_data")
    _writes_campaign_dir(HARNESS_UID, _harness_out(runs))
    assert runs.stat().st_uid == HOST_UID
    _writes_campaign_dir(HOST_UID, runs / "oracle")  # then `make demo` as the host user
    assert (runs / "oracle" / "campaign.json").stat().st_uid == HOST_UID


def test_a_runs_directory_of_the_host_user_is_left_as_it_is(project):
    runs = project / "runs"
    runs.mkdir(mode=0o755)
    if ROOT:
        os.chown(runs, HOST_UID, HOST_UID)
    _runs_dir_step(runs, project / "harness" / "demo_data")
    assert (runs.stat().st_uid, runs.stat().st_mode & 0o777) == (HOST_UID, 0o755)
    _writes_campaign_dir(HARNESS_UID, _harness_out(runs))


def _handback_step(runs: Path) -> None:
    service = COMPOSE["services"]["runs-handback"]
    shell, flags, script = service["command"]
    subprocess.run([shell, flags, script.replace("$$", "$")], env={**os.environ, "RUNS": str(runs)}, check=True)


def test_the_sessions_files_go_to_the_owner_of_runs_and_back_to_the_harness_at_the_next_up(project):
    """Issue 36: runs/compose stayed owned by uid 10001, so the host user could not delete it."""
    runs = project / "runs"
    runs.mkdir(mode=0o755)
    if ROOT:
        os.chown(runs, HOST_UID, HOST_UID)
    _runs_dir_step(runs, project / "harness" / "demo_data")
    out = _harness_out(runs)
    _writes_campaign_dir(HARNESS_UID, out)
    _handback_step(runs)
    assert {p.stat().st_uid for p in (runs / "compose", out, out / "campaign.json")} == {HOST_UID}
    assert COMPOSE["services"]["runs-handback"]["depends_on"]["harness"]["condition"] == "service_completed_successfully"
    _runs_dir_step(runs, project / "harness" / "demo_data")  # the next `docker compose up`
    _writes_campaign_dir(HARNESS_UID, out / "rep0")  # the harness resumes into what it wrote before
    assert (out / "campaign.json").stat().st_uid == HARNESS_UID
