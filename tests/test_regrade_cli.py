"""``apex-voice regrade`` and the resumed campaign fill pending verdicts from saved grading inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.agents.registry import get_model
from harness.agents.text_agents import ScriptedAgent
from harness.blame.errors import JudgeUnavailable
from harness.campaign.campaign import CampaignCell, CampaignSettings, run_campaign
from harness.cli.main import app
from harness.grading.judge import CachedVerdicts
from harness.grading.judge_cache import JudgeCache, judge_cache_key
from harness.results.grading_inputs import GradingInputs
from harness.results.regrade import pending_regrader, regrade_record
from harness.results.result_record import ResultRecord
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
from harness.tasks.loader import load_task

DEMO_TASKS = Path(__file__).resolve().parents[1] / "harness" / "demo_data" / "tasks"
TASK = "demo_auto_claim_intake_001"
SAID, GOLD_NAME = "Lucinda Varga Holloway", "Lucinda Varga-Holloway"
KEY = judge_cache_key("policyholder_name", SAID, GOLD_NAME)


class DownJudge:
    async def __call__(self, field: str, pred: Any, gold: Any, context: str) -> bool:
        raise JudgeUnavailable("judge answered 503")


@pytest.fixture
async def pending_campaign(tmp_path) -> Path:
    """A one-cell campaign whose oracle session wrote the name without a hyphen while the judge was down."""
    bundle = load_task(DEMO_TASKS / TASK)
    session = await run_text_session(bundle, ScriptedAgent.oracle(bundle.policy), InProcessEnvironment(bundle.public_bundle()))
    snapshot = session.snapshot.model_copy(deep=True)
    snapshot.artifacts["claim_1"].fields["policyholder_name"] = SAID
    inputs = GradingInputs(snapshot=snapshot, observed_act_keys=sorted(session.observed_act_keys),
                           gold_doc_ids=bundle.gold_doc_ids)
    out = tmp_path / "runs" / "oracle"
    rep_dir = out / TASK / "rep0"
    inputs.write(rep_dir / "run0")
    base = ResultRecord(task_id=TASK, rep=0, model="oracle", run_id="run0", outcome="SUCCESS", turns=session.turns,
                        task_version=bundle.task.version, latency={"tool_calls": 12})
    record = await regrade_record(base, inputs, bundle.gold, DownJudge())
    assert record.pending and record.pending_verdicts == ["claim_1.policyholder_name"]
    assert record.outcome == "PENDING"
    record.write(rep_dir)
    return out


def _regrade(*args: str):
    return CliRunner().invoke(app, ["regrade", *args], catch_exceptions=False)


def test_regrade_fills_a_pending_verdict_from_the_judge_cache(pending_campaign):
    rep_dir = pending_campaign / TASK / "rep0"
    still = _regrade(str(pending_campaign), "--json")
    assert still.exit_code == 1  # no key, no cached verdict: it stays pending, never a FAIL
    row = json.loads(still.stdout.strip())
    assert (row["pending_before"], row["pending_after"], row["pts_after"], row["changed"]) == (1, 1, None, False)
    assert ResultRecord.read(rep_dir).pending

    JudgeCache().put(KEY, True)
    filled = _regrade(str(pending_campaign), "--json")
    assert filled.exit_code == 0, filled.stdout
    row = json.loads(filled.stdout.strip())
    assert row["task_id"] == TASK and row["rep"] == 0 and row["run_id"] == "run0"
    assert (row["pts_before"], row["pts_after"], row["wa_before"], row["wa_after"]) == (None, 1, None, True)
    assert (row["pending_before"], row["pending_after"], row["changed"], row["problem"]) == (1, 0, True, None)
    stored = json.loads((rep_dir / "result.json").read_text())
    assert stored["pts"] == 1 and stored["pending"] is False and stored["pending_verdicts"] == []
    assert stored["outcome"] == "SUCCESS"
    assert stored["components"]["WA"] is True and stored["latency"] == {"tool_calls": 12}  # metrics kept

    again = _regrade(str(pending_campaign / TASK / "rep0"))
    assert again.exit_code == 0 and "unchanged" in again.stdout and "0 changed" in again.stdout


def test_a_negative_verdict_fails_the_field_and_dry_run_writes_nothing(pending_campaign):
    JudgeCache().put(KEY, False)
    before = (pending_campaign / TASK / "rep0" / "result.json").read_text()
    dry = _regrade(str(pending_campaign), "--dry-run")
    assert dry.exit_code == 0 and "pending → 0" in dry.stdout and "(dry run)" in dry.stdout
    assert (pending_campaign / TASK / "rep0" / "result.json").read_text() == before


def test_sessions_that_cannot_be_regraded_are_reported(pending_campaign, tmp_path):
    (pending_campaign / TASK / "rep0" / "run0" / "grading_inputs.json").unlink()
    result = _regrade(str(pending_campaign), "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["problem"].startswith("run0/grading_inputs.json unusable: FileNotFoundError")
    other = tmp_path / "other"
    ResultRecord(task_id="not_a_task", rep=0, model="m", run_id="x").write(other / "not_a_task" / "rep0")
    unknown = _regrade(str(other), "--json")
    assert "task 'not_a_task' is not in the task data" in json.loads(unknown.stdout)["problem"]


def test_usage_errors_exit_2(tmp_path):
    assert _regrade(str(tmp_path / "missing")).exit_code == 2
    assert _regrade(str(tmp_path)).exit_code == 2


async def test_a_resumed_campaign_regrades_pending_cells_when_the_judge_answers(pending_campaign):
    cache = JudgeCache()
    gold = load_task(DEMO_TASKS / TASK).gold

    async def must_not_run(cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        raise AssertionError("a pending cell is re-graded, not re-run")

    settings = CampaignSettings(model=get_model("oracle"), out_dir=pending_campaign, repeats=1)
    regrade = pending_regrader(lambda task_id: gold, CachedVerdicts(cache))
    waiting = await run_campaign(settings, [TASK], must_not_run, regrade=regrade)
    assert waiting.outcomes[0].status == "regraded" and len(waiting.pending) == 1
    assert "1 pending judge verdicts" in waiting.summary()

    cache.put(KEY, True)
    answered = await run_campaign(settings, [TASK], must_not_run, regrade=regrade)
    assert answered.outcomes[0].record.pts == 1 and answered.passed == 1 and not answered.pending
    assert ResultRecord.read(pending_campaign / TASK / "rep0").pts == 1
