"""The one reducer: ``reduce(view, event) -> view``, the same for a live bus, a tailed file and a replay.

Each event type has a handler in :data:`HANDLERS`; a type without one (a newer harness's, or one
the view does not draw) only advances the clock. Handlers read the payload models
(:func:`harness.events.payload_as`): keys added since an older run default, keys this harness does
not know are left out, and an event whose payload does not fit its model is listed among the
view's errors (naming its seq and type) instead of being drawn.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from harness.events import PayloadMismatch, RunEvent, payload_as
from harness.events.payloads import (
    AgentAct,
    AgentAudioEnd,
    AgentText,
    ApprovalEvent,
    ArtifactMutation,
    AudioLevel,
    DuplexEvent,
    FailingCheck,
    FloorChange,
    GateStatus,
    HarnessError,
    InfraFailure,
    RunEnd,
    RunStart,
    ToolCall,
    ToolResult,
    TranscriptPartial,
    UserAudioStart,
    UserText,
)

from .session_view import (
    Approval,
    ArtifactField,
    ArtifactView,
    ChannelView,
    DuplexMark,
    Gates,
    LevelSample,
    Segment,
    SessionView,
    ToolCallView,
    TranscriptLine,
    Verdict,
    evolve,
)

__all__ = ["HANDLERS", "event_type", "reduce", "reduce_all"]

Handler = Callable[[SessionView, RunEvent], SessionView]

#: ``"<gate>: enrollment_1.fsa_per_paycheck: stale ..."`` or ``"... enrollment_1.fsa stale"``: how a
#: run logged before ``failing_items`` names its stale fields.
_STALE = re.compile(r"([A-Za-z0-9_\-]+)\.([^\s:]+):?\s+stale")
#: Tool results that move an artifact out of these states leave it a draft (as the server does).
_DRAFTING = ("EMPTY", "PARTIAL")
#: Agent acts kept as tags on the agent's transcript line.
_MAX_ACT_TAGS = 4
#: Characters of one agent line the view keeps (far more than a pane draws). An agent streaming
#: a long response would otherwise make every delta copy and compare the whole text so far: the
#: reducer's cost quadratic in the response, on the harness's loop when the TUI is live.
LINE_CHARS = 4_000


def event_type(event: RunEvent) -> str:
    """The type's name, also for an event built from a line whose type this harness does not know."""
    return getattr(event.type, "value", None) or str(event.type)


def reduce(view: SessionView, event: RunEvent) -> SessionView:
    """``view`` after ``event``: a new value, ``view`` itself is never changed."""
    view = evolve(
        view,
        clock_ms=max(view.clock_ms, event.media_time_ms),
        events=view.events + 1,
        last_seq=event.seq,
        run_id=view.run_id or event.run_id,
    )
    handler = HANDLERS.get(event_type(event))
    if handler is None:
        return view
    try:
        return handler(view, event)
    except PayloadMismatch as exc:
        return evolve(view, errors=(*view.errors, str(exc)))


def reduce_all(events: Iterable[RunEvent], view: SessionView | None = None) -> SessionView:
    view = view or SessionView()
    for event in events:
        view = reduce(view, event)
    return view


# --- session lifecycle -----------------------------------------------------------------------


def _run_start(view: SessionView, event: RunEvent) -> SessionView:
    run = payload_as(event, RunStart)
    return evolve(
        view,
        task_id=run.task_id,
        model_id=run.model_id,
        clock=run.clock if run.clock is not None else view.clock,
        status="running",
    )


def _run_end(view: SessionView, event: RunEvent) -> SessionView:
    end = payload_as(event, RunEnd)
    status = "passed" if end.pts == 1 else ("infra error" if view.status == "infra error" else "failed")
    verdict = Verdict(outcome=end.outcome, pts=end.pts, reason=end.reason, explain=view.gates.failing)
    return evolve(view, status=status, verdict=verdict)


def _infra_failure(view: SessionView, event: RunEvent) -> SessionView:
    failure = payload_as(event, InfraFailure)
    if event.actor == "agent":  # the agent's own error (the published format's event): not infrastructure
        return _failure(view, event, f"agent: {failure.error}", False)
    return _failure(view, event, failure.error, bool(failure.transient))


