"""Campaign execution with an injected cell runner: order, layout, resume, retries, parallelism."""

from __future__ import annotations

import asyncio
import errno
import json
from pathlib import Path

import pytest

from harness.agents.registry import get_model
from harness.blame.errors import ProviderError, ProviderTransient, SessionInfraError
from harness.campaign.campaign import (
    CampaignCell,
    CampaignSettings,
    campaign_cells,
    run_campaign,
)
from harness.campaign.lock import LOCK_FILE
from harness.results.campaign_files import HARNESS_ERROR_FILE
from harness.results.result_record import ResultRecord
from sandbox.errors import SandboxUnavailableError

TASKS = ["task_b", "task_a"]


class ScriptedCells:
    """A cell runner that records its calls and raises the scripted errors before succeeding."""

    def __init__(self, failures: dict[tuple[str, int], list[BaseException]] | None = None, pts: int = 1):
        self.failures = failures or {}
        self.calls: list[tuple[str, int]] = []
        self.pts = pts
        self.active = 0
        self.max_active = 0

    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        self.calls.append((cell.task_id, cell.rep))
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            for _ in range(3):
                await asyncio.sleep(0)
            pending = self.failures.get((cell.task_id, cell.rep), [])
            if pending:
                raise pending.pop(0)
            run_id = f"{cell.task_id}-{cell.rep}-{len(self.calls)}"
            (rep_dir / run_id).mkdir(parents=True)
            return ResultRecord(
                task_id=cell.task_id, rep=cell.rep, model="oracle", run_id=run_id, pts=self.pts,
                components={"GS": True, "PC": True, "RA": True, "WA": bool(self.pts)}, turns=3, outcome="SUCCESS",
            )
        finally:
            self.active -= 1


def _settings(out: Path, **overrides) -> CampaignSettings:
    values = {"model": get_model("oracle"), "out_dir": out, "repeats": 2, "retry_backoff_s": 0.0, **overrides}
    return CampaignSettings(**values)


def test_cells_are_ordered_coverage_first():
    assert [str(c) for c in campaign_cells(TASKS, 2)] == ["task_a rep0", "task_b rep0", "task_a rep1", "task_b rep1"]


async def test_campaign_writes_layout_and_a_rerun_loads_instead_of_running(tmp_path):
    runner = ScriptedCells()
    result = await run_campaign(_settings(tmp_path), TASKS, runner)
    assert runner.calls == [("task_a", 0), ("task_b", 0), ("task_a", 1), ("task_b", 1)]
    assert result.complete and result.passed == 4 and result.errored == 0
    assert result.summary() == f"oracle: 4/4 runs complete, 4 passed, 0 infra errors -> {tmp_path}"
    stored = json.loads((tmp_path / "task_a" / "rep1" / "result.json").read_text())
    assert stored["model"] == "oracle" and stored["condition"] == "C2" and stored["error"] is None
    assert set(stored["components"]) >= {"GS", "PC", "RA", "WA"}
    assert (tmp_path / "task_a" / "rep1" / stored["run_id"]).is_dir()
    manifest = json.loads((tmp_path / "campaign.json").read_text())
    assert manifest["model"] == "oracle" and manifest["repeats"] == 2 and manifest["n_tasks"] == 2
    assert manifest["task_ids"] == ["task_a", "task_b"]
    assert not (tmp_path / LOCK_FILE).exists()

    never = ScriptedCells(failures={(t, r): [ValueError("must not run")] for t in TASKS for r in (0, 1)})
    again = await run_campaign(_settings(tmp_path), TASKS, never)
    assert never.calls == []
    assert [o.status for o in again.outcomes] == ["loaded"] * 4
    assert [r.run_id for r in again.rows] == [r.run_id for r in result.rows]
    assert json.loads((tmp_path / "campaign.json").read_text())["created_at"] == manifest["created_at"]


async def test_an_unparsable_result_is_run_again(tmp_path):
    rep_dir = tmp_path / "task_a" / "rep0"
    rep_dir.mkdir(parents=True)
    (rep_dir / "result.json").write_text("{not json")
    runner = ScriptedCells()
    result = await run_campaign(_settings(tmp_path, repeats=1), ["task_a"], runner)
    assert runner.calls == [("task_a", 0)]
    assert ResultRecord.read(rep_dir).run_id == result.rows[0].run_id


async def test_a_transient_failure_is_retried_and_noted_but_not_scored(tmp_path):
    runner = ScriptedCells(failures={("task_a", 0): [ProviderTransient("server disconnected (1006)")]})
    result = await run_campaign(_settings(tmp_path, repeats=1), ["task_a"], runner)
    assert runner.calls == [("task_a", 0), ("task_a", 0)]
    (outcome,) = result.outcomes
    assert outcome.status == "ran" and outcome.attempts == 2
    assert outcome.record.error is None and outcome.record.pts == 1
    assert outcome.record.infra_errors == ["attempt 1: ProviderTransient: server disconnected (1006)"]


