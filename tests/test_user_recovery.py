"""Recovery planner (§4.9): re-statements, volunteering, closing, finalize prompts, nudge budget."""

from __future__ import annotations

from harness.tasks.models import FlowSpec
from harness.tasks.runner_lines import FINALIZE_LINE, NUDGE_LINE, TEXT_CLOSING_LINE, closing_line
from harness.user.realization import Utterance
from harness.user.recovery import FieldAnswer, RecoveryMove, RecoveryPlanner, field_answers
from tests.conftest import TOY_FORM
from tests.test_user_parts import read_user_side

FLOW = FlowSpec.model_validate(
    {
        "states": {
            "START": {
                "transitions": [
                    {"when": {"agent_act": "ASK:a"}, "do": {"act": "ANSWER", "facts": ["fa"]}, "next": "S_A"}
                ]
            },
            "S_A": {
                "transitions": [
                    {
                        "when": {"agent_act": "ASK:b"},
                        "do": {"act": "ANSWER", "plan_id": "ans_b", "facts": ["fb"]},
                        "next": "S_B",
                    },
                    {
                        "when": {"agent_act": "ASK_OPEN:c"},
                        "do": {"act": "ANSWER", "facts": ["fc"]},
                        "next": "S_B",
                    },
                    {"when": {"agent_act": "ASK:d"}, "do": {"act": "CLARIFY"}, "next": "S_B"},
                ]
            },
            "S_B": {"terminal": True},
        }
    }
)


def _realize(plan_id: str) -> Utterance | None:
    return Utterance(plan_id, f"{plan_id}#v1", f"text of {plan_id}", "ANSWER")


def _decide(planner: RecoveryPlanner, acts=(), revealed=(), realize=_realize):
    return planner.decide(last_act_keys=list(acts), revealed=set(revealed), realize=realize)


def test_field_answers_keep_flow_order_and_default_plan_ids():
    assert field_answers(FLOW) == {
        "a": FieldAnswer("a", "S_A:ANSWER", ("fa",)),
        "b": FieldAnswer("b", "ans_b", ("fb",)),
    }


def test_toy_form_field_answers():
    answers = field_answers(read_user_side(TOY_FORM).flow)
    assert [(a.field, a.plan_id) for a in answers.values()] == [
        ("employee_id", "ans_emp"),
        ("trip_purpose", "ans_purpose"),
        ("cost_center", "ans_cc"),
        ("total_amount", "ans_total"),
    ]


def test_asked_field_is_restated_at_most_twice_then_volunteering_moves_on():
    planner = RecoveryPlanner(field_answers(FLOW), closing="bye")
    for _ in range(2):
        decision = _decide(planner, acts=["ASK:b"], revealed=["fb"])
        assert (decision.move, decision.answer.plan_id, decision.text) == (
            RecoveryMove.RESTATE,
            "ans_b",
            "text of ans_b",
        )
    decision = _decide(planner, acts=["ASK:b"], revealed=["fb"])
    assert (decision.move, decision.answer.field, decision.variant_id) == (
        RecoveryMove.RESTATE,
        "a",
        "S_A:ANSWER#v1",
    )
    assert planner.restatements == {"b": 2, "a": 1}


def test_unanswered_means_fact_ids_not_revealed():
    planner = RecoveryPlanner(field_answers(FLOW), closing="bye")
    assert _decide(planner, revealed=["fa"]).answer.field == "b"


def test_all_answered_closes_once_then_ends():
    planner = RecoveryPlanner(field_answers(FLOW), closing=closing_line(1))
    first = _decide(planner, revealed=["fa", "fb"])
    assert (first.move, first.text) == (
        RecoveryMove.CLOSE,
        "That's all I needed. Thanks a lot, appreciate it!",
    )
    assert _decide(planner, revealed=["fa", "fb"]).move is RecoveryMove.END


def test_text_condition_finalizes_twice_before_its_own_closing():
    planner = RecoveryPlanner.for_condition(FLOW, "C0")
    moves = [_decide(planner, revealed=["fa", "fb"]) for _ in range(4)]
    assert [(d.move, d.text) for d in moves] == [
        (RecoveryMove.FINALIZE, FINALIZE_LINE),
        (RecoveryMove.FINALIZE, FINALIZE_LINE),
        (RecoveryMove.CLOSE, TEXT_CLOSING_LINE),
        (RecoveryMove.END, None),
    ]


def test_without_variants_the_user_nudges_three_times_then_ends():
    planner = RecoveryPlanner.for_condition(FLOW, "C2")
    moves = [_decide(planner, acts=["ASK:a"], realize=lambda _pid: None) for _ in range(4)]
    assert [(d.move, d.text) for d in moves] == [(RecoveryMove.NUDGE, NUDGE_LINE)] * 3 + [
        (RecoveryMove.END, None)
    ]
