"""One pydantic model per event type: the payload each ``events.jsonl`` line carries.

The bus validates every payload against its type's model when it is emitted, so a payload that
drifts from its documented shape is a harness bug caught where it is made, and the JSON schema in
``docs/events.schema.json`` (generated from these models) describes every line we write.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from harness.errors import AgentFailureKind

from .types import EventType

__all__ = ["PAYLOADS", "validate_payload"]


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunStart(_Payload):
    task_id: str
    model_id: str
    condition: str
    schema_version: str
    clock: str | None = None
    user_audio: str | None = None
    tool_mode: str | None = None
    #: ``bridge``, ``mcp-agent`` or ``mcp-provider`` (``harness.agents.realtime.tool_path``).
    tool_path: str | None = None
    tool_latency_ms: int | None = None
    privileged: bool | None = None
    observer: str | None = None
    acoustics: dict[str, Any] | None = None


class UserStateTransition(_Payload):
    from_state: str | None
    to_state: str
    trigger: str | None = None


class UserPlanPayload(_Payload):
    plan_id: str | None
    speech_act: str | None = None
    facts: list[str] = []
    floor_action: str | None = None
    recovered: bool | None = None


class UserText(_Payload):
    """C0's user words; a recovery move is marked as on ``USER_AUDIO_START`` (``finalize``: C0's wrap-up prompt)."""

    text: str
    recovered: bool | None = None
    closing: bool | None = None
    nudge: bool | None = None
    finalize: bool | None = None


class UserAudioStart(_Payload):
    text: str
    duration_ms: int
    plan_id: str | None = None
    barge: bool | None = None
    backchannel: bool | None = None
    recovered: bool | None = None
    closing: bool | None = None
    nudge: bool | None = None


class UserAudioEnd(_Payload):
    text: str
    plan_id: str | None = None


class AgentAudioStart(_Payload):
    """The first sample of an agent speech segment, measured on the played agent channel."""

    segment: int | None = None
    response_id: str | int | None = None


class AgentAudioEnd(_Payload):
    """The last voiced sample of an agent speech segment (VAD on the played audio)."""

    segment: int | None = None
    duration_ms: int
    response_id: str | int | None = None
    text: str | None = None
    truncated: bool | None = None


class AgentText(_Payload):
    text: str
    response_id: str | int | None = None
    item_id: str | None = None
    source: str | None = None
    turn: int | None = None


class TranscriptPartial(_Payload):
    text: str
    response_id: str | None = None
    item_id: str | None = None
    #: ``[[word, start_ms, end_ms], ...]`` where the source gives word timings.
    words: list[tuple[str, int, int]] | None = None


class AgentAct(_Payload):
    act: str
    source: str


class ToolCall(_Payload):
    tool: str
    args: Any = None
    #: ``bridge``: made through the harness; ``server``: observed at the MCP server (native tool mode).
    source: Literal["bridge", "server"] | None = None
    called_at_ms: int | None = None
    call_id: str | None = None
    response_id: str | None = None
    wall_start_ns: int | None = None


class ToolResult(_Payload):
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


class ArtifactMutation(_Payload):
    artifact_id: str
    path: str
    old: Any = None
    new: Any = None
    cause: str | None = None


class WorldMutation(_Payload):
    path: str
    old: Any = None
    new: Any = None
    cause: str | None = None


class DuplexEvent(_Payload):
    """A duplex event firing (``event_id``, ``type``) or the measurement of its delivery."""

    event_id: str | None
    type: str | None
    delivery: str | None = None
    plan_id: str | None = None
    onset_ms: int | None = None
    expected_floor_action: Literal["YIELD", "CONTINUE"] | None = None
    agent_speaking_at_onset: bool | None = None
    stop_latency_ms: int | None = None
    #: The published name of the same measurement, for published analysis tooling.
    isl_ms: int | None = None
    max_stop_latency_ms: int | None = None
    agent_yielded: bool | None = None
    overlap_ms: int | None = None
    agent_signalled_stop_ms: int | None = None
    #: Whether the agent was speaking at the onset, so there was a floor to yield or keep; when
    #: not, why (no audio at all, or audio that is not speech) — listed, never scored.
    yield_opportunity: bool | None = None
    no_opportunity: Literal["agent_silent", "agent_not_speech"] | None = None


class ApprovalEvent(_Payload):
    target_id: str
    granted: str | None = None
    revoked: str | None = None
    token_id: str | None = None
    token_ids: list[str] | None = None


class RunEnd(_Payload):
    outcome: str
    pts: int | None = None
    reason: str | None = None
    pending_verdicts: int | None = None


class InfraFailure(_Payload):
    error: str
    kind: str | None = None
    transient: bool | None = None


class SimulatorFallback(_Payload):
    user_plan_id: str | None


class GateStatus(_Payload):
    GS: bool
    PC: bool
    RA: bool
    WA: bool
    pts: int | None
    after_call: int | None = None
    #: ``"<gate>: <predicate or field>: <reason>"`` for every failing check.
    failing: list[str] = []


class SandboxLifecycle(_Payload):
    backend: str
    ready_ms: float | None = None
    metadata: dict[str, Any] = {}


class FloorChange(_Payload):
    channel: Literal["user", "agent"]
    speaking: bool


class AudioLevel(_Payload):
    """RMS level (dBFS, floor -90) of each channel over the last ``window_ms``."""

    window_ms: int
    user_dbfs: float
    agent_dbfs: float


class AgentSignal(_Payload):
    """What the adapter reported (diagnostics only: no metric reads these)."""

    signal: str
    response_id: str | None = None
    item_id: str | None = None
    detail: dict[str, Any] = {}


class AdapterInfo(_Payload):
    metadata: dict[str, Any] = {}
    usage: dict[str, Any] | None = None


class HarnessError(_Payload):
    error: str
    traceback: str


class SpeechAgreement(_Payload):
    """One agent response's words against its played audio, once it is over (``heard_speech.py``).

    The user heard ``heard_chars`` of ``transcript_chars``; the rest was never heard (no audio,
    audio that is not speech, audio the agent dropped, or more words than its voice could carry).
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
    verdict: Literal["speech", "no_audio", "no_words", "not_speech", "cut", "too_fast"]


class AgentFailurePayload(_Payload):
    """The agent under test failed at its boundary (``AgentFailureKind``): the session is still graded."""

    kind: AgentFailureKind
    detail: str


PAYLOADS: dict[EventType, type[_Payload]] = {
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
