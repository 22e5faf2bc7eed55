"""The one reducer: events in, immutable view state out; tolerant of older and newer runs."""

from __future__ import annotations

import json

from harness.events import EventType as E
from harness.events import parse_event_line
from tests.event_builders import events
from tui.sources.replay import CHECKPOINT_EVERY, ReplayCursor
from tui.state import SessionView, reduce, reduce_all
from tui.state.session_view import LEVEL_CHUNK, Segment


def test_floor_changes_make_speech_segments_and_overlaps():
    view = reduce_all(events(
        (E.FLOOR_CHANGE, 100, {"channel": "user", "speaking": True}),
        (E.FLOOR_CHANGE, 300, {"channel": "agent", "speaking": True}),
        (E.FLOOR_CHANGE, 500, {"channel": "user", "speaking": False}),
        (E.FLOOR_CHANGE, 900, {"channel": "agent", "speaking": False}),
        (E.FLOOR_CHANGE, 1000, {"channel": "agent", "speaking": True}),
    ))
    assert view.user.speech == (Segment(100, 500),)
    assert view.agent.speech == (Segment(300, 900), Segment(1000, None))
    assert view.overlaps == (Segment(300, 500),)
    assert view.agent.speaking and not view.user.speaking
    assert view.clock_ms == 1000


def test_utterances_stand_in_for_vad_when_no_floor_change_was_logged():
    view = reduce_all(events(
        (E.USER_AUDIO_START, 0, {"text": "hello", "duration_ms": 500}),
        (E.USER_AUDIO_END, 500, {"text": "hello"}),
        (E.AGENT_AUDIO_START, 800, {"segment": 0}),
    ))
    assert view.user.activity == (Segment(0, 500),)
    assert view.agent.activity == (Segment(800, None),)


def test_audio_levels_are_kept_whole_per_channel():
    """Every window stays (the timeline draws any stretch from them), in chunks an append copies."""
    n = 4 * LEVEL_CHUNK + 10
    specs = [(E.AUDIO_LEVEL, t * 100, {"window_ms": 100, "user_dbfs": -20.0 - t % 7, "agent_dbfs": -90.0}) for t in range(n)]
    view = reduce_all(events(*specs))
    assert len(view.user.levels) == n and max(len(chunk) for chunk in view.user.levels.chunks) == LEVEL_CHUNK
    assert view.user.level_dbfs == -20.0 - (n - 1) % 7 and view.agent.level_dbfs == -90.0
    assert [s.t_ms for s in view.user.levels.since(150)][:2] == [100, 200]  # the window still sounding at 150
    assert view.user.levels.since(0)[0].t_ms == 0 and len(view.user.levels.since(-5)) == n


def test_transcript_partials_then_the_final_text_on_one_line():
    view = reduce_all(events(
        (E.USER_AUDIO_START, 0, {"text": "Wait, stop", "duration_ms": 600, "barge": True}),
        (E.AGENT_TRANSCRIPT_PARTIAL, 100, {"text": "Sure", "response_id": "r1"}),
        (E.AGENT_TRANSCRIPT_PARTIAL, 150, {"text": ", I can", "response_id": "r1"}),  # a delta
        (E.AGENT_TRANSCRIPT_PARTIAL, 200, {"text": "Sure, I can help", "response_id": "r1"}),  # the text so far
        (E.AGENT_ACT, 200, {"act": "ASK:name", "source": "pattern"}),
    ))
    user, agent = view.transcript
    assert (user.speaker, user.text, user.tags) == ("user", "Wait, stop", ("barge",))
    assert (agent.text, agent.partial, agent.tags) == ("Sure, I can help", True, ("ASK:name",))
    view = reduce_all(events(
        (E.AGENT_TEXT, 300, {"text": "Sure, I can help you.", "response_id": "r1"}),
        (E.AGENT_TRANSCRIPT_PARTIAL, 310, {"text": " late", "response_id": "r1"}),
        (E.AGENT_AUDIO_END, 400, {"duration_ms": 300, "response_id": "r1", "truncated": True}),
    ), view)
    final = view.transcript[1]
    assert (final.text, final.partial, final.t_ms) == ("Sure, I can help you.", False, 100)
    assert "truncated" in final.tags and len(view.transcript) == 2


