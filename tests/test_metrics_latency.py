"""Response-start latency, time to resolution and tool-use counts from synthetic event streams."""

from __future__ import annotations

from harness.events import EventType
from harness.metrics.latency import latency_metrics, response_start_latency
from harness.metrics.timeline import build_timeline
from tests.event_builders import events

U0, U1, A0, A1, END, TOOL = (
    EventType.USER_AUDIO_START,
    EventType.USER_AUDIO_END,
    EventType.AGENT_AUDIO_START,
    EventType.AGENT_AUDIO_END,
    EventType.RUN_END,
    EventType.TOOL_CALL,
)


def _events(*specs):
    return events(*specs)


def _user(start, end, **flags):
    return [(U0, start, {"text": "a turn", "duration_ms": end - start, **flags}), (U1, end, {"text": "a turn"})]


def _agent(rid, start, end):
    return [(A0, start, {"response_id": rid}), (A1, end, {"response_id": rid})]


def test_only_responses_answering_a_user_turn_are_samples():
    events = _events(
        *_user(1000, 2000),
        *_agent(0, 2600, 3000),
        (TOOL, 3100, {"tool": "kb_search_policies"}),
        *_agent(1, 5000, 6000),  # continues after a tool result: not an answer
        *_user(7000, 8000),
        *_agent(2, 8300, 9000),
        (END, 9500, {}),
    )
    rsl = response_start_latency(build_timeline(events))
    assert rsl.samples == [600, 300]
    assert rsl.early_starts == 0
    latency = latency_metrics(events)
    assert latency["response_start_latency_ms"] == {
        "median": 450.0,
        "p50": 450.0,
        "p95": 585.0,
        "n": 2,
        "early_starts": 0,
        "samples": [600, 300],
    }
    assert latency["first_agent_audio_ms"] == 2600
    assert latency["time_to_resolution_ms"] == 8500
    assert latency["tool_calls"] == 1
    assert latency["retrieval_calls"] == 1
    assert latency["user_turns"] == 2
    assert latency["user_speaking_ms"] == 2000
    assert latency["agent_speaking_ms"] == 2100


def test_a_response_starting_while_the_user_speaks_is_an_early_start_reported_as_zero():
    events = _events(*_user(0, 2000), *_agent(0, 1500, 2500), (END, 3000, {}))
    latency = latency_metrics(events)["response_start_latency_ms"]
    assert latency["samples"] == [0]
    assert latency["early_starts"] == 1
    assert latency["median"] == 0.0


def test_a_backchannel_is_not_a_turn_but_a_barge_in_is():
    events = _events(
        *_user(0, 1000),
        (A0, 1500, {"response_id": 0}),
        *_user(2000, 2400, backchannel=True),
        *_user(3000, 3600, barge=True),
        (A1, 3800, {"response_id": 0}),
        *_agent(1, 4100, 5000),
        (END, 5000, {}),
    )
    assert response_start_latency(build_timeline(events)).samples == [500, 500]


def test_silent_agent_has_no_samples_and_missing_values_are_none():
    events = _events(*_user(0, 1000), (TOOL, 1500, {"tool": "search_docs"}), (TOOL, 1600, {"tool": "set_field"}))
    latency = latency_metrics(events)
    assert latency["response_start_latency_ms"]["n"] == 0
    assert latency["response_start_latency_ms"]["median"] is None
    assert latency["response_start_latency_ms"]["p95"] is None
    assert latency["first_agent_audio_ms"] is None
    assert latency["time_to_resolution_ms"] is None  # no RUN_END: the session did not resolve
    assert latency["retrieval_calls"] == 1
    assert latency["tool_calls"] == 2
