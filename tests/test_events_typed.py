"""Reading payloads as their models: lenient on keys a model does not know, clear when a payload does not fit."""

from __future__ import annotations

import json

import pytest

from harness.events import EventBus, EventType, PayloadMismatch, parse_event_line, payload_as
from harness.events.payloads import DuplexEvent, RunStart, ToolCall, UserAudioStart
from tests.event_builders import events


def test_an_emitted_payload_reads_back_as_its_model():
    bus = EventBus(run_id="r", task_version="1", condition="C2")
    event = bus.emit(EventType.USER_AUDIO_START, "user", 0,
                     {"text": "wait", "duration_ms": 400, "barge": True, "plan_id": "p1"})
    spoken = payload_as(event, UserAudioStart)
    assert (spoken.text, spoken.duration_ms, spoken.plan_id, spoken.flags()) == ("wait", 400, "p1", ("barge",))


def test_keys_the_model_does_not_know_are_left_out():
    """A published ``AGENT_AUDIO_START``-style extra, or a newer harness's key, does not stop the read."""
    (event,) = events((EventType.TOOL_CALL, 10, {"tool": "kb_search", "args": {"q": "x"}, "added_later": 1}))
    call = payload_as(event, ToolCall)
    assert (call.tool, call.args, call.source) == ("kb_search", {"q": "x"}, None)


def test_a_payload_that_does_not_fit_names_the_event_and_the_field():
    (_, event) = events((EventType.RUN_END, 0, {"outcome": "SUCCESS"}), (EventType.TOOL_CALL, 5, {"args": {}}))
    with pytest.raises(PayloadMismatch) as caught:
        payload_as(event, ToolCall)
    assert str(caught.value) == "event 1 (TOOL_CALL): payload does not fit: tool: Field required"
    assert (caught.value.seq, caught.value.type) == (1, "TOOL_CALL")


def test_asking_for_another_types_model_is_a_caller_bug():
    (event,) = events((EventType.TOOL_CALL, 0, {"tool": "t"}))
    with pytest.raises(TypeError, match="event 0 is TOOL_CALL .ToolCall., not read as RunStart"):
        payload_as(event, RunStart)


def test_a_published_line_reads_with_its_own_keys():
    """Published runs: no ``schema_version``, fractional ``isl_ms``, no envelope ids in minimal lines."""
    start = parse_event_line(json.dumps({"seq": 0, "type": "RUN_START", "actor": "harness", "media_time_ms": 0,
                                         "payload": {"task_id": "t", "model_id": "m", "condition": "C2",
                                                     "user_audio": "kokoro"}}))
    barge = parse_event_line(json.dumps({"seq": 7, "type": "DUPLEX_EVENT",
                                         "payload": {"type": "MID_SPEECH_CORRECTION", "agent_yielded": True,
                                                     "isl_ms": 120.5}}))
    assert start is not None and barge is not None
    assert payload_as(start, RunStart).schema_version is None
    record = payload_as(barge, DuplexEvent)
    assert (record.event_id, record.agent_yielded, record.isl_ms) == (None, True, 120.5)


def test_our_integer_stop_latencies_stay_integers_on_the_line():
    bus = EventBus(run_id="r", task_version="1", condition="C2")
    event = bus.emit(EventType.DUPLEX_EVENT, "user", 0, {"event_id": "e", "type": "BARGE", "isl_ms": 120})
    isl = json.loads(event.to_line())["payload"]["isl_ms"]
    assert isl == 120 and isinstance(isl, int)


def test_skipped_types_are_left_out_in_the_writers_format_and_in_another(tmp_path):
    from harness.events import read_event_lines

    envelope = {"actor": "harness", "run_id": "r", "task_version": "1", "condition": "C2"}
    level = {"type": "AUDIO_LEVEL", "payload": {"window_ms": 100, "user_dbfs": -60.0, "agent_dbfs": -60.0}}
    lines = [
        json.dumps({"seq": 0, **level, **envelope}),  # the writer's own format: not parsed at all
        json.dumps({"seq": 1, **level, **envelope}, separators=(",", ":")),  # another: parsed, then dropped
        json.dumps({"seq": 2, "type": "USER_TEXT", "payload": {"text": "hi"}, **envelope}),
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert [e.seq for e in read_event_lines(path)] == [0, 1, 2]
    assert [e.seq for e in read_event_lines(path, skip_types={"AUDIO_LEVEL"})] == [2]
