"""The campaign lock and campaign.json."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from harness.agents.registry import get_model
from harness.campaign.campaign import CampaignCell, CampaignSettings, run_campaign
from harness.campaign.lock import LOCK_FILE, CampaignLock, CampaignLockedError
from harness.campaign.manifest import CampaignManifest, write_manifest
from harness.results.campaign_files import HARNESS_ERROR_FILE, MANIFEST_FILE
from harness.results.result_record import ResultRecord


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


def _settings(out: Path, **overrides) -> CampaignSettings:
    return CampaignSettings(model=get_model("oracle"), out_dir=out, repeats=1, retry_backoff_s=0.0, **overrides)


def _record(cell: CampaignCell) -> ResultRecord:
    return ResultRecord(
        task_id=cell.task_id, rep=cell.rep, model="oracle", run_id=f"{cell.task_id}-run", pts=1,
        components={"GS": True, "PC": True, "RA": True, "WA": True}, turns=1, outcome="SUCCESS",
    )


@pytest.mark.parametrize("raised", [SystemExit(0), KeyboardInterrupt(), asyncio.CancelledError()])
async def test_a_base_exception_from_session_code_is_that_cells_harness_error(tmp_path, raised):
    """Only our own cancellation (the user's Ctrl-C) aborts: a SystemExit(0) from a session used to
    end the campaign with rc 0 and no results, as if it had succeeded."""

    async def run_cell(cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        if cell.task_id == "task_a":
            raise raised
        return _record(cell)

    result = await run_campaign(_settings(tmp_path), ["task_a", "task_b"], run_cell)
    by_task = {o.cell.task_id: o for o in result.outcomes}
    assert by_task["task_a"].status == "harness_error" and by_task["task_a"].attempts == 1
    assert (tmp_path / "task_a" / "rep0" / HARNESS_ERROR_FILE).is_file()
    assert by_task["task_b"].status == "ran"


async def test_our_own_cancellation_still_ends_the_campaign(tmp_path):
    started = asyncio.Event()

    async def run_cell(cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    campaign = asyncio.create_task(run_campaign(_settings(tmp_path), ["task_a"], run_cell))
    await started.wait()
    campaign.cancel()
    with pytest.raises(asyncio.CancelledError):
        await campaign
    assert not (tmp_path / "task_a" / "rep0" / HARNESS_ERROR_FILE).exists()
    assert not (tmp_path / LOCK_FILE).exists()


async def test_a_cancelled_campaign_cancels_its_running_cells_before_the_lock_is_released(tmp_path):
    """gather() left sibling sessions running after the campaign ended, with the lock already released.
    (A failing progress callback no longer ends the campaign: tests/test_campaign_runs.py.)"""
    sibling_cancelled = asyncio.Event()
    sibling_running = asyncio.Event()

    async def run_cell(cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        sibling_running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            sibling_cancelled.set()
            raise
        raise AssertionError("unreachable")

    # task_a's result is loaded while task_b's session runs.
    (tmp_path / "task_a" / "rep0").mkdir(parents=True)
    _record(CampaignCell(0, "task_a")).write(tmp_path / "task_a" / "rep0")
    campaign = asyncio.ensure_future(run_campaign(_settings(tmp_path, parallel=2), ["task_a", "task_b"], run_cell))
    await sibling_running.wait()
    campaign.cancel()
    with pytest.raises(asyncio.CancelledError):
        await campaign
    assert sibling_cancelled.is_set() and not (tmp_path / LOCK_FILE).exists()
