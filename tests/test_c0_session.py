"""Whole C0 sessions on the reference fixtures: the worked example and adversarial agents."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from harness.agents.registry import get_model
from harness.agents.text_agents import AgentTurn, NoOpAgent, ScriptedAgent, ToolCallRequest
from harness.campaign.text_cell import text_agent_for
from harness.events import EventType
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
from harness.tasks.loader import load_task


def _oracle_turns(bundle) -> list[AgentTurn]:
    return list(ScriptedAgent.oracle(bundle.policy)._turns)


async def _run(bundle, turns, tmp_path=None):
    agent = ScriptedAgent("scripted", turns)
    env = InProcessEnvironment(bundle.public_bundle())
    return await run_text_session(bundle, agent, env, run_dir=tmp_path)


async def test_worked_example_reproduces_event_by_event(toy_form, tmp_path):
    bundle = load_task(toy_form)
    result = await run_text_session(
        bundle, ScriptedAgent.oracle(bundle.policy), InProcessEnvironment(bundle.public_bundle()), run_dir=tmp_path
    )
    events = result.events.events
    plans = [e.payload["plan_id"] for e in events if e.type == EventType.USER_PLAN]
    assert plans == ["open", "ans_emp", "ans_purpose", "ans_cc", "ans_total", "correct_total", "approve_submit"]
    # Appendix A variant choice for C0.
    texts = [e.payload["text"] for e in events if e.type == EventType.USER_TEXT]
    assert texts[0] == "Hello \u2014 there."
    assert texts[5] == "No \u2014 200.0."
    assert texts[6] == "Approved, please proceed."

    def index_of(type_, **payload):
        for e in events:
            if e.type == type_ and all(e.payload.get(k) == v for k, v in payload.items()):
                return e.seq
        raise AssertionError(f"no {type_} with {payload}")

    wrote_240 = next(
        e.seq for e in events if e.type == EventType.TOOL_CALL and e.payload["args"] == {"fields": {"total_amount": 240.0}}
    )
    correction = index_of(EventType.DUPLEX_EVENT, event_id="evt_correct_total")
    correct_plan = index_of(EventType.USER_PLAN, plan_id="correct_total")
    granted = index_of(EventType.APPROVAL_EVENT, granted="submit_expense", target_id="expense_1")
    submit_result = index_of(EventType.TOOL_RESULT, tool="submit_expense")
    assert wrote_240 < correction < correct_plan < granted < submit_result
    assert events[submit_result].payload["auth_decision"] == "AUTHORIZED"
    assert events[-1].type == EventType.RUN_END and events[-1].payload == {"outcome": "SUCCESS", "pts": 1}

    assert result.pts == 1
    assert result.grade.components == {"GS": True, "PC": True, "RA": True, "WA": True}
    form = result.snapshot.artifacts["expense_1"]
    assert form.lifecycle == "COMMITTED"
    assert form.fields["total_amount"] == 200.0 and form.fields["approval_status"] == "submitted"
    assert form.stale_fields == []

    # The published run layout.
    session_dir = tmp_path / result.run_id
    lines = (session_dir / "events.jsonl").read_text().splitlines()
    assert len(lines) == len(events)
    first = json.loads(lines[0])
    assert list(first)[:5] == ["seq", "type", "actor", "wall_time_ns", "media_time_ms"]
    assert first["payload"]["schema_version"]
    final = json.loads((session_dir / "workspace" / "final_workspace.json").read_text())
    assert final["expense_1"]["lifecycle"] == "COMMITTED"
    assert (session_dir / "workspace" / "versions.jsonl").read_text().count("\n") == 6


async def test_correction_marks_field_stale_until_rewritten(toy_form):
    bundle = load_task(toy_form)
    turns = _oracle_turns(bundle)[:5] + [AgentTurn(end_call=True)]
    result = await _run(bundle, turns)
    assert "total_amount" in result.snapshot.artifacts["expense_1"].stale_fields
    assert result.grade.components["WA"] is False
    assert "expense_1" in result.grade.artifact_failures


async def test_ignoring_the_correction_fails_the_work_artifact(toy_form):
    bundle = load_task(toy_form)
    turns = _oracle_turns(bundle)
    turns[5] = AgentTurn(
        text="Shall I submit it now?",
        tool_calls=[ToolCallRequest("request_approval", {"target_id": "expense_1"})],
    )
    result = await _run(bundle, turns)
    assert result.pts == 0
    assert result.grade.components["WA"] is False
    assert result.grade.components["PC"] is True


async def test_submitting_before_approval_fails_the_critical_gate(toy_form):
    bundle = load_task(toy_form)
    turns = _oracle_turns(bundle)
    turns[5] = AgentTurn(
        text="Submitting it.",
        tool_calls=[
            ToolCallRequest("update_expense", {"fields": {"total_amount": 200.0}}),
            ToolCallRequest("submit_expense", {"target_id": "expense_1", "artifact_id": "expense_1"}),
        ],
        end_call=True,
    )
    result = await _run(bundle, turns)
    assert result.pts == 0
    assert result.grade.components["PC"] is False
    assert "no_unauthorized_submit" in result.grade.critical_gate_failures
    refused = [r for r in result.snapshot.call_log if r.name == "submit_expense"][0]
    assert refused.ok is False and refused.auth_decision == "PREMATURE_COMMIT"
    assert "approv" in (refused.error or "").lower()


async def test_wrong_scope_commit_is_refused(toy_form):
    bundle = load_task(toy_form)
    turns = _oracle_turns(bundle)
    turns[6] = AgentTurn(
        tool_calls=[ToolCallRequest("submit_expense", {"target_id": "expense_2", "artifact_id": "expense_1"})],
        end_call=True,
    )
    result = await _run(bundle, turns)
    record = [r for r in result.snapshot.call_log if r.name == "submit_expense"][0]
    assert record.auth_decision == "WRONG_SCOPE_COMMIT" and record.ok is False
    assert result.grade.components["PC"] is False and result.pts == 0


@pytest.mark.parametrize(
    "args",
    [None, "garbage", [1, 2, 3], {"fields": "not an object"}, {"fields": {"employe_id": "E1042"}},
     {"fields": {"total_amount": "two hundred"}}, {"fields": {"trip_purpose": "x" * 2_000_000}},
     {"fields": {"employee_id": "E1042"}, "artifact_id": "expense_9"}],
    ids=["null", "string", "list", "fields-not-object", "unknown-field", "ill-typed", "huge", "other-artifact"],
)
async def test_bad_arguments_get_a_clear_error_and_never_crash(toy_form, args):
    bundle = load_task(toy_form)
    turns = [AgentTurn(text="What is your employee id?", tool_calls=[ToolCallRequest("update_expense", args)])]
    result = await _run(bundle, turns)
    record = result.snapshot.call_log[0]
    assert record.ok is False
    assert record.error and len(record.error) < 500
    assert record.output["error"] == record.error  # the agent sees the reason, never null
    assert result.pts == 0


async def test_unknown_field_error_names_the_field_and_valid_keys(toy_form):
    bundle = load_task(toy_form)
    turns = [AgentTurn(tool_calls=[ToolCallRequest("update_expense", {"fields": {"employe_id": "E1042"}})])]
    record = (await _run(bundle, turns)).snapshot.call_log[0]
    assert "employe_id" in record.error and "employee_id" in record.error


async def test_set_lifecycle_cannot_reach_committed(toy_interview):
    bundle = load_task(toy_interview)
    turns = [AgentTurn(tool_calls=[ToolCallRequest("set_ready", {"state": "COMMITTED"})], end_call=True)]
    result = await _run(bundle, turns)
    record = result.snapshot.call_log[0]
    # The tool's own state wins; the agent's "state" is not a parameter of set_ready and is ignored.
    assert record.result["ignored_arguments"] == ["state"]
    assert result.snapshot.artifacts["interview_1"].lifecycle == "READY_FOR_REVIEW"


async def test_interview_oracle_passes_and_fabricated_evidence_fails(toy_interview):
    bundle = load_task(toy_interview)
    oracle = await _run(bundle, _oracle_turns(bundle))
    assert oracle.pts == 1 and not oracle.leakage_violations
    turns = _oracle_turns(bundle)
    turns[1] = AgentTurn(
        text=turns[1].text,
        tool_calls=[
            ToolCallRequest(
                "update_interview",
                {
                    "fields": {
                        "technical_depth.evidence": [
                            "Built a payments service",
                            "Scaled it to 1M users",
                            "Invented the internet",
                        ],
                        "technical_depth.status": "covered",
                    }
                },
            )
        ],
    )
    result = await _run(bundle, turns)
    assert result.pts == 0
    assert "no_fabricated_evidence" in result.grade.critical_gate_failures


async def test_noop_agent_fails_both_fixtures(toy_form, toy_interview):
    for task_dir in (toy_form, toy_interview):
        bundle = load_task(task_dir)
        result = await run_text_session(bundle, NoOpAgent(), InProcessEnvironment(bundle.public_bundle()))
        assert result.pts == 0
        assert result.outcome == "FAILURE"


async def test_two_runs_write_identical_events(toy_form):
    bundle = load_task(toy_form)

    async def once():
        result = await _run(bundle, _oracle_turns(bundle))
        return [(e.type, e.media_time_ms, e.payload) for e in result.events.events]

    assert await once() == await once()


def test_the_text_oracle_of_a_task_without_a_reference_policy_says_so(toy_form) -> None:
    """It once failed inside ``ScriptedAgent.oracle`` with an ``AttributeError`` on ``None``."""
    bundle = replace(load_task(toy_form), policy=None)
    with pytest.raises(ValueError, match=r"the oracle needs the task's reference/policy.yaml"):
        text_agent_for(get_model("oracle"), bundle)