def test_tool_calls_pair_with_their_results_by_call_id():
    view = reduce_all(events(
        (E.TOOL_CALL, 1000, {"tool": "kb_search", "args": {"query": "a"}, "call_id": "c1"}),
        (E.TOOL_CALL, 1000, {"tool": "kb_search", "args": {"query": "b"}, "call_id": "c2"}),
        (E.TOOL_RESULT, 1400, {"tool": "kb_search", "ok": False, "error": "boom", "call_id": "c2", "is_error": True}),
        (E.TOOL_RESULT, 1900, {"tool": "kb_search", "ok": True, "result": {"hits": []}, "call_id": "c1", "latency_ms": 850}),
    ))
    first, second = view.tools
    assert (first.done, first.is_error, first.latency_ms, first.result) == (True, False, 850, {"hits": []})
    assert (second.done, second.is_error, second.error, second.latency_ms) == (True, True, "boom", 400)


def test_a_cancelled_call_is_an_error_and_typed_turns_are_transcribed():
    view = reduce_all(events(
        (E.USER_TEXT, 0, {"text": "hi, typed"}),
        (E.TOOL_CALL, 100, {"tool": "kb_search", "args": {}, "call_id": "c1"}),
        (E.TOOL_RESULT, 300, {"tool": "kb_search", "ok": False, "call_id": "c1", "cancelled": True}),
    ))
    assert view.transcript[0].text == "hi, typed" and view.transcript[0].speaker == "user"
    assert (view.tools[0].is_error, view.tools[0].error) == (True, "cancelled")


def test_a_result_whose_call_was_not_seen_still_shows():
    view = reduce_all(events((E.TOOL_RESULT, 500, {"tool": "get_entity", "ok": True, "called_at_ms": 200, "args": {"path": "x"}})))
    (call,) = view.tools
    assert (call.tool, call.called_ms, call.latency_ms, call.args) == ("get_entity", 200, 300, {"path": "x"})


def _artifact_specs():
    return (
        (E.TOOL_CALL, 100, {"tool": "update_form", "args": {"fields": {"name": "Ann", "plan": "ppo"}}, "call_id": "c1"}),
        (E.TOOL_RESULT, 100, {"tool": "update_form", "ok": True, "call_id": "c1",
                              "result": {"updated": ["name", "plan"], "artifact_id": "form_1"}}),
        (E.GATE_STATUS, 100, {"GS": False, "PC": True, "RA": False, "WA": False, "pts": 0,
                              "failing": ["WA: form_1.plan: stale (must_not_be_stale)", "GS: submitted: never"]}),
    )


def _artifact_run():
    return events(*_artifact_specs())


def test_artifact_fields_lifecycle_and_stale_markers():
    view = reduce_all(_artifact_run())
    artifact = view.artifact("form_1")
    assert artifact.lifecycle == "DRAFT"
    assert [(f.name, f.value, f.stale) for f in artifact.fields] == [("name", "Ann", False), ("plan", "ppo", True)]
    assert view.gates.failing[1] == "GS: submitted: never" and view.gates.GS is False
    view = reduce_all(events(
        (E.TOOL_CALL, 200, {"tool": "update_form", "args": {"fields": {"plan": "hmo"}}, "call_id": "c2"}),
        (E.TOOL_RESULT, 200, {"tool": "update_form", "ok": True, "call_id": "c2", "mutations": ["form_1.plan"],
                              "result": {"artifact_id": "form_1"}}),
        (E.GATE_STATUS, 200, {"GS": False, "PC": True, "RA": True, "WA": True, "pts": 0, "failing": []}),
        (E.TOOL_RESULT, 300, {"tool": "submit", "ok": True, "result": {"target_id": "form_1", "committed": True}}),
    ), view)
    artifact = view.artifact("form_1")
    assert [(f.name, f.value, f.stale) for f in artifact.fields] == [("name", "Ann", False), ("plan", "hmo", False)]
    assert artifact.lifecycle == "COMMITTED"


def test_a_failed_call_changes_no_artifact():
    view = reduce_all(events(
        (E.TOOL_CALL, 100, {"tool": "update_form", "args": {"fields": {"name": "Ann"}}, "call_id": "c1"}),
        (E.TOOL_RESULT, 100, {"tool": "update_form", "ok": False, "call_id": "c1", "error": "invalid",
                              "result": {"artifact_id": "form_1", "updated": ["name"]}}),
    ))
    assert view.artifacts == () and view.tools[0].is_error


