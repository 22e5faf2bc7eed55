"""One session's page data: what the session page of the viewer draws, built from its run directory.

The events go through the terminal UI's reducer (``tui/state/reducer.py``), the one reading of
``events.jsonl`` the viewers share; the grade comes from ``result.json`` merged as the TUI merges it
(:func:`tui.state.campaign_view.with_settled`); the waveforms are peaks of ``audio/stereo.wav``.
What only the web page needs on top — the gates after each call, and how much of each agent
response the user heard — is read here from the same events, through the payload models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from harness.events import EVENTS_FILE, PayloadMismatch, RunEvent, payload_as, read_event_lines
from harness.events.payloads import AgentText, SpeechAgreement
from harness.grading.report import FailedPredicate, FieldRow
from harness.results.result_record import ResultRecord

from ..state.campaign_view import CellResult, with_settled
from ..state.reducer import event_type, reduce
from ..state.session_view import GATES, DuplexMark, Gates, SessionView, evolve
from .peaks import BIN_MS, read_peaks

__all__ = ["STEREO_FILE", "GateChange", "Mark", "SessionPage", "ToolCallRow", "TranscriptRow", "build_session_page"]

#: The session's recording, L user and R agent (``harness/results/run_dir.py``).
STEREO_FILE = Path("audio") / "stereo.wav"
#: Event types the page does not draw: the recording's peaks stand for the live level meter.
_UNDRAWN = frozenset({"AUDIO_LEVEL"})
#: Failing checks kept per gate change (the full list is in the verdict).
_FAILING_SHOWN = 3


class TranscriptRow(BaseModel):
    t_ms: int
    speaker: str
    text: str
    tags: list[str] = Field(default_factory=list)
    partial: bool = False
    #: Agent lines: of ``text``, the characters the user heard, and the speech-agreement verdict
    #: (``speech``, ``cut``, ``no_audio`` ...); ``None`` where the session measured none (C0).
    heard_chars: int | None = None
    heard_verdict: str | None = None


class ToolCallRow(BaseModel):
    t_ms: int
    tool: str
    call_id: str | None = None
    args: Any = None
    result: Any = None
    done: bool = False
    is_error: bool = False
    error: str | None = None
    auth_decision: str | None = None
    latency_ms: int | None = None
    mutations: list[str] = Field(default_factory=list)


class Mark(BaseModel):
    """A moment on the timeline: ``barge-in``, ``back-channel``, ``yield``, ``approval``, ``revoke``, ``gate``."""

    t_ms: int
    kind: str
    label: str


class GateChange(BaseModel):
    t_ms: int
    gates: dict[str, bool | None]
    changed: list[str]
    failing: list[str] = Field(default_factory=list)


class SessionPage(BaseModel):
    """The file one session page reads (``data/sessions/<id>.js``)."""

    id: str
    task_id: str
    rep: int | None = None
    model: str = ""
    condition: str = ""
    run_id: str = ""
    status: str = ""
    outcome: str | None = None
    pts: int | None = None
    gates: dict[str, bool | None] = Field(default_factory=dict)
    afa: float | None = None
    reason: str | None = None
    explain: list[str] = Field(default_factory=list)
    detail: str | None = None
    predicates: list[FailedPredicate] = Field(default_factory=list)
    fields: list[FieldRow] = Field(default_factory=list)
    #: The recording's URL relative to the site, and its length; ``None`` without a recording (C0).
    audio: str | None = None
    duration_ms: float | None = None
    bin_ms: int = BIN_MS
    peaks: list[list[int]] = Field(default_factory=list)
    end_ms: int = 0
    transcript: list[TranscriptRow] = Field(default_factory=list)
    tools: list[ToolCallRow] = Field(default_factory=list)
    marks: list[Mark] = Field(default_factory=list)
    gate_changes: list[GateChange] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


def _gates(gates: Gates) -> dict[str, bool | None]:
    return {gate: gates.of(gate) for gate in GATES}


@dataclass
class _Replay:
    view: SessionView = field(default_factory=SessionView)
    #: The gates each time they changed (the first grade included).
    changes: list[GateChange] = field(default_factory=list)
    #: Each response's speech agreement: how much of it the user heard.
    heard: dict[str, SpeechAgreement] = field(default_factory=dict)
    #: What the agent's transcript said a response was, where its final text (what was played
    #: before a cut) is shorter: the reducer's line just before the final text replaced it.
    claimed: dict[str, str] = field(default_factory=dict)


def _claimed_before(view: SessionView, event: RunEvent) -> tuple[str, str] | None:
    """``(response_id, transcript so far)`` when ``event``'s final text cuts that transcript short."""
    try:
        final = payload_as(event, AgentText)
    except PayloadMismatch:
        return None  # the reducer lists it among the view's errors
    if final.response_id is None:
        return None
    response_id = str(final.response_id)
    line = next((line for line in reversed(view.transcript)
                 if line.speaker == "agent" and line.response_id == response_id), None)
    if line is None or not line.partial or len(line.text) <= len(final.text):
        return None
    return response_id, line.text