@pytest.mark.parametrize(
    "error",
    [SandboxUnavailableError("container died"), SessionInfraError("socket dropped"), ProviderTransient("slow")],
)
async def test_persistent_infra_failures_leave_the_cell_empty(tmp_path, error):
    runner = ScriptedCells(failures={("task_a", 0): [error] * 3})
    result = await run_campaign(_settings(tmp_path, repeats=1), ["task_a"], runner)
    assert len(runner.calls) == 3
    assert result.rows == [] and not result.complete
    assert result.empty_cells[0].attempts == 3
    assert not (tmp_path / "task_a" / "rep0" / "result.json").exists()
    assert "0/1 run complete, 0 passed, 1 infra error" in result.summary()


async def test_a_non_transient_infra_failure_is_not_retried_nor_scored(tmp_path):
    runner = ScriptedCells(failures={("task_a", 0): [SessionInfraError("no image", transient=False)]})
    result = await run_campaign(_settings(tmp_path, repeats=1), ["task_a"], runner)
    assert runner.calls == [("task_a", 0)]
    assert result.empty_cells[0].infra_errors == ["attempt 1: SessionInfraError: no image"]
    assert not (tmp_path / "task_a" / "rep0" / "result.json").exists()


async def test_a_harness_bug_fails_the_cell_loudly_and_is_neither_retried_nor_scored(tmp_path, caplog):
    runner = ScriptedCells(failures={("task_a", 0): [ValueError("bad tool schema")]})
    result = await run_campaign(_settings(tmp_path, repeats=1), ["task_a", "task_b"], runner)
    assert runner.calls == [("task_a", 0), ("task_b", 0)]
    (bug,) = result.harness_errors
    assert (bug.status, bug.record, bug.attempts, bug.error) == ("harness_error", None, 1, "ValueError: bad tool schema")
    rep_dir = tmp_path / "task_a" / "rep0"
    assert not (rep_dir / "result.json").exists()
    trace = (rep_dir / HARNESS_ERROR_FILE).read_text()
    assert "Traceback (most recent call last)" in trace and "raise pending.pop(0)" in trace
    assert "ValueError: bad tool schema" in trace
    assert any("harness bug" in r.message and r.exc_info for r in caplog.records)
    assert not result.complete and result.errored == 0
    assert "1 harness errors (task_a rep0: ValueError: bad tool schema)" in result.summary()

    again = ScriptedCells()
    rerun = await run_campaign(_settings(tmp_path, repeats=1), ["task_a", "task_b"], again)
    assert again.calls == [("task_a", 0)] and rerun.complete
    assert not (rep_dir / HARNESS_ERROR_FILE).exists()


async def test_a_provider_refusal_stops_the_campaign_and_says_why(tmp_path):
    refusal = ProviderError("401 invalid api key", kind="auth")
    runner = ScriptedCells(failures={("task_a", 0): [refusal]})
    result = await run_campaign(_settings(tmp_path, repeats=2), ["task_a", "task_b"], runner)
    assert runner.calls == [("task_a", 0)]
    assert [o.status for o in result.outcomes] == ["provider_error", "stopped", "stopped", "stopped"]
    assert result.rows == [] and not (tmp_path / "task_a" / "rep0" / "result.json").exists()
    assert "stopped at task_a rep0: the provider refused the harness, nothing will succeed " \
           "(ProviderError: 401 invalid api key)" in result.summary()


async def test_a_full_harness_disk_is_infrastructure_never_a_score(tmp_path):
    runner = ScriptedCells(failures={("task_a", 0): [OSError(errno.ENOSPC, "No space left on device")]})
    result = await run_campaign(_settings(tmp_path, repeats=1), ["task_a", "task_b"], runner)
    assert runner.calls == [("task_a", 0)]
    assert [o.status for o in result.outcomes] == ["infra_failed", "stopped"]
    assert result.rows == [] and not (tmp_path / "task_a" / "rep0" / "result.json").exists()
    assert "No space left on device" in result.summary()


async def test_a_disk_that_fills_while_the_result_is_written_is_infrastructure(tmp_path, monkeypatch):
    def full_disk(self, rep_dir):
        raise OSError(errno.ENOSPC, "No space left on device", str(rep_dir / "result.json"))

    monkeypatch.setattr(ResultRecord, "write", full_disk)
    result = await run_campaign(_settings(tmp_path, repeats=1), ["task_a", "task_b"], ScriptedCells())
    assert [o.status for o in result.outcomes] == ["infra_failed", "stopped"]
    assert result.rows == [] and "sandbox failure no retry can fix" in result.summary()


