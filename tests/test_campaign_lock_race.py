"""The campaign lock is the kernel's, not the file's contents: no window in which a live lock looks dead."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

import pytest

from harness.campaign.lock import LOCK_FILE, CampaignLock, CampaignLockedError


def test_a_lock_file_still_empty_while_its_creator_starts_is_not_taken_over(tmp_path):
    # The old lock created the file, then wrote its PID: a second process reading the empty file
    # between the two unlinked a live lock and both wrote. A held flock with no PID yet must refuse.
    path = tmp_path / LOCK_FILE
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        with pytest.raises(CampaignLockedError, match="a process that is starting"):
            CampaignLock(tmp_path).acquire()
        assert path.exists()
    finally:
        os.close(fd)


def test_a_dead_holders_lock_is_taken_without_reading_its_pid(tmp_path):
    # A holder that dies without releasing leaves the file (with its PID); the kernel drops its flock.
    script = "import os, sys; from harness.campaign.lock import CampaignLock; CampaignLock(sys.argv[1]).acquire(); os._exit(0)"
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True)
    assert (tmp_path / LOCK_FILE).read_text().strip().isdigit()
    with CampaignLock(tmp_path):
        assert int((tmp_path / LOCK_FILE).read_text()) == os.getpid()
    assert not (tmp_path / LOCK_FILE).exists()


def test_a_live_holder_is_named(tmp_path):
    with CampaignLock(tmp_path), pytest.raises(CampaignLockedError, match=f"pid {os.getpid()}"):
        CampaignLock(tmp_path).acquire()
