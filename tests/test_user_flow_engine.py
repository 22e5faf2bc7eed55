"""Flow engine: the §5.7 worked example, reveal gating, one-shot tokens and the drain loop."""

from __future__ import annotations

import pytest

from harness.tasks.models import FlowSpec, UserState
from harness.user.flow_engine import Observation, UserFlowEngine
from harness.user.user_state_manager import UserStateManager
from tests.conftest import TOY_FORM
from tests.test_user_parts import read_user_side


def _toy_form_engine() -> tuple[UserFlowEngine, UserStateManager]:
    side = read_user_side(TOY_FORM)
    users = UserStateManager(side.user_state)
    return UserFlowEngine(side.flow, users), users


def _engine(flow: dict, facts: list[dict] | None = None) -> UserFlowEngine:
    users = UserStateManager(UserState(user_id="u", facts=facts or []))
    return UserFlowEngine(FlowSpec.model_validate(flow), users)


def _ids(plans) -> list[str]:
    return [p.id for p in plans]


def test_toy_form_worked_example_sequence():
    engine, users = _toy_form_engine()
    beats = [
        (Observation(), "open", []),
        (Observation(new_act_keys=["ASK:employee_id"]), "ans_emp", ["employee_id"]),
        (Observation(new_act_keys=["ASK:trip_purpose"]), "ans_purpose", ["trip_purpose"]),
        (Observation(new_act_keys=["ASK:cost_center"]), "ans_cc", ["cost_center"]),
        (Observation(new_act_keys=["ASK:total_amount"]), "ans_total", ["total_amount"]),
        (
            Observation(new_act_keys=["CONFIRM:total_amount"], fired_events=["evt_correct_total"]),
            "correct_total",
            ["total_amount_v2"],
        ),
        (
            Observation(new_act_keys=["REQUEST_APPROVAL:expense_1"], approval_requests=["submit_expense"]),
            "approve_submit",
            [],
        ),
    ]
    for obs, plan_id, facts in beats:
        assert not engine.done
        plans = engine.drain(obs)
        assert [(p.id, p.fact_ids) for p in plans] == [(plan_id, facts)]
    assert engine.done and engine.current == "S_DONE"
    assert engine.drain(Observation()) == []
    assert engine.leakage_violations == []
    assert _ids(engine.plan_log) == [b[1] for b in beats]
    assert users.revealed == {"employee_id", "trip_purpose", "cost_center", "total_amount", "total_amount_v2"}
    assert engine.observed_act_keys >= {
        "ASK:employee_id",
        "CONFIRM:total_amount",
        "REQUEST_APPROVAL:expense_1",
    }


def test_correction_plan_carries_barge_in_and_event():
    engine, _ = _toy_form_engine()
    for key in ("", "ASK:employee_id", "ASK:trip_purpose", "ASK:cost_center", "ASK:total_amount"):
        engine.drain(Observation(new_act_keys=[key] if key else []))
    (plan,) = engine.drain(Observation(fired_events=["evt_correct_total"]))
    assert (plan.speech_act, plan.floor_action, plan.event_id, plan.state_id) == (
        "CORRECT",
        "BARGE_IN",
        "evt_correct_total",
        "S_CORRECTED",
    )


def test_corrected_total_is_revealable_only_after_the_event_fired():
    engine, users = _toy_form_engine()
    engine.drain(Observation(new_act_keys=["ASK:total_amount"]))
    assert users.can_reveal("total_amount") and not users.can_reveal("total_amount_v2")
    engine.step(Observation(fired_events=["evt_correct_total"]))
    assert users.can_reveal("total_amount_v2")


def test_leaking_plan_is_stripped_and_recorded():
    facts = [
        {"id": "secret", "value": 7, "reveal": {"events": ["evt_x"]}},
        {"id": "asked", "value": 1, "reveal": {"agent_acts": ["ASK:asked"]}},
    ]
    flow = {
        "states": {
            "START": {
                "transitions": [
                    {
                        "when": {"agent_act": "ASK:asked"},
                        "do": {"act": "ANSWER", "plan_id": "ans", "facts": ["asked", "secret"]},
                        "next": "END",
                    }
                ]
            },
            "END": {"terminal": True},
        }
    }
    engine = _engine(flow, facts)
    (plan,) = engine.drain(Observation(new_act_keys=["ASK:asked"]))
    assert plan.fact_ids == ["asked"]
    assert engine.leakage_violations == ["ans attempted to reveal ineligible fact 'secret'"]


