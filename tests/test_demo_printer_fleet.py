"""The printer-fleet troubleshooting demo: the oracle passes in C0 (its low-risk spooler restart
runs without approval and changes the world), and an agent that skips the policy search and
guesses the ticket priority fails RA (gold documents, priority/queue consistency) and WA."""

from __future__ import annotations

from harness.agents.text_agents import AgentTurn, ScriptedAgent, ToolCallRequest
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import TextSessionResult, run_text_session
from harness.tasks.bundle import TaskBundle
from harness.tasks.loader import load_task
from tests.conftest import DEMO_DATA

TASK_DIR = DEMO_DATA / "tasks" / "demo_printer_fleet_troubleshoot_001"
TRIAGE_TURN = 5  # records the test results, searches both policies and sets priority and queue


async def _run(bundle: TaskBundle, agent: ScriptedAgent) -> TextSessionResult:
    return await run_text_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()))


async def test_oracle_restarts_the_spooler_and_escalates_per_policy():
    bundle = load_task(TASK_DIR)
    result = await _run(bundle, ScriptedAgent.oracle(bundle.policy))
    assert result.pts == 1, result.grade.explain()
    assert result.snapshot.state["PS-HQ-02"]["spooler_status"] == "running"
    restart = next(call for call in result.snapshot.call_log if call.name == "restart_print_spooler")
    assert restart.auth_decision == "AUTHORIZED"
    assert not result.snapshot.approval_log  # low-risk execution: nobody was asked
    ticket = result.snapshot.artifacts["ticket_1"].fields
    assert (ticket["priority"], ticket["escalation_queue"]) == ("P2", "onsite_dispatch_same_day")


async def test_guessing_the_priority_without_the_policies_fails_ra_and_wa():
    bundle = load_task(TASK_DIR)
    turns = list(ScriptedAgent.oracle(bundle.policy)._turns)
    triage = turns[TRIAGE_TURN]
    guessed = {
        "impact": "medium", "urgency": "medium", "priority": "P3",
        "escalation_queue": "onsite_dispatch_scheduled", "policy_refs": [],
    }
    turns[TRIAGE_TURN] = AgentTurn(
        text=triage.text.replace("P2", "P3").replace("same-day on-site visit", "scheduled visit"),
        tool_calls=[
            *[call for call in triage.tool_calls if call.name not in {"kb_search", "update_ticket"}],
            triage.tool_calls[1],
            ToolCallRequest("update_ticket", {"fields": guessed}),
        ],
    )
    result = await _run(bundle, ScriptedAgent("guesses-priority", turns))
    assert result.grade.components == {"GS": True, "PC": True, "RA": False, "WA": False}
    assert set(result.grade.failed_required_actions) == {
        "retrieved_priority_and_routing_policies", "priority_and_queue_follow_policy",
    }
    wrong = {row.field for row in result.grade.fields if row.score < 1.0}
    assert {"priority", "escalation_queue"} <= wrong
