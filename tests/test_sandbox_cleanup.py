"""Leftovers are judged by their owner (pid, host, boot id): only a gone owner's are removed."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from sandbox.local import LocalBackend
from sandbox.ownership import Owner, current_owner
from sandbox.session_files import SessionFiles, sweep_orphaned_files


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _folder(parent: Path, name: str, owner: dict | None) -> Path:
    folder = parent / name
    folder.mkdir()
    if owner is not None:
        (folder / "owner").write_text(json.dumps(owner))
    return folder


def test_owner_judgement():
    me = current_owner()
    assert not me.is_gone()
    assert Owner(str(_dead_pid()), me.host, me.boot_id).is_gone()
    assert Owner(me.pid, me.host, "an-earlier-boot").is_gone()  # same pid, but before a reboot
    assert not Owner(str(_dead_pid()), "another-host", me.boot_id).is_gone()  # not ours to judge
    assert not Owner("not-a-pid", me.host, me.boot_id).is_gone()


def test_sweep_removes_only_folders_whose_owner_is_gone(tmp_path):
    me = current_owner()
    dead = _folder(tmp_path, "apexvoice-dead", {"pid": str(_dead_pid()), "host": me.host, "boot_id": me.boot_id})
    live = _folder(tmp_path, "apexvoice-live", {"pid": me.pid, "host": me.host, "boot_id": me.boot_id})
    foreign = _folder(tmp_path, "apexvoice-nofile", None)
    other = _folder(tmp_path, "unrelated", {"pid": str(_dead_pid()), "host": socket.gethostname(), "boot_id": ""})
    assert sweep_orphaned_files(tmp_path) == [dead]
    assert not dead.exists() and live.exists() and foreign.exists() and other.exists()


def test_session_files_record_their_owner():
    files = SessionFiles.create("apexvoice-test-", for_container=False)
    try:
        assert Owner(**json.loads((files.root / "owner").read_text())) == current_owner()
    finally:
        files.remove()


async def test_the_local_backend_sweeps_a_killed_harness_folders(toy_public_dir, monkeypatch):
    scratch = tempfile.TemporaryDirectory(prefix="avx-", dir="/tmp")  # short: a unix socket lives there
    tmp_path = Path(scratch.name)
    monkeypatch.setattr("tempfile.tempdir", scratch.name)
    me = current_owner()
    left = _folder(tmp_path, "apexvoice-local-left", {"pid": str(_dead_pid()), "host": me.host, "boot_id": me.boot_id})
    backend = LocalBackend(pool_size=0)
    async with backend.start(toy_public_dir, "run-sweep", task_id="toy_form_001") as sandbox:
        assert sandbox.metadata["private_dir"].startswith(str(tmp_path))
    await backend.aclose()
    leftovers = list(tmp_path.glob("apexvoice-local-*"))
    scratch.cleanup()
    assert not left.exists() and not leftovers


def test_a_killed_harness_public_copies_are_swept(tmp_path):
    """A harness that dies inside ``owned_temp_dir`` (no cleanup runs) leaves a folder the sweep removes."""
    script = (
        "import os, sys, tempfile; tempfile.tempdir = sys.argv[1]\n"
        "from sandbox.session_files import owned_temp_dir\n"
        "with owned_temp_dir('apexvoice-public-') as root:\n"
        "    (root / 'task').mkdir(); os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, cwd=Path(__file__).resolve().parents[1])
    left = list(tmp_path.glob("apexvoice-public-*"))
    assert len(left) == 1 and (left[0] / "task").is_dir()
    assert sweep_orphaned_files(tmp_path) == left
    assert not left[0].exists()


def test_validate_public_copies_are_swept_after_a_kill(tmp_path):
    """``SandboxedEnvironments`` (``validate``'s sandboxes) keeps its public copies in an owned folder."""
    script = (
        "import os, sys, tempfile; tempfile.tempdir = sys.argv[1]\n"
        "from harness.session.mcp_environment import SandboxedEnvironments\n"
        "from sandbox.local import LocalBackend\n"
        "environments = SandboxedEnvironments(LocalBackend()); os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, cwd=Path(__file__).resolve().parents[1])
    left = list(tmp_path.glob("apexvoice-public-*"))
    assert len(left) == 1
    assert sweep_orphaned_files(tmp_path) == left
