"""Writes after COMMITTED: refused here (our score), accepted by the reference (a labelled second reading)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner

from harness.agents.text_agents import ScriptedAgent
from harness.cli.main import app
from harness.results.committed_writes import reference_reading, refused_writes_after_commit
from harness.results.grading_inputs import GradingInputs
from harness.results.regrade import regrade_record
from harness.results.result_record import ResultRecord
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
from harness.tasks.loader import load_task

DEMO_TASKS = Path(__file__).resolve().parents[1] / "harness" / "demo_data" / "tasks"
TASK = "demo_auto_claim_intake_001"


async def _fixed_after_submitting() -> tuple[GradingInputs, object]:
    """The oracle's session, except the VIN was wrong at commit and fixed by a (refused) write after it."""
    bundle = load_task(DEMO_TASKS / TASK)
    env = InProcessEnvironment(bundle.public_bundle())
    session = await run_text_session(bundle, ScriptedAgent.oracle(bundle.policy), env)
    refused = await env.call_tool("update_claim", {"fields": {"vehicle_vin": "4S4BTANC1M3184427"}}, 900_000)
    assert not refused.ok and "already COMMITTED" in refused.error
    snapshot = await env.snapshot()
    snapshot.artifacts["claim_1"].fields["vehicle_vin"] = "4S4BTANC1M3180000"
    inputs = GradingInputs(snapshot=snapshot, observed_act_keys=sorted(session.observed_act_keys),
                           gold_doc_ids=bundle.gold_doc_ids)
    return inputs, bundle


async def test_the_reference_reading_accepts_the_refused_write():
    inputs, bundle = await _fixed_after_submitting()
    assert refused_writes_after_commit(inputs.snapshot) == [("claim_1", {"vehicle_vin": "4S4BTANC1M3184427"})]
    ours = await regrade_record(ResultRecord(task_id=TASK, rep=0, model="m", run_id="r"), inputs, bundle.gold, None)
    reading = await reference_reading(inputs, bundle.gold, None)
    assert (ours.pts, ours.components["WA"]) == (0, False)
    assert (reading.writes, reading.pts) == (1, 1)


async def test_a_session_without_such_writes_has_no_second_reading():
    inputs, bundle = await _fixed_after_submitting()
    inputs.snapshot.call_log = [c for c in inputs.snapshot.call_log if c.ok]
    assert (await reference_reading(inputs, bundle.gold, None)).writes == 0


def test_results_reports_both_readings(tmp_path):
    inputs, bundle = asyncio.run(_fixed_after_submitting())
    campaign = tmp_path / "runs" / "fixer"
    rep_dir = campaign / TASK / "rep0"
    inputs.write(rep_dir / "r0")
    record = asyncio.run(regrade_record(
        ResultRecord(task_id=TASK, rep=0, model="fixer", run_id="r0", outcome="FAILURE"), inputs, bundle.gold, None))
    record.write(rep_dir)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["results", str(campaign), "--repeats", "1", "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    markdown = (out / "results.md").read_text()
    assert "## Writes after COMMITTED: our reading and the reference's" in markdown
    assert "| fixer | 1 | 0.0 | 1.0 | 0 | 1 |" in markdown
    model = json.loads((out / "results.json").read_text())["models"]["fixer"]
    assert model["pass_at_k"] == 0 and model["writes_after_committed"] == {
        "runs": 1, "pass1_mean_reference_reading": 1.0, "pass_at_k_reference_reading": 1}