def _harness_error(view: SessionView, event: RunEvent) -> SessionView:
    return _failure(view, event, payload_as(event, HarnessError).error, False)


def _failure(view: SessionView, event: RunEvent, error: str, transient: bool) -> SessionView:
    status = "infra error" if transient and view.status != "passed" else view.status
    line = TranscriptLine(event.media_time_ms, "event", f"error: {error}", tags=("error",))
    return evolve(view, errors=(*view.errors, error), status=status, transcript=(*view.transcript, line))


# --- the two channels ------------------------------------------------------------------------


def _opened(segments: tuple[Segment, ...], t: int) -> tuple[Segment, ...]:
    if segments and segments[-1].end_ms is None:
        return segments
    return (*segments, Segment(t))


def _closed(segments: tuple[Segment, ...], t: int) -> tuple[Segment, ...]:
    if not segments or segments[-1].end_ms is not None:
        return segments
    return (*segments[:-1], Segment(segments[-1].start_ms, max(t, segments[-1].start_ms)))


def _with_channel(view: SessionView, name: str, channel: ChannelView, t: int) -> SessionView:
    """Set a channel, then open or close the overlap the two channels now make."""
    view = evolve(view, **{name: channel})
    both = view.user.speaking and view.agent.speaking
    overlaps = _opened(view.overlaps, t) if both else _closed(view.overlaps, t)
    return evolve(view, overlaps=overlaps) if overlaps is not view.overlaps else view


def _floor_change(view: SessionView, event: RunEvent) -> SessionView:
    change = payload_as(event, FloorChange)
    channel: ChannelView = getattr(view, change.channel)
    t = event.media_time_ms
    speech = _opened(channel.speech, t) if change.speaking else _closed(channel.speech, t)
    return _with_channel(view, change.channel, evolve(channel, speech=speech), t)


def _utterance(name: str, start: bool) -> Handler:
    def handle(view: SessionView, event: RunEvent) -> SessionView:
        channel: ChannelView = getattr(view, name)
        t = event.media_time_ms
        utterances = _opened(channel.utterances, t) if start else _closed(channel.utterances, t)
        return _with_channel(view, name, evolve(channel, utterances=utterances), t)

    return handle


def _audio_level(view: SessionView, event: RunEvent) -> SessionView:
    level = payload_as(event, AudioLevel)
    t = event.media_time_ms
    return evolve(
        view,
        user=evolve(view.user, levels=view.user.levels.appended(LevelSample(t, level.user_dbfs))),
        agent=evolve(view.agent, levels=view.agent.levels.appended(LevelSample(t, level.agent_dbfs))),
    )


# --- transcript --------------------------------------------------------------------------------


def _user_audio_start(view: SessionView, event: RunEvent) -> SessionView:
    spoken = payload_as(event, UserAudioStart)
    view = _utterance("user", True)(view, event)
    line = TranscriptLine(event.media_time_ms, "user", spoken.text, tags=spoken.flags())
    return evolve(view, transcript=(*view.transcript, line))


def _user_text(view: SessionView, event: RunEvent) -> SessionView:
    """A typed user turn (the text condition, C0)."""
    line = TranscriptLine(event.media_time_ms, "user", payload_as(event, UserText).text)
    return evolve(view, transcript=(*view.transcript, line))


def _agent_line_index(view: SessionView, response_id: str | None) -> int | None:
    """The transcript line of ``response_id`` (searched from the end), if it has one."""
    if response_id is None:
        return None
    for index in range(len(view.transcript) - 1, -1, -1):
        line = view.transcript[index]
        if line.speaker == "agent" and line.response_id == response_id:
            return index
    return None


def _with_line(view: SessionView, index: int | None, line: TranscriptLine) -> SessionView:
    lines = view.transcript
    lines = (*lines, line) if index is None else (*lines[:index], line, *lines[index + 1:])
    return evolve(view, transcript=lines)


def _response_id(value: str | int | None) -> str | None:
    return None if value is None else str(value)


