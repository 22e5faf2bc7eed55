"""SimulatedUser facade driven like the runners drive it, on both reference fixtures."""

from __future__ import annotations

import yaml

from harness.tasks.models import Condition, EventProgram, ReferencePolicy
from harness.user.flow_engine import Observation
from harness.user.recovery import RecoveryMove
from harness.user.simulator import SimulatedUser
from tests.conftest import TOY_FORM, TOY_INTERVIEW
from tests.test_user_parts import read_user_side

# What the toy form's environment answers to the oracle's tool calls (only the shape the user reads).
TOOL_RESULTS = {
    "update_expense": {"artifact_id": "expense_1"},
    "request_approval": {
        "status": "awaiting_approval",
        "requested_action": "submit_expense",
        "target_id": "expense_1",
    },
    "submit_expense": {"action_type": "submit_expense", "target_id": "expense_1", "status": "COMMITTED"},
}


def _oracle_session(user: SimulatedUser, policy: ReferencePolicy) -> list[str]:
    """Alternate user and oracle beats as the text runner does; return the user's utterances."""
    spoken: list[str] = []
    obs, media_ms = Observation(), 0
    for turn in policy.turns:
        spoken += [user.realize(plan).text for plan in user.next_plans(obs)]
        acts = [a.key for a in user.hear_agent_text(turn.text)]
        mutations, commits, approvals = [], [], []
        for call in turn.tool_calls:
            acts += [a.key for a in user.see_tool_call(call.name, TOOL_RESULTS[call.name])]
            mutations += [f"expense_1.{f}" for f in call.args.get("fields", {})]
            commits += ["submit_expense"] if call.name == "submit_expense" else []
            approvals += ["submit_expense"] if call.name == "request_approval" else []
        media_ms += 2000
        fired = user.fire_events(
            act_keys=acts,
            tool_calls=[c.name for c in turn.tool_calls],
            artifact_mutations=mutations,
            commit_attempts=commits,
            media_time_ms=media_ms,
            time_triggers=True,
        )
        obs = Observation(
            media_time_ms=media_ms,
            new_act_keys=acts,
            tool_calls=[c.name for c in turn.tool_calls],
            artifact_mutations=mutations,
            commit_attempts=commits,
            approval_requests=approvals,
            fired_events=[e.event_id for e in fired],
            repetition_counts=dict(user.repetition_counts),
        )
    return spoken


def _policy(task_dir) -> ReferencePolicy:
    return ReferencePolicy.model_validate(
        yaml.safe_load((task_dir / "reference" / "policy.yaml").read_text())
    )


def test_toy_form_oracle_hears_the_c0_wording_and_reaches_done():
    user = SimulatedUser(read_user_side(TOY_FORM), condition="C0")
    spoken = _oracle_session(user, _policy(TOY_FORM))
    assert spoken == [
        "Hello \u2014 there.",
        "E1042.",
        "It's client onsite.",
        "CC-330.",
        "It's 240.0.",
        "No \u2014 200.0.",
        "Approved, please proceed.",
    ]
    assert user.done and user.leakage_violations == []
    assert user.scenario_id == "toy_form_001@1.0.0:C0:FROZEN_SYNTHETIC"
    assert user.events.fired == {"evt_correct_total": 10000}
    assert {
        "CONFIRM:total_amount",
        "REQUEST_APPROVAL:expense_1",
        "COMMIT:submit_expense",
    } <= user.observed_act_keys


def test_interview_in_c2_with_an_enum_condition():
    user = SimulatedUser(read_user_side(TOY_INTERVIEW), condition=Condition.C2)
    texts = []
    for agent_text in ("", "Tell me about your technical work.", "And your leadership experience?"):
        obs = Observation(new_act_keys=[a.key for a in user.hear_agent_text(agent_text)])
        texts += [user.realize(p).text for p in user.next_plans(obs)]
    assert texts == [
        "Hi, there.",
        "Built a payments service; Scaled it to 1M users.",
        "Led a team of six engineers.",
    ]
    assert user.done and user.scenario_id.endswith(":C2:FROZEN_SYNTHETIC")


def test_fired_fact_updates_become_the_users_current_values():
    side = read_user_side(TOY_FORM)
    side.events = EventProgram.model_validate(
        {
            "events": [
                {
                    "id": "evt_fix",
                    "type": "DELAYED_CORRECTION",
                    "trigger": {"agent_act": "ASK:total_amount"},
                    "fact_updates": {"total_amount": 180.0},
                }
            ]
        }
    )
    user = SimulatedUser(side, condition="C0")
    (event,) = user.fire_events(
        act_keys=["ASK:total_amount"],
        tool_calls=[],
        artifact_mutations=[],
        commit_attempts=[],
        media_time_ms=0,
        time_triggers=False,
    )
    assert event.event_id == "evt_fix"
    assert user.users.current_value_for("total_amount") == 180.0
    assert user.users.can_reveal("total_amount__v_evt_evt_fix")


def test_realize_returns_none_for_a_plan_missing_from_the_bank():
    side = read_user_side(TOY_FORM)
    del side.realization_bank["open"]
    user = SimulatedUser(side, condition="C0")
    (plan,) = user.next_plans(Observation())
    assert plan.id == "open" and user.realize(plan) is None


def test_recover_restates_the_asked_answer_and_marks_it_revealed():
    user = SimulatedUser(read_user_side(TOY_FORM), condition="C2")
    user.next_plans(Observation())
    decision = user.recover(["ASK:cost_center"])
    assert (decision.move, decision.answer.plan_id, decision.text) == (
        RecoveryMove.RESTATE,
        "ans_cc",
        "It's CC-330.",
    )
    assert "cost_center" in user.users.revealed
