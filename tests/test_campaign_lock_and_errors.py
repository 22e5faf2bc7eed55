"""The campaign lock and campaign.json."""

from __future__ import annotations

import json
import os

import pytest

from harness.campaign.lock import LOCK_FILE, CampaignLock, CampaignLockedError
from harness.campaign.manifest import MANIFEST_FILE, CampaignManifest, write_manifest


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
