"""One pydantic model per event type: the payload each ``events.jsonl`` line carries.

The bus validates every payload against its type's model when it is emitted, so a payload that
drifts from its documented shape is a harness bug caught where it is made, and the JSON schema in
``docs/events.schema.json`` (generated from these models) describes every line we write.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from harness.blame.codes import AgentFailureKind

from .types import EventType

__all__ = [
    "AdapterInfo",
    "AgentAct",
    "AgentAudioEnd",
    "AgentAudioStart",
    "AgentFailurePayload",
    "AgentSignal",
    "AgentText",
    "ApprovalEvent",
    "ArtifactMutation",
    "AudioLevel",
    "DuplexEvent",
    "EventPayload",
    "FailingCheck",
    "FailingKind",
    "FloorChange",
    "GateStatus",
    "HarnessError",
    "InfraFailure",
    "PAYLOADS",
    "RunEnd",
    "RunStart",
    "SandboxLifecycle",
    "SimulatorFallback",
    "SpeechAgreement",
    "ToolCall",
    "ToolResult",
    "TranscriptPartial",
    "UserAudioEnd",
    "UserAudioStart",
    "UserPlanPayload",
    "UserStateTransition",
    "UserText",
    "WorldMutation",
    "validate_payload",
]


class EventPayload(BaseModel):
    """The base of every payload model: a key the model does not name is refused on emit."""

    model_config = ConfigDict(extra="forbid")


class RunStart(EventPayload):
    task_id: str
    model_id: str
    condition: str
    #: Published runs carry none.
    schema_version: str | None = None
    clock: str | None = None
    #: Media seconds per wall second of a realtime clock (1: paced to the wall); absent on the virtual clock.
    clock_speed: float | None = None
    user_audio: str | None = None
    tool_mode: str | None = None
    #: ``bridge``, ``mcp-agent`` or ``mcp-provider`` (``harness.agents.realtime.tool_path``).
    tool_path: str | None = None
    tool_latency_ms: int | None = None
    privileged: bool | None = None
    observer: str | None = None
    #: ``asr`` (claimed words heard only where ASR of the played audio carries them) or ``claimed``.
    hearing: str | None = None
    acoustics: dict[str, Any] | None = None


class UserStateTransition(EventPayload):
    from_state: str | None
    to_state: str
    trigger: str | None = None


class UserPlanPayload(EventPayload):
    plan_id: str | None
    speech_act: str | None = None
    facts: list[str] = []
    floor_action: str | None = None
    recovered: bool | None = None


class UserText(EventPayload):
    """C0's user words; a recovery move is marked as on ``USER_AUDIO_START`` (``finalize``: C0's wrap-up prompt)."""

    text: str
    recovered: bool | None = None
    closing: bool | None = None
    nudge: bool | None = None
    finalize: bool | None = None


class UserAudioStart(EventPayload):
    text: str
    duration_ms: int
    plan_id: str | None = None
    barge: bool | None = None
    backchannel: bool | None = None
    recovered: bool | None = None
    closing: bool | None = None
    nudge: bool | None = None

    def flags(self) -> tuple[str, ...]:
        """The marks set on this utterance, in a fixed order (the transcript's tags, the timeline's flags)."""
        marks = {"barge": self.barge, "backchannel": self.backchannel, "recovered": self.recovered,
                 "closing": self.closing, "nudge": self.nudge}
        return tuple(name for name, on in marks.items() if on)


class UserAudioEnd(EventPayload):
    text: str
    plan_id: str | None = None


class AgentAudioStart(EventPayload):
    """The first sample of an agent speech segment, measured on the played agent channel."""

    segment: int | None = None
    response_id: str | int | None = None


class AgentAudioEnd(EventPayload):
    """The last voiced sample of an agent speech segment (VAD on the played audio)."""

    segment: int | None = None
    #: Published runs log an empty ``AGENT_AUDIO_END``.
    duration_ms: int | None = None
    response_id: str | int | None = None
    text: str | None = None
    truncated: bool | None = None


class AgentText(EventPayload):
    text: str
    response_id: str | int | None = None
    item_id: str | None = None
    source: str | None = None
    turn: int | None = None


class TranscriptPartial(EventPayload):
    text: str
    response_id: str | None = None
    item_id: str | None = None
    #: ``[[word, start_ms, end_ms], ...]`` where the source gives word timings.
    words: list[tuple[str, int, int]] | None = None


class AgentAct(EventPayload):
    act: str
    source: str


class ToolCall(EventPayload):
    tool: str
    args: Any = None
    #: ``bridge``: made through the harness; ``server``: observed at the MCP server (native tool mode).
    source: Literal["bridge", "server"] | None = None
    called_at_ms: int | None = None
    call_id: str | None = None
    response_id: str | None = None
    wall_start_ns: int | None = None


class ToolResult(EventPayload):
    tool: str
    ok: bool
    result: Any = None
    error: str | None = None
    auth_decision: str | None = None
    call_id: str | None = None
    index: int | None = None
    args: Any = None
    is_error: bool | None = None
    mutations: list[str] = []
    #: Media time the call was made at; the result event itself is stamped when it was delivered.
    called_at_ms: int | None = None
    latency_ms: int | None = None
    wall_latency_ms: float | None = None
    cancelled: bool | None = None


class ArtifactMutation(EventPayload):
    artifact_id: str
    path: str
    old: Any = None
    new: Any = None
    cause: str | None = None


class WorldMutation(EventPayload):
    path: str
    old: Any = None
    new: Any = None
    cause: str | None = None


class DuplexEvent(EventPayload):
    """A duplex event firing (``event_id``, ``type``) or the measurement of its delivery."""

    event_id: str | None = None
    type: str | None = None
    delivery: str | None = None
    plan_id: str | None = None
    onset_ms: int | None = None
    expected_floor_action: Literal["YIELD", "CONTINUE"] | None = None
    agent_speaking_at_onset: bool | None = None
    stop_latency_ms: int | None = None
    #: The published name of the same measurement, for published analysis tooling (published runs
    #: store fractional milliseconds).
    isl_ms: int | float | None = None
    max_stop_latency_ms: int | None = None
    agent_yielded: bool | None = None
    overlap_ms: int | None = None
    agent_signalled_stop_ms: int | None = None
    #: Whether the agent was speaking at the onset, so there was a floor to yield or keep; when
    #: not, why (no segment open, nothing queued to play, or audio that is not speech) — listed,
    #: never scored (docs/duplex.md, "One definition of speaking").
    yield_opportunity: bool | None = None
    no_opportunity: Literal["agent_silent", "agent_paused", "agent_not_speech"] | None = None
    #: How the agent's speech ended after the onset: it dropped queued audio and stopped in time,
    #: ran out of queued audio in time (not a yield), or went on past ``max_stop_latency_ms``.
    floor_outcome: Literal["yielded", "finished", "kept_talking"] | None = None
    #: Why ``stop_latency_ms`` is null for a watched delivery.
    unmeasured: Literal["still_speaking", "session_ended"] | None = None


class ApprovalEvent(EventPayload):
    target_id: str
    granted: str | None = None
    revoked: str | None = None
    token_id: str | None = None
    token_ids: list[str] | None = None


class RunEnd(EventPayload):
    outcome: str
    pts: int | None = None
    reason: str | None = None
    pending_verdicts: int | None = None
    #: How late (wall ms) the realtime loop began a frame after its deadline: the worst and the p99.
    #: ``None`` on the virtual clock, whose frames have no wall deadline.
    frame_lateness_max_ms: float | None = None
    frame_lateness_p99_ms: float | None = None


class InfraFailure(EventPayload):
    error: str
    kind: str | None = None
    transient: bool | None = None


class SimulatorFallback(EventPayload):
    user_plan_id: str | None


#: A predicate's role (``terminal``, ``required``, ``forbidden``, ``critical_gate``, ``predicate``),
#: what is wrong with a field (``stale``, ``missing``, ``wrong``, ``pending``), or with a whole
#: artifact (``absent``, ``lifecycle``).
FailingKind = Literal[
    "terminal", "required", "forbidden", "critical_gate", "predicate",
    "stale", "missing", "wrong", "pending", "absent", "lifecycle",
]


class FailingCheck(EventPayload):
    """One check keeping the session from passing, structured so no reader parses ``failing``."""

    gate: Literal["GS", "PC", "RA", "WA"]
    #: The predicate id, the field's ``<artifact>.<field>``, or the artifact id.
    check: str
    kind: FailingKind
    #: The human words after the check (the line of ``failing`` is ``"<gate>: ..."`` built from them).
    reason: str
    #: For a WA check: its artifact, and the field when the check is a field's.
    artifact: str | None = None
    field: str | None = None


class GateStatus(EventPayload):
    GS: bool
    PC: bool
    RA: bool
    WA: bool
    pts: int | None
    after_call: int | None = None
    #: ``"<gate>: <predicate or field>: <reason>"`` for every failing check.
    failing: list[str] = []
    #: The same checks, structured (absent from logs written before it was added).
    failing_items: list[FailingCheck] = []


class SandboxLifecycle(EventPayload):
    backend: str
    ready_ms: float | None = None
    metadata: dict[str, Any] = {}


class FloorChange(EventPayload):
    channel: Literal["user", "agent"]
    speaking: bool


class AudioLevel(EventPayload):
    """RMS level (dBFS, floor -90) of each channel over the last ``window_ms``."""

    window_ms: int
    user_dbfs: float
    agent_dbfs: float


class AgentSignal(EventPayload):
    """What the adapter reported (diagnostics only: no metric reads these)."""

    signal: str
    response_id: str | None = None
    item_id: str | None = None
    detail: dict[str, Any] = {}


class AdapterInfo(EventPayload):
    metadata: dict[str, Any] = {}
    usage: dict[str, Any] | None = None


class HarnessError(EventPayload):
    error: str
    traceback: str


class SpeechAgreement(EventPayload):
    """One agent response's words against its played audio, once it is over (``heard_speech.py``).

    The user heard ``heard_chars`` of ``transcript_chars``; the rest was never heard (no audio,
    audio that is not speech, audio the agent dropped, more words than its voice could carry, or,
    with ``hearing: asr``, words that played but ASR of the audio does not carry:
    ``mismatched_chars``; ``asr_text`` is what ASR heard, its first 2,000 characters).
    """

    response_id: str
    transcript_chars: int
    received_ms: int
    played_ms: int
    active_ms: int
    voiced_ms: int
    envelope_std_db: float
    spectral_flux: float
    spectral_flatness: float
    speech_like: bool
    heard_chars: int
    unheard_chars: int
    cut: bool
    verdict: Literal["speech", "no_audio", "no_words", "not_speech", "mismatch", "cut", "too_fast"]
    mismatched_chars: int | None = None
    asr_text: str | None = None


class AgentFailurePayload(EventPayload):
    """The agent under test failed at its boundary (``AgentFailureKind``): the session is still graded."""

    kind: AgentFailureKind
    detail: str


PAYLOADS: dict[EventType, type[EventPayload]] = {
    EventType.RUN_START: RunStart,
    EventType.USER_STATE_TRANSITION: UserStateTransition,
    EventType.USER_PLAN: UserPlanPayload,
    EventType.USER_TEXT: UserText,
    EventType.USER_AUDIO_START: UserAudioStart,
    EventType.USER_AUDIO_END: UserAudioEnd,
    EventType.AGENT_AUDIO_START: AgentAudioStart,
    EventType.AGENT_AUDIO_END: AgentAudioEnd,
    EventType.AGENT_TEXT: AgentText,
    EventType.AGENT_TRANSCRIPT_PARTIAL: TranscriptPartial,
    EventType.USER_TRANSCRIPT_PARTIAL: TranscriptPartial,
    EventType.AGENT_ACT: AgentAct,
    EventType.TOOL_CALL: ToolCall,
    EventType.TOOL_RESULT: ToolResult,
    EventType.ARTIFACT_MUTATION: ArtifactMutation,
    EventType.WORLD_MUTATION: WorldMutation,
    EventType.DUPLEX_EVENT: DuplexEvent,
    EventType.APPROVAL_EVENT: ApprovalEvent,
    EventType.RUN_END: RunEnd,
    EventType.INFRA_FAILURE: InfraFailure,
    EventType.SIMULATOR_FALLBACK: SimulatorFallback,
    EventType.GATE_STATUS: GateStatus,
    EventType.SANDBOX_STARTED: SandboxLifecycle,
    EventType.FLOOR_CHANGE: FloorChange,
    EventType.AUDIO_LEVEL: AudioLevel,
    EventType.AGENT_SIGNAL: AgentSignal,
    EventType.ADAPTER_INFO: AdapterInfo,
    EventType.HARNESS_ERROR: HarnessError,
    EventType.SPEECH_AGREEMENT: SpeechAgreement,
    EventType.AGENT_FAILURE: AgentFailurePayload,
}


def validate_payload(type: EventType, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` checked against its type's model; keys left unset stay absent from the line."""
    model = PAYLOADS[type]
    return model.model_validate(payload).model_dump(mode="json", exclude_unset=True)