def _replayed(events: list[RunEvent]) -> _Replay:
    """The final view and what only this page shows, from one pass over the events."""
    replay = _Replay()
    view, changes, heard = replay.view, replay.changes, replay.heard
    for event in events:
        kind = event_type(event)
        if kind == "SPEECH_AGREEMENT":
            try:
                agreement = payload_as(event, SpeechAgreement)
            except PayloadMismatch as exc:
                view = evolve(view, errors=(*view.errors, str(exc)))
                continue
            heard[agreement.response_id] = agreement
            continue
        if kind == "AGENT_TEXT" and (claim := _claimed_before(view, event)) is not None:
            replay.claimed[claim[0]] = claim[1]
        before = _gates(view.gates)
        view = reduce(view, event)
        if kind == "GATE_STATUS":
            after = _gates(view.gates)
            changed = [gate for gate in GATES if after[gate] != before[gate]]
            if changed or not changes:
                changes.append(GateChange(t_ms=event.media_time_ms, gates=after, changed=changed,
                                          failing=list(view.gates.failing[:_FAILING_SHOWN])))
    replay.view = view
    return replay


def _duplex_marks(mark: DuplexMark) -> list[Mark]:
    verdict = {True: "ok", False: "wrong", None: "not scored"}[mark.correct]
    marks = [Mark(t_ms=mark.onset_ms, kind=mark.kind, label=f"{mark.kind} {mark.event_id} ({mark.type}): {verdict}")]
    if mark.yielded and mark.stop_latency_ms is not None:
        marks.append(Mark(t_ms=mark.onset_ms + mark.stop_latency_ms, kind="yield",
                          label=f"agent yielded {mark.stop_latency_ms} ms after {mark.event_id}"))
    return marks


def _marks(view: SessionView, changes: list[GateChange]) -> list[Mark]:
    marks = [m for duplex in view.duplex for m in _duplex_marks(duplex)]
    for approval in view.approvals:
        word = "approval" if approval.granted else "revoke"
        marks.append(Mark(t_ms=approval.t_ms, kind=word,
                          label=f"{'granted' if approval.granted else 'revoked'} {approval.action} on {approval.target_id}"))
    for index, change in enumerate(changes):
        now = " ".join(f"{g}{'✓' if change.gates[g] else '✗'}" for g in change.changed)
        label = f"first grade: {now}" if index == 0 else f"gates changed: {now}"
        marks.append(Mark(t_ms=change.t_ms, kind="gate", label=label))
    return sorted(marks, key=lambda m: m.t_ms)


def _transcript(replay: _Replay) -> list[TranscriptRow]:
    """The lines, an agent's as its transcript claimed them, with how much of each the user heard."""
    rows = []
    for line in replay.view.transcript:
        response_id = line.response_id
        agreement = replay.heard.get(response_id) if response_id is not None else None
        text = replay.claimed.get(response_id, line.text) if response_id is not None else line.text
        rows.append(TranscriptRow(
            t_ms=line.t_ms, speaker=line.speaker, text=text, tags=list(line.tags), partial=line.partial,
            heard_chars=None if agreement is None else min(len(text), agreement.heard_chars),
            heard_verdict=None if agreement is None else agreement.verdict,
        ))
    return rows


def build_session_page(
    page_id: str, session_dir: Path, record: ResultRecord | None, *, audio_url: str | None
) -> SessionPage:
    """The page of the session in ``session_dir``, graded by ``record`` when the cell has one.

    ``audio_url`` is where the page will find the recording (``None``: leave the audio out even if
    the session has one)."""
    events_file = session_dir / EVENTS_FILE
    events = read_event_lines(events_file, skip_types=_UNDRAWN) if events_file.is_file() else []
    replay = _replayed(events)
    view, changes = replay.view, replay.changes
    if record is not None:
        view = with_settled(view, CellResult.from_record(record.model_dump(mode="json")))
    verdict = view.verdict
    stereo = session_dir / STEREO_FILE
    peaks = read_peaks(stereo) if audio_url is not None and stereo.is_file() else None
    return SessionPage(
        id=page_id,
        task_id=view.task_id or (record.task_id if record else session_dir.parent.parent.name),
        rep=record.rep if record else None,
        model=view.model_id,
        condition=(record.condition if record else (events[0].condition if events else "")),
        run_id=view.run_id or session_dir.name,
        status=view.status,
        outcome=verdict.outcome if verdict else None,
        pts=verdict.pts if verdict else None,
        gates=_gates(view.gates),
        afa=verdict.afa if verdict else None,
        reason=verdict.reason if verdict else None,
        explain=list(verdict.explain) if verdict else [],
        detail=verdict.detail if verdict else None,
        predicates=list(verdict.predicates) if verdict else [],
        fields=list(verdict.fields) if verdict else [],
        audio=audio_url if peaks is not None else None,
        duration_ms=peaks.duration_ms if peaks else None,
        peaks=[list(channel) for channel in peaks.channels] if peaks else [],
        end_ms=view.clock_ms,
        transcript=_transcript(replay),
        tools=[ToolCallRow(t_ms=call.called_ms, tool=call.tool, call_id=call.call_id, args=call.args,
                           result=call.result, done=call.done, is_error=call.is_error, error=call.error,
                           auth_decision=call.auth_decision, latency_ms=call.latency_ms,
                           mutations=list(call.mutations)) for call in view.tools],
        marks=_marks(view, changes),
        gate_changes=changes,
        errors=list(view.errors),
    )