def _agent_text(view: SessionView, event: RunEvent) -> SessionView:
    said = payload_as(event, AgentText)
    response_id = _response_id(said.response_id)
    index = _agent_line_index(view, response_id)
    text = said.text[:LINE_CHARS]
    if index is None:
        return _with_line(view, None, TranscriptLine(event.media_time_ms, "agent", text, response_id))
    return _with_line(view, index, evolve(view.transcript[index], text=text, partial=False))


def _agent_partial(view: SessionView, event: RunEvent) -> SessionView:
    """Partials may be deltas or the text so far; either way the line shows the text so far."""
    partial = payload_as(event, TranscriptPartial)
    response_id = _response_id(partial.response_id)
    index = _agent_line_index(view, response_id)
    text = partial.text[:LINE_CHARS]
    if index is None:
        return _with_line(view, None, TranscriptLine(event.media_time_ms, "agent", text, response_id, partial=True))
    line = view.transcript[index]
    if not line.partial or len(line.text) >= LINE_CHARS:
        return view  # the final text is already in, or the line is full
    so_far = text if text.startswith(line.text) else line.text + text
    return _with_line(view, index, evolve(line, text=so_far[:LINE_CHARS]))


def _tagged(view: SessionView, index: int | None, tag: str, limit: int | None = None) -> SessionView:
    if index is None or tag in view.transcript[index].tags:
        return view
    line = view.transcript[index]
    if limit is not None and len(line.tags) >= limit:
        return view
    return _with_line(view, index, evolve(line, tags=(*line.tags, tag)))


def _agent_audio_end(view: SessionView, event: RunEvent) -> SessionView:
    audio = payload_as(event, AgentAudioEnd)
    view = _utterance("agent", False)(view, event)
    if not audio.truncated:
        return view
    return _tagged(view, _agent_line_index(view, _response_id(audio.response_id)), "truncated")


def _agent_act(view: SessionView, event: RunEvent) -> SessionView:
    act = payload_as(event, AgentAct).act
    index = next((i for i in range(len(view.transcript) - 1, -1, -1) if view.transcript[i].speaker == "agent"), None)
    return _tagged(view, index, act, limit=_MAX_ACT_TAGS)


# --- duplex events and approvals ----------------------------------------------------------------


def _duplex_event(view: SessionView, event: RunEvent) -> SessionView:
    record = payload_as(event, DuplexEvent)
    if record.onset_ms is None:
        return view  # the firing; its delivery record follows
    mark = DuplexMark(
        event_id=record.event_id or "?",
        type=record.type or "DUPLEX",
        onset_ms=record.onset_ms,
        delivery=record.delivery,
        expected=record.expected_floor_action,
        stop_latency_ms=_stop_latency_ms(record),
        max_stop_latency_ms=record.max_stop_latency_ms,
        yielded=record.agent_yielded,
        agent_speaking_at_onset=record.agent_speaking_at_onset,
        floor_outcome=record.floor_outcome,
        no_opportunity=record.no_opportunity,
    )
    line = TranscriptLine(mark.onset_ms, "event", _duplex_text(mark), tags=(mark.kind,))
    return evolve(view, duplex=(*view.duplex, mark), transcript=(*view.transcript, line))


def _stop_latency_ms(record: DuplexEvent) -> int | None:
    """Ours, else the published ``isl_ms`` (fractional there: the view draws whole milliseconds)."""
    if "stop_latency_ms" in record.model_fields_set:
        return record.stop_latency_ms
    return None if record.isl_ms is None else round(record.isl_ms)


def _duplex_text(mark: DuplexMark) -> str:
    if mark.no_opportunity:
        did = f"no floor to yield ({mark.no_opportunity.replace('_', ' ')})"
    elif mark.floor_outcome == "finished":
        did = "finished its reply in time (not a yield)"
    elif mark.yielded:
        did = f"yielded in {mark.stop_latency_ms} ms"
    elif mark.yielded is False:
        did = "kept talking" if mark.stop_latency_ms is None else f"stopped late ({mark.stop_latency_ms} ms)"
    else:
        did = "not measured"
    verdict = {True: "ok", False: "WRONG", None: ""}[mark.correct]
    return f"{mark.kind} {mark.event_id}: {did} {verdict}".rstrip()


