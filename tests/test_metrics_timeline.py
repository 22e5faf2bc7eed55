"""Speech timeline from synthetic event streams: intervals, overlap, silence, duration."""

from __future__ import annotations

from harness.events import EventType
from harness.metrics.timeline import Interval, build_timeline, intersection_ms, merge_intervals
from tests.event_builders import events

U0, U1, A0, A1, END = (
    EventType.USER_AUDIO_START,
    EventType.USER_AUDIO_END,
    EventType.AGENT_AUDIO_START,
    EventType.AGENT_AUDIO_END,
    EventType.RUN_END,
)


def _events(*specs):
    return events(*specs)


def test_agent_answering_before_the_user_finished_overlaps():
    timeline = build_timeline(
        _events(
            (U0, 0, {"text": "hi", "duration_ms": 2000}),
            (A0, 1500, {"response_id": 0}),
            (U1, 2000, {"text": "hi"}),
            (A1, 4000, {"response_id": 0}),
            (END, 5000, {}),
        )
    )
    assert timeline.user == [Interval(0, 2000)]
    assert timeline.agent == [Interval(1500, 4000)]
    assert timeline.duration_ms == 5000
    assert timeline.overlap_ms == 500
    assert timeline.overlap_ratio == 0.1
    assert timeline.silence_ratio == 0.2
    assert timeline.to_dict() == {
        "duration_ms": 5000,
        "user_speaking_ms": 2000,
        "agent_speaking_ms": 2500,
        "overlap_ms": 500,
        "overlap_ratio": 0.1,
        "silence_ratio": 0.2,
    }


def test_back_to_back_user_clips_merge_and_agent_responses_pair_by_id():
    timeline = build_timeline(
        _events(
            (U0, 0, {"text": "one", "duration_ms": 1000}),
            (U1, 1000, {"text": "one"}),
            (U0, 1000, {"text": "two", "duration_ms": 800}),
            (U1, 1800, {"text": "two"}),
            (A0, 2000, {"response_id": 7}),
            (A0, 2500, {"response_id": 8}),
            (A1, 3000, {"response_id": 7}),
            (A1, 3500, {"response_id": 8}),
            (END, 4000, {}),
        )
    )
    assert [u.interval for u in timeline.user_utterances] == [Interval(0, 1000), Interval(1000, 1800)]
    assert timeline.user == [Interval(0, 1800)]
    assert timeline.agent_responses == [Interval(2000, 3000), Interval(2500, 3500)]
    assert timeline.agent == [Interval(2000, 3500)]
    assert timeline.overlap_ms == 0
    assert timeline.silence_ratio == round(700 / 4000, 4)


def test_speech_still_playing_at_the_end_is_cut_at_run_end():
    timeline = build_timeline(
        _events((U0, 0, {"text": "mhm", "duration_ms": 400, "backchannel": True}), (A0, 500, {"response_id": 0}), (END, 3000, {}))
    )
    assert timeline.user == [Interval(0, 3000)]
    assert timeline.agent == [Interval(500, 3000)]
    assert timeline.user_utterances[0].flags == frozenset({"backchannel"})


def test_without_run_end_the_session_lasts_until_the_last_event_or_speech_end():
    timeline = build_timeline(
        _events((A0, 100, {"response_id": 0}), (A1, 900, {"response_id": 0}), (EventType.TOOL_CALL, 1200, {}))
    )
    assert timeline.duration_ms == 1200
    assert timeline.silence_ratio == round(400 / 1200, 4)


def test_an_empty_session_has_no_ratios():
    timeline = build_timeline([])
    assert timeline.duration_ms == 0
    assert timeline.overlap_ratio is None
    assert timeline.silence_ratio is None


def test_interval_helpers():
    merged = merge_intervals([Interval(5, 8), Interval(0, 2), Interval(2, 3), Interval(4, 4)])
    assert merged == [Interval(0, 3), Interval(5, 8)]
    assert intersection_ms([Interval(0, 10), Interval(20, 30)], [Interval(5, 25)]) == 10
