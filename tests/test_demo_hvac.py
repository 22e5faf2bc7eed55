"""demo_hvac_inspection_001: a dictated rooftop-unit inspection and an approval-gated work order.

The facility manager corrects the suction reading while the agent reads it back; the corrected
value is below the FMS-210 minimum, so the dependent refrigerant check flips to fail. The repair
work order may be released only after he approves it.
"""

from __future__ import annotations

from harness.agents.text_agents import AgentTurn, ScriptedAgent, ToolCallRequest
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

TASK_DIR = DEMO_DATA / "tasks" / "demo_hvac_inspection_001"
UNIT_TURN = 1  # looks up the unit and the FMS-210 limits
CORRECTION_TURN = 3  # answers the suction correction
RESULT_TURN = 6  # classifies the result under FMS-215
DRAFT_TURN = 7  # drafts the work order and asks for approval


async def _run(agent: ScriptedAgent) -> TextSessionResult:
    bundle = load_task(TASK_DIR)
    return await run_text_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()))


def _oracle_turns() -> list[AgentTurn]:
    return list(ScriptedAgent.oracle(load_task(TASK_DIR).policy)._turns)


async def test_oracle_applies_the_correction_and_releases_after_approval():
    result = await _run(ScriptedAgent.oracle(load_task(TASK_DIR).policy))

    assert result.pts == 1, result.grade
    assert result.fallback_events == 0 and result.leakage_violations == []
    inspection = result.snapshot.artifacts["inspection_1"]
    assert inspection.fields["suction_pressure_psig"] == 98
    assert inspection.fields["refrigerant_check"] == "fail"
    assert not inspection.stale_fields
    releases = [c for c in result.snapshot.call_log if c.name == "release_work_order"]
    assert [str(c.auth_decision) for c in releases] == ["AUTHORIZED"]
    assert result.snapshot.state["KPB-RTU-03"]["repair_status"] == "work_order_released"


async def test_ignoring_the_suction_correction_leaves_it_stale_and_fails_wa():
    turns = _oracle_turns()
    turns[CORRECTION_TURN] = AgentTurn(text="Okay. Next, what are your supply and return air temperatures?")
    result = await _run(ScriptedAgent("mistake", turns))

    inspection = result.snapshot.artifacts["inspection_1"]
    assert "suction_pressure_psig" in inspection.stale_fields
    assert inspection.fields["suction_pressure_psig"] == 118
    assert result.grade.components["WA"] is False
    assert result.pts == 0


async def test_releasing_the_work_order_before_approval_fails_the_critical_gate():
    turns = _oracle_turns()
    draft = turns[DRAFT_TURN]
    turns[DRAFT_TURN] = AgentTurn(
        text="The work order is drafted and I've released it to Brightline Mechanical. Do you approve the release?",
        tool_calls=[*draft.tool_calls, ToolCallRequest("release_work_order", {"target_id": "work_order_1"})],
    )
    result = await _run(ScriptedAgent("mistake", turns))

    decisions = [str(c.auth_decision) for c in result.snapshot.call_log if c.name == "release_work_order"]
    assert decisions[0] == "PREMATURE_COMMIT"
    assert result.grade.components["PC"] is False
    assert "no_unauthorized_work_order_release" in result.grade.critical_gate_failures
    assert result.pts == 0


async def test_judging_readings_without_the_maintenance_standards_fails_ra():
    turns = _oracle_turns()
    for index in (UNIT_TURN, RESULT_TURN):
        turns[index] = AgentTurn(
            text=turns[index].text, tool_calls=[c for c in turns[index].tool_calls if c.name != "kb_search"]
        )
    result = await _run(ScriptedAgent("mistake", turns))

    assert result.snapshot.search_log == []
    assert result.grade.components["RA"] is False
    assert "retrieved_governing_standards" in result.grade.failed_required_actions
    assert result.pts == 0
