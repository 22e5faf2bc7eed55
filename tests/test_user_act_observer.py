"""Act observer: regex patterns over agent text, tool→act map, repetition counts."""

from __future__ import annotations

import pytest

from harness.tasks.models import ObserverSpec
from harness.user.act_observer import ActObserver, ObservedAct
from tests.conftest import TOY_FORM, TOY_INTERVIEW
from tests.test_user_parts import read_user_side


def _observer(task_dir) -> ActObserver:
    return ActObserver(read_user_side(task_dir).observer)


def _keys(acts: list[ObservedAct]) -> list[str]:
    return [a.key for a in acts]


def test_patterns_match_case_insensitively_and_every_match_counts():
    observer = _observer(TOY_FORM)
    assert _keys(observer.observe_text("What is your EMPLOYEE ID?")) == ["ASK:employee_id"]
    assert _keys(observer.observe_text("Total amount? I mean the total amount.")) == ["ASK:total_amount"] * 2
    assert observer.observe_text("Thanks!") == []


def test_named_groups_supply_field_and_value():
    spec = ObserverSpec(patterns=[{"act": "CONFIRM", "pattern": r"your (?P<field>\w+) is (?P<value>\d+)"}])
    (act,) = ActObserver(spec).observe_text("So your badge is 1234, right?")
    assert act == ObservedAct(act="CONFIRM", field="badge", source="pattern", value="1234")
    assert act.key == "CONFIRM:badge"


def test_pattern_without_field_gives_a_bare_act_key():
    (act,) = ActObserver(ObserverSpec(patterns=[{"act": "GREET", "pattern": "hello"}])).observe_text("Hello")
    assert act.key == "GREET"


@pytest.mark.parametrize(
    ("task_dir", "tool", "result", "key"),
    [
        (
            TOY_FORM,
            "request_approval",
            {"status": "awaiting_approval", "requested_action": "submit_expense", "target_id": "expense_1"},
            "REQUEST_APPROVAL:expense_1",
        ),
        (
            TOY_FORM,
            "submit_expense",
            {"action_type": "submit_expense", "target_id": "expense_1"},
            "COMMIT:submit_expense",
        ),
        (
            TOY_INTERVIEW,
            "update_interview",
            {"artifact_id": "interview_1", "version": 2},
            "RECORD:interview_1",
        ),
        (TOY_FORM, "submit_expense", None, "COMMIT"),
    ],
)
def test_tool_acts_take_their_field_from_the_result(task_dir, tool, result, key):
    (act,) = _observer(task_dir).observe_tool(tool, result)
    assert (act.key, act.source) == (key, "tool")


def test_unmapped_tool_yields_nothing_and_is_not_logged():
    observer = _observer(TOY_FORM)
    assert observer.observe_tool("update_expense", {"artifact_id": "expense_1"}) == []
    assert observer.log == []


def test_repetition_counts_count_log_entries_containing_the_key():
    observer = _observer(TOY_FORM)
    observer.observe_text("Employee id? Your employee id please.")
    observer.observe_text("Sorry, the employee id and the cost center?")
    observer.observe_tool("submit_expense", {"action_type": "submit_expense"})
    assert observer.repetition_counts == {
        "ASK:employee_id": 2,
        "ASK:cost_center": 1,
        "COMMIT:submit_expense": 1,
    }
    assert [e["kind"] for e in observer.log] == ["text", "text", "tool"]
    assert observer.log[2] == {"kind": "tool", "tool": "submit_expense", "acts": ["COMMIT:submit_expense"]}


def test_invalid_regex_is_a_load_time_error_naming_the_pattern():
    with pytest.raises(ValueError, match=r"act 'ASK'.*'\(unclosed'"):
        ActObserver(ObserverSpec(patterns=[{"act": "ASK", "field": "x", "pattern": "(unclosed"}]))
