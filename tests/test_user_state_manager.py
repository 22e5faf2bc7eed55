"""Hidden user state: reveal rules, event corrections and supersession chains."""

from __future__ import annotations

import pytest

from harness.tasks.models import UserState
from harness.user.user_state_manager import UserStateManager


def _users() -> UserStateManager:
    return UserStateManager(
        UserState.model_validate(
            {
                "user_id": "u",
                "facts": [
                    {"id": "name", "value": "Ada", "reveal": {"may_volunteer": True}},
                    {"id": "phone", "value": "555", "reveal": {"agent_acts": ["ASK:phone"]}},
                    {"id": "budget", "value": 10, "reveal": {"events": ["evt_budget"]}},
                    {"id": "deadline", "value": "Friday", "reveal": {"on_state": ["S_PLAN"]}},
                    {
                        "id": "budget_v2",
                        "value": 12,
                        "supersedes": "budget",
                        "reveal": {"events": ["evt_budget"]},
                    },
                ],
            }
        )
    )


def test_each_reveal_rule_licenses_its_fact():
    users = _users()
    assert users.can_reveal("name")
    assert not any(users.can_reveal(f) for f in ("phone", "budget", "deadline", "unknown"))
    users.context.observed_acts.add("ASK:phone")
    users.context.fired_events.add("evt_budget")
    users.context.entered_states.add("S_PLAN")
    assert all(users.can_reveal(f) for f in ("phone", "budget", "deadline"))


def test_current_value_follows_the_supersession_chain():
    users = _users()
    assert users.superseded == {"budget"}
    assert users.current_value_for("budget") == 12
    new_id = users.add_event_fact("budget_v2", "evt_late", 15)
    assert new_id == "budget_v2__v_evt_evt_late"
    assert users.current_value_for("budget") == 15
    assert users.superseded == {"budget", "budget_v2"}


def test_event_fact_is_revealable_once_its_event_fired():
    users = _users()
    new_id = users.add_event_fact("phone", "evt_new_phone", "556")
    assert not users.can_reveal(new_id)
    users.context.fired_events.add("evt_new_phone")
    assert users.can_reveal(new_id)


def test_unknown_facts_are_named_in_errors():
    users = _users()
    with pytest.raises(KeyError, match="no fact 'salary'"):
        users.current_value_for("salary")
    with pytest.raises(ValueError, match="event 'evt_x' updates fact 'salary'"):
        users.add_event_fact("salary", "evt_x", 1)
