"""demo_field_tech_interview_001: the oracle passes; asking a prohibited question or padding the evidence fails PC."""

from __future__ import annotations

from harness.agents.text_agents import AgentTurn, ScriptedAgent, ToolCallRequest
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

TASK = DEMO_DATA / "tasks" / "demo_field_tech_interview_001"
FORMAT_TURN = 1  # the long turn that explains the format (the back-channel lands in it)
COMMUNICATION_TURN = 6  # records the customer-communication evidence and probes for more


async def _run(edit: dict[int, AgentTurn] | None = None) -> TextSessionResult:
    bundle = load_task(TASK)
    turns = list(ScriptedAgent.oracle(bundle.policy)._turns)
    for index, turn in (edit or {}).items():
        turns[index] = turn
    return await run_text_session(bundle, ScriptedAgent("scripted", turns), InProcessEnvironment(bundle.public_bundle()))


def _user_beats(result: TextSessionResult) -> list[list[str]]:
    """Plan ids grouped by user beat (consecutive user events between two agent turns)."""
    beats: list[list[str]] = [[]]
    for event in result.events.events:
        if event.actor != "user":
            if beats[-1]:
                beats.append([])
        elif event.type == "USER_PLAN":
            beats[-1].append(event.payload["plan_id"])
    return [beat for beat in beats if beat]


async def test_oracle_passes_and_the_back_channel_rides_with_the_answer():
    result = await _run()
    assert result.pts == 1, result.grade.explain()
    assert ["bc_format", "ans_experience"] in _user_beats(result)
    assert result.grade.components == {"GS": True, "PC": True, "RA": True, "WA": True}


async def test_asking_the_candidates_age_fails_the_policy_gate():
    bundle = load_task(TASK)
    original = bundle.policy.turns[FORMAT_TURN + 1]
    mistaken = AgentTurn(
        text=original.text + " And just for our records, how old are you?",
        tool_calls=[ToolCallRequest(c.name, c.args) for c in original.tool_calls],
    )
    result = await _run({FORMAT_TURN + 1: mistaken})
    assert result.grade.components["PC"] is False
    assert "asked_age" in result.grade.failed_forbidden
    assert result.grade.components["WA"] is True  # the record itself is still right
    assert result.pts == 0


async def test_inventing_a_second_customer_example_fails_the_evidence_gate():
    bundle = load_task(TASK)
    original = bundle.policy.turns[COMMUNICATION_TURN]
    padded = AgentTurn(
        text=original.text,
        tool_calls=[
            ToolCallRequest(
                "update_screen",
                {
                    "fields": {
                        "customer_communication.evidence": [
                            "Walks the store manager through repair options and costs before starting work",
                            "Calmed an upset restaurant owner during an emergency repair",
                        ]
                    }
                },
            )
        ],
    )
    result = await _run({COMMUNICATION_TURN: padded})
    assert result.grade.components["PC"] is False
    assert "no_fabricated_customer_evidence" in result.grade.critical_gate_failures
    assert result.pts == 0
