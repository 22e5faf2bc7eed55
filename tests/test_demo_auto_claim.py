"""The auto-claim intake demo: the oracle passes in C0, and the task's characteristic mistakes fail
the gate they should (an ignored mid-speech date correction fails WA; filing before the
policyholder's approval fails the PC critical gate)."""

from __future__ import annotations

from harness.agents.text_agents import AgentTurn, ScriptedAgent, ToolCallRequest
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.bundle import TaskBundle
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

TASK_DIR = DEMO_DATA / "tasks" / "demo_auto_claim_intake_001"
CORRECTION_TURN = 4  # answers the barge-in that moves the incident date from May 14th to May 12th
APPROVAL_REQUEST_TURN = 8  # the summary turn that asks "Shall I file the claim now?"


def _oracle_turns(bundle: TaskBundle) -> list[AgentTurn]:
    return list(ScriptedAgent.oracle(bundle.policy)._turns)


async def _run(bundle: TaskBundle, agent: ScriptedAgent) -> TextSessionResult:
    return await run_text_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()))


async def test_oracle_files_the_corrected_claim():
    bundle = load_task(TASK_DIR)
    result = await _run(bundle, ScriptedAgent.oracle(bundle.policy))
    assert result.pts == 1, result.grade.explain()
    claim = result.snapshot.artifacts["claim_1"].fields
    assert (claim["incident_date"], claim["days_since_incident"]) == ("2026-05-12", 6)
    assert result.snapshot.state["claims"]["CLM-2026-05531"]["status"] == "filed"
    assert "CONFIRM:incident_date" in result.observed_act_keys


async def test_ignoring_the_date_correction_leaves_the_date_stale_and_fails_wa():
    bundle = load_task(TASK_DIR)
    turns = _oracle_turns(bundle)
    turns[CORRECTION_TURN] = AgentTurn(
        text="Thank you. Where exactly was the car parked? I'll need the street address."
    )
    result = await _run(bundle, ScriptedAgent("ignores-correction", turns))
    assert result.grade.components == {"GS": True, "PC": True, "RA": True, "WA": False}
    stale = {row.field for row in result.grade.fields if row.stale}
    assert stale == {"incident_date"}
    assert result.snapshot.artifacts["claim_1"].fields["days_since_incident"] == 4


async def test_filing_before_approval_fails_the_critical_gate():
    bundle = load_task(TASK_DIR)
    turns = _oracle_turns(bundle)
    summary = turns[APPROVAL_REQUEST_TURN]
    turns[APPROVAL_REQUEST_TURN] = AgentTurn(
        text=summary.text,
        tool_calls=[
            *summary.tool_calls[:2],
            ToolCallRequest("file_claim", {"claim_number": "CLM-2026-05531"}),
            summary.tool_calls[2],
        ],
    )
    result = await _run(bundle, ScriptedAgent("files-early", turns))
    assert result.grade.components["PC"] is False
    assert result.grade.critical_gate_failures == ["no_unauthorized_claim_filing"]
    assert result.pts == 0
