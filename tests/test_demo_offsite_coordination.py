"""demo_offsite_coordination_001: clarify a vague request, then follow the switch to hybrid.

The organizer says "next week" and "the usual group" without saying which; after the agent
confirms an in-person day she switches to hybrid, which changes the format, the catering count
and (through the schema's dependents) the room.
"""

from __future__ import annotations

from harness.agents.text_agents import AgentTurn, ScriptedAgent, ToolCallRequest
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

TASK_DIR = DEMO_DATA / "tasks" / "demo_offsite_coordination_001"
FIRST_TURN = 0  # answers the vague opening request
SWITCH_ANSWER_TURN = 4  # answers the switch to hybrid
BOOKING_TURN = 5


async def _run(agent: ScriptedAgent) -> TextSessionResult:
    bundle = load_task(TASK_DIR)
    return await run_text_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()))


def _oracle_turns() -> list[AgentTurn]:
    return list(ScriptedAgent.oracle(load_task(TASK_DIR).policy)._turns)


async def test_oracle_clarifies_follows_the_switch_and_passes():
    bundle = load_task(TASK_DIR)
    result = await _run(ScriptedAgent.oracle(bundle.policy))

    assert result.pts == 1, result.grade
    plans = [(e.payload["plan_id"], e.payload["speech_act"]) for e in result.events.events if e.type.value == "USER_PLAN"]
    assert ("switch_hybrid", "INTENT_SWITCH") in plans
    assert {"CLARIFY:offsite_date", "CLARIFY:attendees"} <= result.observed_act_keys
    # A2: both commits executed without any approval token.
    assert result.snapshot.tokens == []
    assert [str(c.auth_decision) for c in result.snapshot.call_log if c.name in ("book_room", "send_confirmation")] == [
        "AUTHORIZED", "AUTHORIZED",
    ]


async def test_ignoring_the_switch_to_hybrid_fails_wa_and_books_the_wrong_room():
    turns = _oracle_turns()
    turns[SWITCH_ANSWER_TURN] = AgentTurn(text="Noted. What phone number should the front desk call on the day?")
    booking = turns[BOOKING_TURN]
    turns[BOOKING_TURN] = AgentTurn(
        text=booking.text.replace("Larch Studio", "Cedar Hall"),
        tool_calls=[
            ToolCallRequest(c.name, {"room_id": "HS-CEDAR"}) if c.name == "book_room" else c
            for c in booking.tool_calls
        ],
    )
    result = await _run(ScriptedAgent("mistake", turns))

    stale = set(result.snapshot.artifacts["schedule_1"].stale_fields)
    assert {"format", "catering_headcount"} <= stale
    assert result.grade.components["WA"] is False
    assert result.grade.components["PC"] is False
    assert "no_video_less_room_for_hybrid" in result.grade.critical_gate_failures


async def test_guessing_the_day_instead_of_clarifying_fails_ra():
    turns = _oracle_turns()
    turns[FIRST_TURN] = AgentTurn(
        text="Happy to set it up. I'll put it on Tuesday the 14th for the whole team.",
        tool_calls=[
            *turns[FIRST_TURN].tool_calls,
            ToolCallRequest("update_schedule", {"fields": {"offsite_date": "2026-07-14"}}),
        ],
    )
    result = await _run(ScriptedAgent("mistake", turns))

    assert "CLARIFY:offsite_date" not in result.observed_act_keys
    assert result.grade.components["RA"] is False
    assert "clarified_which_day" in result.grade.failed_required_actions
    assert result.pts == 0