def _approval(view: SessionView, event: RunEvent) -> SessionView:
    record = payload_as(event, ApprovalEvent)
    action = record.granted or record.revoked or "?"
    approval = Approval(event.media_time_ms, record.target_id, action, record.granted is not None)
    word = "granted" if approval.granted else "revoked"
    line = TranscriptLine(event.media_time_ms, "event", f"approval {word}: {action} on {approval.target_id}", tags=(word,))
    return evolve(view, approvals=(*view.approvals, approval), transcript=(*view.transcript, line))


# --- tools and the artifact ------------------------------------------------------------------


def _tool_call(view: SessionView, event: RunEvent) -> SessionView:
    made = payload_as(event, ToolCall)
    call = ToolCallView(made.call_id, made.tool, made.args, event.media_time_ms)
    return evolve(view, tools=(*view.tools, call))


def _pending_call(view: SessionView, result: ToolResult) -> int | None:
    for index in range(len(view.tools) - 1, -1, -1):
        call = view.tools[index]
        if result.call_id is not None and call.call_id == result.call_id:
            return index
        if result.call_id is None and not call.done and call.tool == result.tool:
            return index
    return None


def _tool_result(view: SessionView, event: RunEvent) -> SessionView:
    result = payload_as(event, ToolResult)
    index = _pending_call(view, result)
    t = event.media_time_ms
    call = view.tools[index] if index is not None else ToolCallView(
        result.call_id, result.tool, result.args, result.called_at_ms if result.called_at_ms is not None else t
    )
    is_error = (result.is_error if result.is_error is not None else not result.ok) or bool(result.cancelled)
    done = evolve(
        call,
        args=call.args if call.args is not None else result.args,
        result=result.result,
        done=True,
        is_error=is_error,
        error=result.error or ("cancelled" if result.cancelled else None),
        auth_decision=result.auth_decision,
        latency_ms=result.latency_ms if result.latency_ms is not None else t - call.called_ms,
        mutations=tuple(result.mutations),
    )
    tools = (*view.tools, done) if index is None else (*view.tools[:index], done, *view.tools[index + 1:])
    view = evolve(view, tools=tools)
    return view if is_error else _apply_to_artifacts(view, done, t)


def _apply_to_artifacts(view: SessionView, call: ToolCallView, t: int) -> SessionView:
    """What a successful call did to an artifact: fields written, lifecycle moved."""
    result = call.result if isinstance(call.result, dict) else {}
    args = call.args if isinstance(call.args, dict) else {}
    artifact_id = result.get("artifact_id") or args.get("artifact_id")
    if artifact_id is None and "committed" in result:
        artifact_id = result.get("target_id")  # a commit names its artifact as the target
    if not isinstance(artifact_id, str):
        return view
    written = [m.partition(".")[2] for m in call.mutations if m.startswith(f"{artifact_id}.")]
    written = written or [str(name) for name in result.get("updated") or ()]
    fields = args.get("fields")
    values: dict[str, Any] = fields if isinstance(fields, dict) else {}
    artifact = view.artifact(artifact_id) or ArtifactView(artifact_id)
    for name in written:
        previous = artifact.field(name)
        value = values.get(name, previous.value if previous else None)
        artifact = _with_field(artifact, ArtifactField(name, value, t))
    lifecycle = result.get("lifecycle")
    if result.get("committed") is True:
        lifecycle = "COMMITTED"
    elif lifecycle is None and written and artifact.lifecycle in _DRAFTING:
        lifecycle = "DRAFT"
    if isinstance(lifecycle, str):
        artifact = evolve(artifact, lifecycle=lifecycle)
    return _with_artifact(view, artifact)


def _with_field(artifact: ArtifactView, new: ArtifactField) -> ArtifactView:
    fields = artifact.fields
    index = next((i for i, f in enumerate(fields) if f.name == new.name), None)
    fields = (*fields, new) if index is None else (*fields[:index], new, *fields[index + 1:])
    return evolve(artifact, fields=fields)