async def test_retry_waits_as_long_as_the_provider_asked(tmp_path, monkeypatch):
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr("harness.campaign.campaign.asyncio.sleep", fake_sleep)
    runner = ScriptedCells(failures={("task_a", 0): [ProviderTransient("429", retry_after_s=9.0)]})
    result = await run_campaign(_settings(tmp_path, repeats=1), ["task_a"], runner)
    assert result.complete and [s for s in slept if s] == [9.0]  # the cells themselves sleep(0)


@pytest.mark.parametrize("parallel", [1, 2, 3])
async def test_parallel_bounds_the_cells_running_at_once(tmp_path, parallel):
    runner = ScriptedCells()
    seen = []
    result = await run_campaign(
        _settings(tmp_path, parallel=parallel), TASKS + ["task_c"], runner, on_cell=lambda o: seen.append(o.cell)
    )
    assert runner.max_active == parallel
    assert len(result.rows) == 6 and sorted(seen) == sorted(campaign_cells(TASKS + ["task_c"], 2))
    assert runner.calls[:3] == [("task_a", 0), ("task_b", 0), ("task_c", 0)]


async def test_a_providers_session_limit_caps_parallel(tmp_path):
    from dataclasses import replace

    runner = ScriptedCells()
    settings = _settings(tmp_path, parallel=4)
    settings = replace(settings, model=replace(settings.model, max_concurrent_sessions=2))
    await run_campaign(settings, TASKS + ["task_c"], runner)
    assert runner.max_active == 2


def test_settings_reject_nonsense():
    with pytest.raises(ValueError, match="parallel must be at least 1, got 0"):
        _settings(Path("x"), parallel=0)


async def test_an_interrupted_attempts_session_is_set_aside_once_the_cell_is_scored(tmp_path):
    """Issue 36 §9: the interrupted session's folder stayed beside the resumed one in rep0/."""
    rep_dir = tmp_path / "task_a" / "rep0"
    interrupted = rep_dir / "0123456789ab"
    interrupted.mkdir(parents=True)
    (interrupted / "events.jsonl").write_text('{"type": "RUN_START"}\n')
    (rep_dir / "notes").mkdir()  # not a session: left alone
    result = await run_campaign(_settings(tmp_path, repeats=1), ["task_a"], ScriptedCells())
    (row,) = result.rows
    assert sorted(p.name for p in rep_dir.iterdir()) == sorted(["notes", row.run_id, "result.json", "superseded"])
    assert (rep_dir / "superseded" / "0123456789ab" / "events.jsonl").is_file()


async def test_a_failing_progress_callback_cancels_no_cell_and_the_unscored_cells_are_written(tmp_path, caplog):
    """Issue 34: an exception from the progress callback cancelled every running cell and skipped
    the final unscored-cells write."""
    def broken(*_):
        raise RuntimeError("the progress bar broke")

    runner = ScriptedCells(failures={("task_b", 0): [SandboxUnavailableError("container died")] * 3})
    result = await run_campaign(_settings(tmp_path, repeats=1), TASKS, runner, on_cell=broken, on_start=broken)
    assert sorted(o.status for o in result.outcomes) == ["infra_failed", "ran"]
    manifest = json.loads((tmp_path / "campaign.json").read_text())
    assert [(c["task_id"], c["reason"]) for c in manifest["unscored_cells"]] == [("task_b", "infrastructure")]
    assert "progress callback failed" in caplog.text


async def test_a_failing_regrade_at_resume_keeps_the_pending_record_and_the_campaign(tmp_path, caplog):
    """Issue 34: an exception from resume-time re-grading cancelled every running cell."""
    first = await run_campaign(_settings(tmp_path, repeats=1), TASKS, ScriptedCells())
    rep_dir = tmp_path / "task_a" / "rep0"
    pending = ResultRecord.read(rep_dir).model_copy(update={"pts": None, "pending": True, "pending_verdicts": ["form.plan"]})
    pending.write(rep_dir)

    async def regrade(cell, rep_dir, record):
        raise RuntimeError("the judge store is corrupt")

    again = await run_campaign(_settings(tmp_path, repeats=1), TASKS, ScriptedCells(), regrade=regrade)
    assert sorted(o.status for o in again.outcomes) == ["loaded", "loaded"]
    assert ResultRecord.read(rep_dir).pending and len(first.rows) == 2
    assert "re-grading its pending verdicts failed" in caplog.text
