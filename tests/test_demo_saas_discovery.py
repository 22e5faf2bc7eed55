"""demo_saas_discovery_001: the oracle passes; guessing the plan without the pricing docs fails RA and PC."""

from __future__ import annotations

from harness.agents.text_agents import AgentTurn, ScriptedAgent, ToolCallRequest
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

TASK = DEMO_DATA / "tasks" / "demo_saas_discovery_001"
SEAT_TURN = 3  # searches the seat rules, records the seat count
PRICING_TURN = 5  # searches the pricing, records budget, tier and cost


async def _run(edit: dict[int, AgentTurn] | None = None) -> TextSessionResult:
    bundle = load_task(TASK)
    turns = list(ScriptedAgent.oracle(bundle.policy)._turns)
    for index, turn in (edit or {}).items():
        turns[index] = turn
    return await run_text_session(bundle, ScriptedAgent("scripted", turns), InProcessEnvironment(bundle.public_bundle()))


async def test_oracle_passes_with_both_pricing_documents_retrieved():
    result = await _run()
    assert result.pts == 1, result.grade.explain()
    assert result.grade.components == {"GS": True, "PC": True, "RA": True, "WA": True}
    top_hits = [search.hits[0] for search in result.snapshot.search_log]
    assert top_hits == ["KB-SEAT-RULES", "KB-PRICING-2026"]  # each answer comes from its own document


async def test_skipping_the_lookup_and_guessing_starter_fails_retrieval_and_the_tier_gate():
    bundle = load_task(TASK)
    seat_turn, pricing_turn = bundle.policy.turns[SEAT_TURN], bundle.policy.turns[PRICING_TURN]
    guessed_seats = AgentTurn(
        text=seat_turn.text, tool_calls=[ToolCallRequest("update_crm", {"fields": {"seat_count": 12}})]
    )
    guessed_plan = AgentTurn(
        text=pricing_turn.text,
        tool_calls=[
            ToolCallRequest(
                "update_crm",
                {"fields": {"monthly_budget": 1500.0, "recommended_tier": "starter", "estimated_monthly_cost": 348.0}},
            )
        ],
    )
    result = await _run({SEAT_TURN: guessed_seats, PRICING_TURN: guessed_plan})
    assert result.grade.components["RA"] is False
    assert "retrieved_pricing_and_seat_rules" in result.grade.failed_required_actions
    assert result.grade.components["PC"] is False
    assert "tier_supported_by_pricing" in result.grade.critical_gate_failures
    assert result.grade.components["WA"] is False
    assert result.pts == 0