def test_gate_status_without_failing_keeps_stale_markers():
    """Older runs log GATE_STATUS without ``failing``: no reason to clear what was marked."""
    view = reduce_all(events(*_artifact_specs(), (E.GATE_STATUS, 150, {"GS": False, "PC": True, "RA": False, "WA": False, "pts": 0})))
    assert view.artifact("form_1").field("plan").stale


def test_gate_status_stale_markers_come_from_the_structured_items_not_the_words():
    stale_plan = {"gate": "WA", "check": "form_1.plan", "kind": "stale", "reason": "stale",
                  "artifact": "form_1", "field": "plan"}
    view = reduce_all(events(*_artifact_specs()[:2], (E.GATE_STATUS, 100, {
        "GS": True, "PC": True, "RA": True, "WA": False, "pts": 0,
        "failing": ["WA: the words say nothing a pattern finds"], "failing_items": [stale_plan]})))
    assert [(f.name, f.stale) for f in view.artifact("form_1").fields] == [("name", False), ("plan", True)]
    assert view.gates.checks[0].check == "form_1.plan"
    # Items present and empty: nothing is stale, whatever the words say.
    view = reduce_all(events((E.GATE_STATUS, 150, {
        "GS": True, "PC": True, "RA": True, "WA": True, "pts": 1,
        "failing": ["WA: form_1.plan: stale (must_not_be_stale)"], "failing_items": []})), view)
    assert not view.artifact("form_1").field("plan").stale


def test_artifact_mutation_events_write_and_mark_stale():
    view = reduce_all(events(
        (E.ARTIFACT_MUTATION, 100, {"artifact_id": "a", "path": "x", "new": 1}),
        (E.ARTIFACT_MUTATION, 200, {"artifact_id": "a", "path": "x", "cause": "stale:evt_1"}),
    ))
    field = view.artifact("a").field("x")
    assert (field.value, field.stale, field.t_ms) == (1, True, 100)


def test_a_mutation_record_without_its_value_keeps_the_value_the_call_wrote():
    view = reduce_all(events(
        *_artifact_specs(),
        (E.ARTIFACT_MUTATION, 100, {"artifact_id": "form_1", "path": "name", "cause": "call #1"}),
    ))
    assert view.artifact("form_1").field("name").value == "Ann"


def test_duplex_deliveries_mark_barge_ins_and_back_channels():
    view = reduce_all(events(
        (E.DUPLEX_EVENT, 1000, {"event_id": "e1", "type": "MID_SPEECH_CORRECTION"}),
        (E.DUPLEX_EVENT, 1500, {"event_id": "e1", "type": "MID_SPEECH_CORRECTION", "onset_ms": 1000,
                                "expected_floor_action": "YIELD", "stop_latency_ms": 480, "max_stop_latency_ms": 650,
                                "agent_yielded": True}),
        (E.DUPLEX_EVENT, 3000, {"event_id": "e2", "type": "BACKCHANNEL", "onset_ms": 2500,
                                "expected_floor_action": "CONTINUE", "stop_latency_ms": 300, "agent_yielded": True}),
    ))
    barge, backchannel = view.duplex
    assert (barge.kind, barge.correct, barge.stop_latency_ms) == ("barge-in", True, 480)
    assert (backchannel.kind, backchannel.correct) == ("back-channel", False)
    lines = [line.text for line in view.transcript]
    assert lines == ["barge-in e1: yielded in 480 ms ok", "back-channel e2: yielded in 300 ms WRONG"]


def test_a_finished_reply_and_a_pause_are_shown_as_not_scored():
    """The floor meter's outcomes (issue 22): finishing in time is no yield, a pause no opportunity."""
    view = reduce_all(events(
        (E.DUPLEX_EVENT, 1500, {"event_id": "e1", "type": "MID_SPEECH_CORRECTION", "onset_ms": 1000,
                                "expected_floor_action": "YIELD", "stop_latency_ms": 200, "max_stop_latency_ms": 650,
                                "agent_yielded": False, "floor_outcome": "finished"}),
        (E.DUPLEX_EVENT, 3000, {"event_id": "e2", "type": "MID_SPEECH_CORRECTION", "onset_ms": 2500,
                                "expected_floor_action": "YIELD", "agent_yielded": None, "yield_opportunity": False,
                                "no_opportunity": "agent_paused"}),
    ))
    finished, paused = view.duplex
    assert finished.correct is None and paused.correct is None
    assert [line.text for line in view.transcript] == [
        "barge-in e1: finished its reply in time (not a yield)",
        "barge-in e2: no floor to yield (agent paused)",
    ]


