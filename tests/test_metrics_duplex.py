"""Floor-control metrics from synthetic DUPLEX_EVENT delivery records."""

from __future__ import annotations

from harness.events import EventType
from harness.metrics.duplex_metrics import delivery_records, duplex_metrics
from tests.event_builders import events


def _events(*specs):
    return events(*specs)


def _delivery(event_id, expected, *, yielded, stop=None, speaking=True, type_="MID_SPEECH_CORRECTION", **extra):
    return (
        EventType.DUPLEX_EVENT,
        1000,
        {
            "event_id": event_id,
            "type": type_,
            "delivery": "during_agent_speech",
            "onset_ms": 1000,
            "expected_floor_action": expected,
            "agent_speaking_at_onset": speaking,
            "stop_latency_ms": stop,
            "max_stop_latency_ms": 1500,
            "agent_yielded": yielded,
            **extra,
        },
    )


def test_yield_and_continue_decisions_are_scored_only_while_the_agent_speaks():
    events = _events(
        (EventType.DUPLEX_EVENT, 900, {"event_id": "e1", "type": "MID_SPEECH_CORRECTION"}),  # firing record
        _delivery("e1", "YIELD", yielded=True, stop=300),
        _delivery("e2", "YIELD", yielded=False, stop=None),
        _delivery("e3", "CONTINUE", yielded=False, type_="BACKCHANNEL"),
        _delivery("e4", "CONTINUE", yielded=True, stop=100, type_="BACKCHANNEL"),
        _delivery("e5", "CONTINUE", yielded=True, stop=0, speaking=False, type_="BACKCHANNEL"),
        (EventType.RUN_END, 4000, {}),
    )
    assert len(delivery_records(events)) == 5
    duplex = duplex_metrics(events)
    assert duplex["n_events"] == 5
    assert duplex["n_scored"] == 4 and duplex["n_no_opportunity"] == 1
    assert duplex["fda"] == 0.5
    assert duplex["fyr"] == 0.5
    assert duplex["stop_latency_ms"] == {"median": 300.0, "p90": 300.0, "p95": 300.0, "miss_rate": 0.5, "n": 1,
                                         "n_expected": 2, "n_no_opportunity": 0}
    assert duplex["isl_ms"] == {"median": 300.0, "p90": 300.0, "p95": 300.0, "miss_rate": 0.5, "n": 1}
    assert duplex["n_yield_expected"] == 2 and duplex["n_continue_expected"] == 2
    assert duplex["occr"] is None and duplex["ira"] is None
    assert [e["correct"] for e in duplex["events"]] == [True, False, True, False, None]
    assert duplex["events"][0] == {
        "event_id": "e1",
        "type": "MID_SPEECH_CORRECTION",
        "expected_floor_action": "YIELD",
        "agent_speaking_at_onset": True,
        "agent_yielded": True,
        "stop_latency_ms": 300,
        "isl_ms": 300,
        "overlap_ms": None,
        "correct": True,
    }


def test_a_barge_in_over_no_speech_is_listed_as_no_opportunity_never_as_a_yield():
    events = _events(
        _delivery("e1", "YIELD", yielded=True, stop=300),
        _delivery("e2", "YIELD", yielded=None, speaking=False, yield_opportunity=False, no_opportunity="agent_silent"),
        _delivery("e3", "YIELD", yielded=None, yield_opportunity=False, no_opportunity="agent_not_speech"),
    )
    duplex = duplex_metrics(events)
    assert duplex["n_scored"] == 1 and duplex["n_no_opportunity"] == 2 and duplex["fda"] == 1.0
    assert duplex["stop_latency_ms"]["n_expected"] == 1 and duplex["stop_latency_ms"]["n_no_opportunity"] == 2
    assert duplex["stop_latency_ms"]["median"] == 300.0  # the tone's "stop" is no sample
    listed = {e["event_id"]: e for e in duplex["events"]}
    assert listed["e3"]["no_opportunity"] == "agent_not_speech" and listed["e3"]["correct"] is None
    # No floor to yield is no failure to yield: ``None`` stays ``None`` (issue 34), never ``False``.
    assert listed["e2"]["no_opportunity"] == "agent_silent" and listed["e2"]["agent_yielded"] is None


def test_stop_latency_statistics_are_linear_percentiles_and_isl_ms_follows_the_published_index_rule():
    events = _events(*(_delivery(f"e{i}", "YIELD", yielded=True, stop=stop) for i, stop in enumerate([400, 100, 300, 200])))
    duplex = duplex_metrics(events)
    assert duplex["stop_latency_ms"] == {"median": 250.0, "p90": 370.0, "p95": 385.0, "miss_rate": 0.0, "n": 4,
                                         "n_expected": 4, "n_no_opportunity": 0}
    # Published: sorted[round(p·(n−1))], half-even: round(2.7) = round(2.85) = 3 → 400.
    assert duplex["isl_ms"] == {"median": 250.0, "p90": 400.0, "p95": 400.0, "miss_rate": 0.0, "n": 4}


def test_no_duplex_events_gives_nulls_and_still_reports_overlap():
    events = _events(
        (EventType.USER_AUDIO_START, 0, {"text": "hello", "duration_ms": 1000}),
        (EventType.AGENT_AUDIO_START, 500, {"response_id": 0}),
        (EventType.USER_AUDIO_END, 1000, {"text": "hello"}),
        (EventType.AGENT_AUDIO_END, 1500, {"response_id": 0}),
        (EventType.RUN_END, 2000, {}),
    )
    duplex = duplex_metrics(events)
    assert duplex["n_events"] == 0
    assert duplex["events"] == []
    assert duplex["fda"] is None
    assert duplex["fyr"] is None
    assert duplex["stop_latency_ms"] == {"median": None, "p90": None, "p95": None, "miss_rate": None, "n": 0,
                                         "n_expected": 0, "n_no_opportunity": 0}
    assert duplex["isl_ms"] == {}  # published: an empty block when there is nothing to measure
    assert duplex["overlap_ms"] == 500
    assert duplex["overlap_ratio"] == 0.25


def test_occr_and_ira_over_task_critical_corrections_when_records_mark_them():
    events = _events(
        _delivery("e1", "YIELD", yielded=True, stop=200, task_critical=True, retained_overlap=True),
        _delivery("e2", "YIELD", yielded=False, task_critical=True, retained_overlap=True),
        _delivery("e3", "YIELD", yielded=True, stop=200, task_critical=True, retained_overlap=False),
        _delivery("e4", "CONTINUE", yielded=False, type_="BACKCHANNEL", task_critical=True, retained_overlap=True),
    )
    duplex = duplex_metrics(events)
    assert duplex["occr"] == round(2 / 3, 4)
    assert duplex["ira"] == round(1 / 3, 4)
