"""The interface every realtime (speech-to-speech) agent implements, and its normalized events.

Provider specifics stay inside each adapter: the duplex runner only sends 20 ms user frames, tool
results and playback reports, and drains normalized events once per frame. Adapters on the virtual
clock (the oracle, the no-op agent, scripted test agents) produce their events synchronously
inside ``send_audio`` / ``send_tool_result``, which makes their sessions deterministic; adapters for
live providers queue events from their socket reader and run on the realtime clock.

Nothing an adapter reports is taken as a measurement: speech activity, overlap, yield and stop
latency are measured on the agent audio as it played. ``PlayoutCleared``, ``SpeechStarted`` and
response ids are logged as diagnostics and used to route audio and transcripts, nothing more.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from harness.blame.codes import AdapterErrorCode

if TYPE_CHECKING:
    from harness.audio.frames import AudioFrame  # numpy: not loaded for a text campaign
    from harness.tasks.models import ReferencePolicy

__all__ = [
    "REALTIME_PATH",
    "AdapterError",
    "AdapterInfo",
    "AgentEvent",
    "AudioDelta",
    "CallEnded",
    "ErrorKind",
    "McpCallReported",
    "McpEndpoint",
    "ToolPath",
    "tool_path",
    "PlaybackReport",
    "PlayoutCleared",
    "RealtimeAdapter",
    "ResponseDone",
    "SessionConfig",
    "SpeechStarted",
    "SpeechStopped",
    "ToolCallCancelled",
    "ToolCallRequested",
    "ToolResult",
    "TranscriptDelta",
    "TranscriptDone",
    "TurnDetection",
    "Usage",
    "UserTranscript",
]

#: Where an agent image (and the harness's own realtime server) serves the OpenAI Realtime
#: protocol. ``sandbox.agent_container_config`` holds the same default (the sandbox imports nothing
#: of the harness); a test keeps the two equal.
REALTIME_PATH = "/v1/realtime"


@dataclass(frozen=True, slots=True)
class AudioDelta:
    """Agent speech, PCM16 mono 24 kHz little-endian. It plays out at media speed, queued."""

    pcm: bytes
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class TranscriptDelta:
    """Words of the agent's current response as the provider streams them."""

    text: str
    response_id: str | None = None
    item_id: str | None = None
    #: ``(word, start_ms, end_ms)`` relative to the item's first sample, where the provider gives them.
    words: tuple[tuple[str, int, int], ...] | None = None


@dataclass(frozen=True, slots=True)
class TranscriptDone:
    """The provider's final transcript of one item (it replaces the item's deltas)."""

    text: str
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class UserTranscript:
    """What the provider heard the user say (diagnostic: the user's words are known to the harness)."""

    text: str
    final: bool = True
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class SpeechStarted:
    """The agent (or its provider's VAD) noticed the user speaking."""

    audio_start_ms: int | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class SpeechStopped:
    """The agent noticed the user stopped speaking."""

    audio_end_ms: int | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallRequested:
    call_id: str
    name: str
    #: JSON text as the model produced it; may be malformed (the runner reports that to the model).
    arguments: str
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallCancelled:
    """The provider withdrew calls it had requested (e.g. Gemini's ``toolCallCancellation``)."""

    call_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PlayoutCleared:
    """The agent says it stopped its own speech: audio it sent that has not played yet is dropped.

    Dropping is the agent's decision; the harness never cancels agent speech. Whether the agent
    actually went quiet is measured on the audio that played afterwards, not taken from this.
    """

    response_id: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Normalized token usage of one response (``None`` where the provider does not say)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    input_audio_tokens: int | None = None
    output_audio_tokens: int | None = None
    input_text_tokens: int | None = None
    output_text_tokens: int | None = None
    cached_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ResponseDone:
    """The agent finished producing a response (its audio may still be playing)."""

    response_id: str | None = None
    usage: Usage | None = None
    status: str | None = None


@dataclass(frozen=True, slots=True)
class CallEnded:
    """The agent hangs up once its queued audio has played."""


ErrorKind = Literal["transient", "rate_limited", "auth", "bad_request", "provider"]


@dataclass(frozen=True, slots=True)
class AdapterError:
    """A provider error, classified by the adapter from the provider's own error type or code.

    ``transient`` and ``rate_limited`` make the session an infrastructure failure (retried, never
    scored); ``auth`` and ``bad_request`` stop the campaign (nothing will succeed); ``provider`` is
    logged and the session goes on.
    """

    message: str
    kind: ErrorKind = "provider"
    retry_after_s: float | None = None
    #: The provider's own code, or what our adapter says the peer did
    #: (:class:`~harness.blame.codes.AdapterErrorCode`).
    code: str | None = None

    def __post_init__(self) -> None:
        # Our adapters name the code by its enum member; the event carries the plain string, because
        # the agent boundary takes no str subclass in an event (an agent's could lie about itself).
        if isinstance(self.code, AdapterErrorCode):
            object.__setattr__(self, "code", self.code.value)

    @property
    def transient(self) -> bool:
        return self.kind in ("transient", "rate_limited")