def test_approvals_granted_and_revoked():
    view = reduce_all(events(
        (E.APPROVAL_EVENT, 100, {"target_id": "form_1", "granted": "submit"}),
        (E.APPROVAL_EVENT, 200, {"target_id": "form_1", "revoked": "submit"}),
    ))
    assert [(a.action, a.granted) for a in view.approvals] == [("submit", True), ("submit", False)]


def test_the_run_end_gives_the_verdict_with_the_failing_checks():
    view = reduce_all(events(
        (E.RUN_START, 0, {"task_id": "t", "model_id": "m", "condition": "C2", "schema_version": "2"}),
        *_artifact_specs(),
        (E.RUN_END, 900, {"outcome": "FAILURE", "pts": 0, "reason": "closing"}),
    ))
    assert (view.task_id, view.model_id, view.status) == ("t", "m", "failed")
    assert view.verdict.outcome == "FAILURE" and view.verdict.explain[0].startswith("WA: form_1.plan")


def test_a_transient_infrastructure_failure_marks_the_session():
    view = reduce_all(events((E.INFRA_FAILURE, 10, {"error": "socket closed", "transient": True})))
    assert view.status == "infra error" and view.errors == ("socket closed",)


def test_an_agents_own_error_is_shown_as_the_agents_not_as_infrastructure():
    view = reduce_all(events((E.INFRA_FAILURE, "agent", 10, {"error": "rate limited", "transient": True})))
    assert view.status != "infra error" and view.errors == ("agent: rate limited",)


def test_unknown_types_and_missing_keys_are_tolerated():
    newer = parse_event_line(json.dumps({"seq": 0, "type": "SOMETHING_NEW", "actor": "harness", "media_time_ms": 50,
                                   "payload": {"x": 1}, "run_id": "r", "task_version": "1", "condition": "C2"}))
    assert newer is not None and newer.type == "SOMETHING_NEW"
    view = reduce(SessionView(), newer)
    assert (view.events, view.clock_ms) == (1, 50)
    for spec in events(*((type_, 60, {}) for type_ in E)):
        view = reduce(view, spec)
    assert view.events == 1 + len(E)
    # A payload missing what its model requires is not drawn; the view says which event it was.
    assert "event 0 (RUN_START): payload does not fit: task_id: Field required" in view.errors
    assert (view.task_id, view.status) == ("", "queued")
    assert parse_event_line('{"seq": 3, "type": "TOOL_CA') is None  # a torn last line
    assert parse_event_line("[1, 2]") is None


def test_reducing_never_changes_the_view_it_was_given():
    before = reduce_all(_artifact_run())
    snapshot = repr(before)
    after = reduce_all(events((E.TOOL_RESULT, 500, {"tool": "update_form", "ok": True, "mutations": ["form_1.name"],
                                                    "result": {"artifact_id": "form_1"}})), before)
    assert repr(before) == snapshot and after is not before


def test_seeking_back_and_forth_gives_the_views_of_reducing_from_the_start():
    specs = [(E.FLOOR_CHANGE, t * 20, {"channel": "user" if t % 3 else "agent", "speaking": bool(t % 2)}) for t in range(700)]
    run = events(*specs)
    cursor = ReplayCursor(run)
    for position in (650, 10, CHECKPOINT_EVERY, CHECKPOINT_EVERY + 1, 699, 0, 300):
        assert cursor.seek(position) == reduce_all(run[:position])
    assert cursor.seek_time(1000) == reduce_all(run[:51])
    assert cursor.seek_seq(42) == reduce_all(run[:43])


def test_a_field_a_commit_wrote_shows_the_value_the_server_wrote(recorded_runs):
    """Issue 36 §2.4: the artifact pane showed `–` for `enrollment_status`, which the commit tool's
    `set_fields` wrote as `submitted`: its ARTIFACT_MUTATION carried no value."""
    from harness.events import read_events
    from tests.tui.helpers import session_dir

    session = session_dir(recorded_runs["oracle"])
    logged = read_events(session / "events.jsonl")
    committed = [e for e in logged if e.type == E.ARTIFACT_MUTATION and e.payload.get("path") == "enrollment_status"]
    assert [e.payload.get("new") for e in committed] == ["submitted"]
    final = json.loads((session / "workspace" / "final_workspace.json").read_text())
    view = reduce_all(logged)
    assert view.artifact("enrollment_1").field("enrollment_status").value == final["enrollment_1"]["fields"]["enrollment_status"]
