"""The GA OpenAI Realtime events this adapter sends and reads, as pydantic models.

Client events are strict (``extra="forbid"``: a typo fails here, not at the provider). Server
events ignore fields we do not use, so a provider adding fields never breaks a session. Names and
shapes follow ``openai.types.realtime`` (the protocol fake validates what we send against it).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

# -- client → server (``session.update``'s session object is GA-only; dialects bring their own) -------------------------------------------------------------------------


class _Client(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _ClientEvent(_Client):
    #: Optional; errors about this event quote it (StepFun's dialect sends one on every event).
    event_id: str | None = None


class AudioFormat(_Client):
    type: Literal["audio/pcm"] = "audio/pcm"
    rate: Literal[24000] = 24000


class ServerVad(_Client):
    type: Literal["server_vad"] = "server_vad"
    threshold: float | None = None
    prefix_padding_ms: int | None = None
    silence_duration_ms: int | None = None
    create_response: bool = True
    interrupt_response: bool = True


class SemanticVad(_Client):
    type: Literal["semantic_vad"] = "semantic_vad"
    eagerness: Literal["low", "medium", "high", "auto"] | None = None
    create_response: bool = True
    interrupt_response: bool = True


class AudioInput(_Client):
    format: AudioFormat = Field(default_factory=AudioFormat)
    #: ``None`` switches the provider's turn detection off; it is always sent (``null`` then).
    turn_detection: ServerVad | SemanticVad | None = None

    @model_serializer(mode="wrap")
    def _always_send_turn_detection(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        data.setdefault("turn_detection", None)
        return data


class AudioOutput(_Client):
    format: AudioFormat = Field(default_factory=AudioFormat)
    voice: str


class SessionAudio(_Client):
    input: AudioInput
    output: AudioOutput


class FunctionTool(_Client):
    type: Literal["function"] = "function"
    name: str
    description: str = ""
    parameters: dict[str, Any]


class McpTool(_Client):
    """A remote MCP server the provider's own MCP client calls (native tool mode).

    GA ``openai.types.realtime`` ``Mcp`` tool: the provider lists and calls the tools itself; the
    harness only observes the calls at the server. ``headers`` carry the session's agent token.
    """

    type: Literal["mcp"] = "mcp"
    server_label: str
    server_url: str
    headers: dict[str, str] | None = None
    require_approval: Literal["always", "never"] = "never"
    allowed_tools: list[str] | None = None


class RealtimeSession(_Client):
    type: Literal["realtime"] = "realtime"
    output_modalities: list[Literal["audio", "text"]] = ["audio"]  # pydantic copies it for each model
    instructions: str
    audio: SessionAudio
    tools: list[FunctionTool | McpTool]
    tool_choice: Literal["auto", "none", "required"] = "auto"
    model: str | None = None


class SessionUpdate(_ClientEvent):
    type: Literal["session.update"] = "session.update"
    session: BaseModel

    @model_serializer(mode="wrap")
    def _serialize_session_as_its_own_type(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        data["session"] = self.session.model_dump(mode="json", exclude_none=True)
        return data


class InputAudioBufferAppend(_ClientEvent):
    type: Literal["input_audio_buffer.append"] = "input_audio_buffer.append"
    audio: str  # base64 PCM16 24 kHz


class InputAudioBufferCommit(_ClientEvent):
    type: Literal["input_audio_buffer.commit"] = "input_audio_buffer.commit"


class FunctionCallOutputItem(_Client):
    type: Literal["function_call_output"] = "function_call_output"
    call_id: str
    output: str


class ConversationItemCreate(_ClientEvent):
    type: Literal["conversation.item.create"] = "conversation.item.create"
    item: FunctionCallOutputItem


class ConversationItemTruncate(_ClientEvent):
    type: Literal["conversation.item.truncate"] = "conversation.item.truncate"
    item_id: str
    content_index: int = 0
    audio_end_ms: int


class ResponseCreate(_ClientEvent):
    type: Literal["response.create"] = "response.create"


# -- server → client -------------------------------------------------------------------------


class _Server(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SessionInfo(_Server):
    id: str | None = None
    model: str | None = None


class SessionEvent(_Server):
    """``session.created`` / ``session.updated``."""

    session: SessionInfo = Field(default_factory=SessionInfo)


class SpeechStartedEvent(_Server):
    audio_start_ms: int | None = None
    item_id: str | None = None


class SpeechStoppedEvent(_Server):
    audio_end_ms: int | None = None
    item_id: str | None = None


class ResponseRef(_Server):
    id: str | None = None


class ResponseCreatedEvent(_Server):
    response: ResponseRef = Field(default_factory=ResponseRef)


class OutputAudioDeltaEvent(_Server):
    response_id: str | None = None
    item_id: str | None = None
    delta: str


class TextDeltaEvent(_Server):
    """``response.output_audio_transcript.delta`` and ``response.output_text.delta``."""

    response_id: str | None = None
    item_id: str | None = None
    delta: str = ""


class TranscriptDoneEvent(_Server):
    response_id: str | None = None
    item_id: str | None = None
    transcript: str | None = None
    text: str | None = None


class FunctionCallArgumentsDoneEvent(_Server):
    response_id: str | None = None
    item_id: str | None = None
    call_id: str
    name: str | None = None
    arguments: str = ""


class McpCallError(_Server):
    type: str | None = None
    message: str = ""


class OutputItem(_Server):
    id: str | None = None
    type: str
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    #: ``mcp_call`` items (the provider's own MCP calls, native tool mode).
    server_label: str | None = None
    error: McpCallError | None = None


class OutputItemAddedEvent(_Server):
    response_id: str | None = None
    item: OutputItem


class McpCallStatusEvent(_Server):
    """``response.mcp_call.in_progress`` / ``.completed`` / ``.failed``."""

    item_id: str
    output_index: int | None = None


class McpListTool(_Server):
    name: str


class McpListToolsItem(_Server):
    id: str | None = None
    type: str
    server_label: str | None = None
    tools: list[McpListTool] = Field(default_factory=list)


class ConversationItemDoneEvent(_Server):
    item: McpListToolsItem


class McpListToolsStatusEvent(_Server):
    """``mcp_list_tools.in_progress`` / ``.completed`` / ``.failed``."""

    item_id: str


class OutputItemDoneEvent(_Server):
    response_id: str | None = None
    item: OutputItem


class TokenDetails(_Server):
    text_tokens: int | None = None
    audio_tokens: int | None = None
    cached_tokens: int | None = None


class ResponseUsage(_Server):
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_token_details: TokenDetails = Field(default_factory=TokenDetails)
    output_token_details: TokenDetails = Field(default_factory=TokenDetails)


class ResponseBody(_Server):
    id: str | None = None
    status: str | None = None
    output: list[OutputItem] = Field(default_factory=list)
    usage: ResponseUsage | None = None


class ResponseDoneEvent(_Server):
    response: ResponseBody = Field(default_factory=ResponseBody)


class InputTranscriptionEvent(_Server):
    item_id: str | None = None
    transcript: str = ""


class ErrorBody(_Server):
    type: str | None = None
    code: str | None = None
    message: str = ""


class ErrorEvent(_Server):
    error: ErrorBody = Field(default_factory=ErrorBody)
