"""Event engine: §2.8 firing rules (once, consulted trigger fields only, time triggers)."""

from __future__ import annotations

import pytest

from harness.tasks.models import EventProgram
from harness.user.event_engine import EventEngine
from tests.conftest import TOY_FORM
from tests.test_user_parts import read_user_side

QUIET = {"act_keys": [], "tool_calls": [], "artifact_mutations": [], "commit_attempts": []}


def _beat(**overrides):
    return {**QUIET, "media_time_ms": 0, "time_triggers": False, **overrides}


def _engine(*events: dict) -> EventEngine:
    return EventEngine(EventProgram.model_validate({"events": list(events)}))


def test_confirming_the_total_fires_the_correction_once():
    engine = EventEngine(read_user_side(TOY_FORM).events)
    assert engine.fire(**_beat(act_keys=["ASK:total_amount"], media_time_ms=8000)) == []
    (event,) = engine.fire(**_beat(act_keys=["CONFIRM:total_amount"], media_time_ms=10000))
    assert (event.event_id, event.type, event.media_time_ms) == (
        "evt_correct_total",
        "MID_SPEECH_CORRECTION",
        10000,
    )
    assert event.stale_fields == ["expense_1.total_amount"]
    assert (event.fact_updates, event.world_updates, event.revokes_pending) == ({}, {}, False)
    assert engine.fire(**_beat(act_keys=["CONFIRM:total_amount"], media_time_ms=12000)) == []
    assert engine.fired == {"evt_correct_total": 10000}


def test_empty_trigger_fires_on_the_first_beat():
    engine = _engine({"id": "e", "type": "INTENT_SWITCH"})
    assert [e.event_id for e in engine.fire(**_beat())] == ["e"]


def test_time_trigger_is_consulted_only_when_asked():
    engine = _engine({"id": "late", "type": "DELAYED_CORRECTION", "trigger": {"media_time_ms_gte": 5000}})
    assert engine.fire(**_beat(media_time_ms=4000, time_triggers=True)) == []
    assert [e.event_id for e in engine.fire(**_beat(media_time_ms=5000, time_triggers=True))] == ["late"]
    eager = _engine({"id": "late", "type": "DELAYED_CORRECTION", "trigger": {"media_time_ms_gte": 5000}})
    assert [e.event_id for e in eager.fire(**_beat(media_time_ms=0))] == ["late"]


@pytest.mark.parametrize(
    ("field", "value", "beat_key"),
    [
        ("tool_call", "lookup", "tool_calls"),
        ("artifact_mutation", "form.total", "artifact_mutations"),
        ("commit_attempt", "submit", "commit_attempts"),
    ],
)
def test_beat_trigger_fields(field, value, beat_key):
    engine = _engine({"id": "e", "type": "CLARIFICATION", "trigger": {field: value}})
    assert engine.fire(**_beat(**{beat_key: ["other"]})) == []
    assert [e.event_id for e in engine.fire(**_beat(**{beat_key: [value]}))] == ["e"]


def test_unconsulted_trigger_fields_are_wildcards():
    engine = _engine({"id": "e", "type": "CLARIFICATION", "trigger": {"approval_request": "pay"}})
    assert [e.event_id for e in engine.fire(**_beat())] == ["e"]


def test_forbidden_commits_and_world_updates_are_reported_for_the_runner():
    engine = _engine(
        {
            "id": "stop",
            "type": "CANCELLATION_REVOCATION",
            "forbidden_tool_commits": ["pay"],
            "world_updates": {"account.frozen": True},
            "fact_updates": {"amount": 3},
        }
    )
    (event,) = engine.fire(**_beat())
    assert (event.revokes_pending, event.world_updates, event.fact_updates) == (
        True,
        {"account.frozen": True},
        {"amount": 3},
    )


def test_duplicate_event_ids_are_rejected():
    with pytest.raises(ValueError, match=r"duplicate event ids: \['e'\]"):
        _engine({"id": "e", "type": "X"}, {"id": "e", "type": "Y"})