def _with_artifact(view: SessionView, artifact: ArtifactView) -> SessionView:
    items = view.artifacts
    index = next((i for i, a in enumerate(items) if a.artifact_id == artifact.artifact_id), None)
    items = (*items, artifact) if index is None else (*items[:index], artifact, *items[index + 1:])
    return evolve(view, artifacts=items)


def _artifact_mutation(view: SessionView, event: RunEvent) -> SessionView:
    mutation = payload_as(event, ArtifactMutation)
    name = mutation.path
    artifact = view.artifact(mutation.artifact_id) or ArtifactView(mutation.artifact_id)
    previous = artifact.field(name)
    if (mutation.cause or "").startswith("stale"):
        marked = evolve(previous, stale=True) if previous else ArtifactField(name, None, event.media_time_ms, True)
        return _with_artifact(view, _with_field(artifact, marked))
    # A record may omit values.
    value = mutation.new if "new" in mutation.model_fields_set else (previous.value if previous else None)
    return _with_artifact(view, _with_field(artifact, ArtifactField(name, value, event.media_time_ms)))


def _gate_status(view: SessionView, event: RunEvent) -> SessionView:
    status = payload_as(event, GateStatus)
    gates = Gates(status.GS, status.PC, status.RA, status.WA, status.pts, tuple(status.failing),
                  tuple(status.failing_items))
    view = evolve(view, gates=gates)
    if "failing_items" in status.model_fields_set:
        return _marked_stale(view, _stale_fields(status.failing_items))
    if "failing" in status.model_fields_set:  # a run logged before ``failing_items``
        return _marked_stale(view, _stale_in_words(status.failing))
    return view  # older still: no reason to clear what was marked


def _stale_fields(checks: Iterable[FailingCheck]) -> set[tuple[str, str]]:
    return {(c.artifact, c.field) for c in checks if c.kind == "stale" and c.artifact is not None and c.field is not None}


def _stale_in_words(failing: Iterable[str]) -> set[tuple[str, str]]:
    return {(match[1], match[2]) for reason in failing for match in _STALE.finditer(reason)}


def _marked_stale(view: SessionView, stale: set[tuple[str, str]]) -> SessionView:
    """Stale markers as the latest grade sees them (its failing checks list every stale field)."""
    artifacts = {
        a.artifact_id: evolve(a, fields=tuple(
            f if f.stale == ((a.artifact_id, f.name) in stale) else evolve(f, stale=not f.stale) for f in a.fields
        ))
        for a in view.artifacts
    }
    for artifact_id, name in sorted(stale):  # stale before this view saw it written
        artifact = artifacts.get(artifact_id) or ArtifactView(artifact_id)
        if artifact.field(name) is None:
            artifacts[artifact_id] = _with_field(artifact, ArtifactField(name, None, view.clock_ms, stale=True))
    return evolve(view, artifacts=tuple(artifacts.values()))


HANDLERS: dict[str, Handler] = {
    "RUN_START": _run_start,
    "RUN_END": _run_end,
    "INFRA_FAILURE": _infra_failure,
    "HARNESS_ERROR": _harness_error,
    "FLOOR_CHANGE": _floor_change,
    "AUDIO_LEVEL": _audio_level,
    "USER_TEXT": _user_text,
    "USER_AUDIO_START": _user_audio_start,
    "USER_AUDIO_END": _utterance("user", False),
    "AGENT_AUDIO_START": _utterance("agent", True),
    "AGENT_AUDIO_END": _agent_audio_end,
    "AGENT_TEXT": _agent_text,
    "AGENT_TRANSCRIPT_PARTIAL": _agent_partial,
    "AGENT_ACT": _agent_act,
    "DUPLEX_EVENT": _duplex_event,
    "APPROVAL_EVENT": _approval,
    "TOOL_CALL": _tool_call,
    "TOOL_RESULT": _tool_result,
    "ARTIFACT_MUTATION": _artifact_mutation,
    "GATE_STATUS": _gate_status,
}