APPROVAL_LOOP = {
    "states": {
        "START": {
            "transitions": [
                {
                    "when": {"approval_request": "pay"},
                    "do": {"act": "APPROVE", "plan_id": "ok"},
                    "next": "START",
                }
            ]
        }
    }
}


def test_approval_transition_fires_once_per_request_and_rearms_after_it_disappears():
    engine = _engine(APPROVAL_LOOP)
    asked = Observation(approval_requests=["pay"])
    assert _ids(engine.drain(asked)) == ["ok"]  # self-loop: the token stops a second plan
    assert engine.drain(asked) == []  # the request is still pending: no re-fire
    assert engine.drain(Observation()) == []  # request gone: token re-armed
    assert _ids(engine.drain(asked)) == ["ok"]


def test_event_transition_is_permanently_one_shot():
    flow = {
        "states": {
            "START": {
                "transitions": [
                    {
                        "when": {"external_event": "e1"},
                        "do": {"act": "CORRECT", "plan_id": "fix"},
                        "next": "START",
                    }
                ]
            }
        }
    }
    engine = _engine(flow)
    assert _ids(engine.drain(Observation(fired_events=["e1"]))) == ["fix"]
    engine.drain(Observation())
    assert engine.drain(Observation(fired_events=["e1"])) == []


def test_self_loops_guarded_by_fact_unrevealed_answer_bundled_questions_in_one_beat():
    facts = [{"id": f, "value": f.upper(), "reveal": {"agent_acts": [f"ASK:{f}"]}} for f in ("a", "b")]
    flow = {
        "states": {
            "Q": {
                "transitions": [
                    {
                        "when": {"agent_act": f"ASK:{f}", "fact_unrevealed": f},
                        "do": {"act": "ANSWER", "plan_id": f"ans_{f}", "facts": [f]},
                        "next": "Q",
                    }
                    for f in ("a", "b")
                ]
            }
        },
        "start": "Q",
    }
    engine = _engine(flow, facts)
    assert _ids(engine.drain(Observation(new_act_keys=["ASK:a", "ASK:b"]))) == ["ans_a", "ans_b"]
    assert engine.drain(Observation(new_act_keys=["ASK:a"])) == []


def test_drain_respects_its_limit():
    engine = _engine(
        {"states": {"START": {"transitions": [{"when": {}, "do": {"act": "BACKCHANNEL"}, "next": "START"}]}}}
    )
    assert _ids(engine.drain(Observation(), limit=3)) == ["START:BACKCHANNEL"] * 3


def test_transition_without_do_emits_the_entered_states_on_enter_with_default_id():
    flow = {
        "states": {
            "START": {"transitions": [{"when": {"agent_act": "END_CALL"}, "next": "BYE"}]},
            "BYE": {"on_enter": {"act": "END"}, "terminal": True},
        }
    }
    engine = _engine(flow)
    (plan,) = engine.drain(Observation(new_act_keys=["END_CALL"]))
    assert (plan.id, plan.state_id) == ("BYE:END", "BYE")
    assert engine.done and engine.drain(Observation()) == []


def test_barge_arming_events_of_toy_form():
    engine, _ = _toy_form_engine()
    assert engine.barge_arming_events() == {"evt_correct_total"}


@pytest.mark.parametrize(
    ("flow", "message"),
    [
        ({"start": "NOPE", "states": {"START": {}}}, "start state 'NOPE'"),
        ({"states": {"START": {"transitions": [{"when": {}, "next": "GONE"}]}}}, "next 'GONE'"),
    ],
)
def test_inconsistent_flow_is_rejected_with_the_bad_state_named(flow, message):
    with pytest.raises(ValueError, match=message):
        _engine(flow)
