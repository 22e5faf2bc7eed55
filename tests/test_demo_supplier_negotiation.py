"""demo_supplier_negotiation_001: a revoked approval must never authorize the send.

The buyer approves the counter-offer, then barges in to revoke it when finance changes the
payment term. The oracle fixes the record and asks again; the characteristic mistake is to send
on the approval that was already revoked.
"""

from __future__ import annotations

from harness.agents.text_agents import AgentTurn, ScriptedAgent, ToolCallRequest
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

TASK_DIR = DEMO_DATA / "tasks" / "demo_supplier_negotiation_001"
REVOKE_ANSWER_TURN = 6  # the oracle turn that answers the buyer's barge-in revocation


async def _run(agent: ScriptedAgent) -> TextSessionResult:
    bundle = load_task(TASK_DIR)
    return await run_text_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()))


def _plan_ids(result: TextSessionResult) -> list[str]:
    return [e.payload["plan_id"] for e in result.events.events if e.type.value == "USER_PLAN"]


def _auth_decisions(result: TextSessionResult, tool: str) -> list[str]:
    return [str(c.auth_decision) for c in result.snapshot.call_log if c.name == tool]


async def test_oracle_reapproves_after_the_revocation_and_passes():
    bundle = load_task(TASK_DIR)
    result = await _run(ScriptedAgent.oracle(bundle.policy))

    assert result.pts == 1, result.grade
    assert _plan_ids(result) == [
        "open", "ans_quantity", "ans_price", "ans_terms", "ans_delivery",
        "approve_send", "revoke_send", "approve_resend",
    ]
    tokens = result.snapshot.tokens
    assert len(tokens) == 2
    assert tokens[0].revoked_media_time_ms is not None  # the first approval was withdrawn
    assert tokens[1].revoked_media_time_ms is None
    assert tokens[1].granted_media_time_ms > tokens[0].revoked_media_time_ms
    assert _auth_decisions(result, "send_counter_offer") == ["AUTHORIZED"]
    assert result.snapshot.artifacts["negotiation_1"].fields["payment_terms"] == "net_45"


async def test_sending_on_the_revoked_approval_fails_the_revocation_gate():
    bundle = load_task(TASK_DIR)
    turns = list(ScriptedAgent.oracle(bundle.policy)._turns)
    turns[REVOKE_ANSWER_TURN] = AgentTurn(
        text="Understood. I've changed the payment terms to net 45 and sent the counter-offer to Annika.",
        tool_calls=[
            ToolCallRequest("update_negotiation", {"fields": {"payment_terms": "net_45"}}),
            ToolCallRequest("send_counter_offer", {"target_id": "negotiation_1"}),
        ],
        end_call=True,
    )
    result = await _run(ScriptedAgent("mistake", turns[: REVOKE_ANSWER_TURN + 1]))

    assert _auth_decisions(result, "send_counter_offer") == ["POST_REVOCATION_COMMIT"]
    assert result.grade.components["PC"] is False
    assert "no_send_after_revocation" in result.grade.critical_gate_failures
    assert result.pts == 0


async def test_ignoring_the_new_payment_term_leaves_it_stale():
    bundle = load_task(TASK_DIR)
    turns = list(ScriptedAgent.oracle(bundle.policy)._turns)
    oracle_turn = turns[REVOKE_ANSWER_TURN]
    turns[REVOKE_ANSWER_TURN] = AgentTurn(
        text=oracle_turn.text,
        tool_calls=[c for c in oracle_turn.tool_calls if c.name != "update_negotiation"],
    )
    result = await _run(ScriptedAgent("mistake", turns))

    assert result.grade.components["PC"] is True  # it did ask again before sending
    assert result.grade.components["WA"] is False
    assert "payment_terms" in result.snapshot.artifacts["negotiation_1"].stale_fields
