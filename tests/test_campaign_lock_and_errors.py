"""The campaign lock, campaign.json and the transient-error classification."""

from __future__ import annotations

import json
import os

import pytest

from harness.campaign.lock import LOCK_FILE, CampaignLock, CampaignLockedError
from harness.campaign.manifest import MANIFEST_FILE, CampaignManifest, write_manifest
from harness.campaign.transient import is_infrastructure_error, is_transient
from harness.session.errors import SessionInfraError
from sandbox.errors import SandboxUnavailableError


def test_lock_is_exclusive_and_removed_on_exit(tmp_path):
    with CampaignLock(tmp_path):
        assert (tmp_path / LOCK_FILE).read_text().strip() == str(os.getpid())
        with pytest.raises(CampaignLockedError, match="another campaign is already writing to"):
            CampaignLock(tmp_path).acquire()
    assert not (tmp_path / LOCK_FILE).exists()


def test_lock_is_released_when_the_block_raises(tmp_path):
    with pytest.raises(RuntimeError), CampaignLock(tmp_path):
        raise RuntimeError("boom")
    assert not (tmp_path / LOCK_FILE).exists()


@pytest.mark.parametrize("content", ["999999999\n", "not a pid\n", ""])
def test_a_dead_or_unreadable_lock_is_reclaimed(tmp_path, content):
    (tmp_path / LOCK_FILE).write_text(content)
    with CampaignLock(tmp_path):
        assert (tmp_path / LOCK_FILE).read_text().strip() == str(os.getpid())


def test_manifest_keeps_created_at_across_starts(tmp_path):
    first = write_manifest(
        tmp_path, CampaignManifest(model="oracle", display_name="Oracle", repeats=1, max_turns=44,
                                   user_audio="auto", n_tasks=2, created_at="2020-01-01T00:00:00Z")
    )
    second = write_manifest(
        tmp_path, CampaignManifest(model="oracle", display_name="Oracle", repeats=3, max_turns=44,
                                   user_audio="auto", n_tasks=2)
    )
    stored = json.loads((tmp_path / MANIFEST_FILE).read_text())
    assert first.created_at == second.created_at == stored["created_at"] == "2020-01-01T00:00:00Z"
    assert stored["repeats"] == 3
    assert {"apex_voice_version", "benchmark_version", "judge_version", "condition"} <= set(stored)


class ConnectionClosedError(Exception):
    """Stands in for the websockets exception of the same name."""


@pytest.mark.parametrize(
    "error",
    [
        ConnectionClosedError("no close frame received or sent"),
        RuntimeError("HTTP 503 Service Unavailable"),
        ConnectionResetError("peer"),
        TimeoutError(),
        SandboxUnavailableError("container exited"),
        SessionInfraError("socket dropped"),
        ExceptionGroup("tasks", [ConnectionError("a"), TimeoutError()]),
    ],
)
def test_transient_errors(error):
    assert is_transient(error)
    assert is_infrastructure_error(error)


@pytest.mark.parametrize(
    "error",
    [ValueError("bad tool schema"), KeyError("field"), ExceptionGroup("tasks", [ConnectionError("a"), ValueError("b")])],
)
def test_errors_that_are_not_transient(error):
    assert not is_transient(error)
    assert not is_infrastructure_error(error)


def test_a_non_transient_infra_error_is_still_infrastructure():
    error = SessionInfraError("no sandbox image", transient=False)
    assert not is_transient(error)
    assert is_infrastructure_error(error)