@dataclass(frozen=True, slots=True)
class AdapterInfo:
    """Metadata the adapter learned while connected (resolved model id, session id, limits)."""

    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class McpCallReported:
    """The provider says its own MCP client is making, or made, a call (native tool mode).

    Diagnostics only: never executed by the harness and never used for grading (the task server's
    call stream is the record). ``started`` / ``completed`` / ``failed`` give the call's round trip
    as the provider reports it.
    """

    call_id: str
    name: str
    status: Literal["started", "completed", "failed"]
    response_id: str | None = None
    error: str | None = None


AgentEvent = (
    AudioDelta
    | TranscriptDelta
    | TranscriptDone
    | UserTranscript
    | SpeechStarted
    | SpeechStopped
    | ToolCallRequested
    | ToolCallCancelled
    | McpCallReported
    | PlayoutCleared
    | ResponseDone
    | CallEnded
    | AdapterError
    | AdapterInfo
)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What the runner sends back for one call: Gemini needs the name, every provider the id."""

    call_id: str
    name: str
    output: Any
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class PlaybackReport:
    """How much of one item's audio has actually played on the agent channel (for truncation)."""

    response_id: str | None
    item_id: str | None
    played_ms: int


@dataclass(frozen=True)
class TurnDetection:
    """Turn detection the provider should run, so the model itself hears barge-ins."""

    type: Literal["server_vad", "semantic_vad", "none"] = "server_vad"
    threshold: float | None = None
    prefix_padding_ms: int | None = None
    silence_duration_ms: int | None = None
    eagerness: Literal["low", "medium", "high", "auto"] | None = None
    create_response: bool = True
    interrupt_response: bool = True


@dataclass(frozen=True)
class McpEndpoint:
    """The task's MCP endpoint, for agents that call tools themselves (native tool mode)."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    server_label: str = "task"
    allowed_tools: tuple[str, ...] = ()
    require_approval: str = "never"


#: How a session's agent reached the task's tools (``result.json`` ``tool_path``, ``run.start``).
ToolPath = Literal["bridge", "mcp-agent", "mcp-provider"]


def tool_path(tool_mode: str, adapter: RealtimeAdapter) -> ToolPath:
    """``bridge`` (the harness executes function calls), else whose MCP client made the calls."""
    if tool_mode != "native":
        return "bridge"
    return "mcp-provider" if adapter.mcp_client == "provider" else "mcp-agent"


def bare_tool_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """``{name, description, parameters}`` from a bare schema or a chat-style one
    (``{"type": "function", "function": {name, description, parameters}}``), as the reference accepts both."""
    wrapped = tool.get("function")
    if tool.get("type") == "function" and isinstance(wrapped, dict) and "name" not in tool:
        return dict(wrapped)
    return tool


@dataclass
class SessionConfig:
    instructions: str
    #: Tool schemas as listed by the task's MCP server (name, description, JSON-schema parameters);
    #: chat-style wrapped schemas are unwrapped here, once, for every adapter.
    tools: list[dict[str, Any]]
    voice: str = "soft-spoken-gentleman"
    turn_detection: TurnDetection = field(default_factory=TurnDetection)
    tool_mode: Literal["bridge", "native"] = "bridge"
    #: Set in native tool mode only.
    mcp: McpEndpoint | None = None
    #: The task's reference policy, given only to models registered as ``privileged`` (the oracle);
    #: whether it was given is recorded in ``result.json``.
    reference_policy: ReferencePolicy | None = None

    def __post_init__(self) -> None:
        self.tools = [bare_tool_schema(tool) for tool in self.tools]


class RealtimeAdapter(ABC):
    """One agent session. Constructors do no I/O; ``connect`` does.

    Raises:
        ConnectionError (or a subclass): infrastructure failure while connecting or streaming;
            the session is retried and never scored against the model.
        harness.blame.errors.ProviderError: the provider refused the session (bad key, bad
            request): the campaign stops, naming it.
    """

    model_id: ClassVar[str]
    #: ``virtual``: deterministic in-process agent, runs on the virtual media clock.
    #: ``realtime``: a live provider; frames are paced to wall time.
    clock_mode: ClassVar[Literal["virtual", "realtime"]] = "realtime"
    #: Whose MCP client calls the tools in native tool mode: the agent's own (in this process or
    #: its container) or the provider's (a cloud model given the endpoint in its session).
    mcp_client: ClassVar[Literal["agent", "provider"]] = "agent"

    @abstractmethod
    async def connect(self, config: SessionConfig) -> None: ...

    @abstractmethod
    async def send_audio(self, frame: AudioFrame) -> None:
        """One 20 ms user frame (silence included: the stream is continuous)."""

    @abstractmethod
    async def send_tool_result(self, result: ToolResult) -> None: ...

    @abstractmethod
    def poll_events(self) -> list[AgentEvent]:
        """Every event available now, in order; never blocks."""

    def playback(self, report: PlaybackReport) -> None:
        """How much of an item has played so far (called as it plays); OpenAI truncation needs it."""
        return None

    def metadata(self) -> dict[str, Any]:
        """What the adapter knows of its session (provider model id, session id), for ``result.json``."""
        return {}

    async def close(self) -> None:
        return None
