"""demo_retro_facilitation_001: facilitate a retro, recap while the lead back-channels.

The lead says "Yeah."/"Right." during the agent's long recap; the recap's closing question
(action items in priority order) is what she answers next. In C2 the agent must keep talking
through the back-channel; in C0 both plans reach the agent in one user beat.
"""

from __future__ import annotations

from harness.agents.text_agents import AgentTurn, ScriptedAgent, ToolCallRequest
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

TASK_DIR = DEMO_DATA / "tasks" / "demo_retro_facilitation_001"
PROJECT_TURN = 1  # answers the project code: looks up the delivery record
ACTION_ITEMS_TURN = 5  # answers the action items, given in priority order


async def _run(agent: ScriptedAgent) -> TextSessionResult:
    bundle = load_task(TASK_DIR)
    return await run_text_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()))


def _oracle_turns() -> list[AgentTurn]:
    return list(ScriptedAgent.oracle(load_task(TASK_DIR).policy)._turns)


async def test_oracle_passes_and_hears_the_back_channel_with_the_answer_in_one_beat():
    result = await _run(ScriptedAgent.oracle(load_task(TASK_DIR).policy))

    assert result.pts == 1, result.grade
    assert result.fallback_events == 0 and result.leakage_violations == []
    kinds = [e.type.value for e in result.events.events]
    plans = [e.payload["plan_id"] for e in result.events.events if e.type.value == "USER_PLAN"]
    assert plans.index("ans_action_items") == plans.index("bc_recap") + 1
    # No agent speech or tool call between the back-channel and the answer: the same user beat.
    user_plan_positions = [i for i, k in enumerate(kinds) if k == "USER_PLAN"]
    start = user_plan_positions[plans.index("bc_recap")]
    end = user_plan_positions[plans.index("ans_action_items")]
    assert not {"AGENT_TEXT", "TOOL_CALL"} & set(kinds[start:end])
    assert {"SUMMARIZE:retro_recap", "ASK:action_items"} <= result.observed_act_keys


async def test_recording_the_action_items_out_of_priority_order_fails_wa():
    turns = _oracle_turns()
    original = turns[ACTION_ITEMS_TURN]
    shuffled = ["Add schema drift alerts", "Automate the test data refresh", "Write an on-call runbook for cutovers"]
    turns[ACTION_ITEMS_TURN] = AgentTurn(
        text=original.text,
        tool_calls=[ToolCallRequest("update_action_plan", {"fields": {"action_items": shuffled}})],
    )
    result = await _run(ScriptedAgent("mistake", turns))

    assert result.snapshot.artifacts["action_plan_1"].fields["action_items"] == shuffled
    assert result.grade.components == {"GS": True, "PC": True, "RA": True, "WA": False}
    assert result.pts == 0


async def test_guessing_the_team_lead_without_the_project_record_fails_ra():
    turns = _oracle_turns()
    original = turns[PROJECT_TURN]
    turns[PROJECT_TURN] = AgentTurn(
        text=original.text,
        tool_calls=[c for c in original.tool_calls if c.name != "get_project_record"],
    )
    result = await _run(ScriptedAgent("mistake", turns))

    assert result.grade.components["RA"] is False
    assert "pulled_project_record" in result.grade.failed_required_actions
    assert result.pts == 0
