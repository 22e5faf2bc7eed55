"""The Gemini Live (BidiGenerateContent) messages this adapter sends and reads, as pydantic models.

The wire is protobuf JSON: camelCase keys (the server also accepts snake_case). Client models
serialize by alias and forbid unknown keys; server models accept either spelling and ignore what
the adapter does not use. Names follow ``google.genai.types`` (the protocol fake validates what we
send against them).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True, extra="forbid")


class _Server(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


# -- client → server -------------------------------------------------------------------------


class PrebuiltVoice(_Wire):
    voice_name: str


class VoiceConfig(_Wire):
    prebuilt_voice_config: PrebuiltVoice


class SpeechConfig(_Wire):
    voice_config: VoiceConfig


class GenerationConfig(_Wire):
    response_modalities: list[Literal["AUDIO", "TEXT"]] = ["AUDIO"]
    speech_config: SpeechConfig


class Part(_Wire):
    text: str


class Content(_Wire):
    parts: list[Part]
    role: str = "user"


class FunctionDeclaration(_Wire):
    name: str
    description: str = ""
    #: The tool's JSON schema as the MCP server lists it (no conversion to Gemini's Schema).
    parameters_json_schema: dict[str, Any]


class Tool(_Wire):
    function_declarations: list[FunctionDeclaration]


class AutomaticActivityDetection(_Wire):
    disabled: bool = False
    prefix_padding_ms: int | None = None
    silence_duration_ms: int | None = None


class RealtimeInputConfig(_Wire):
    automatic_activity_detection: AutomaticActivityDetection
    activity_handling: Literal["START_OF_ACTIVITY_INTERRUPTS", "NO_INTERRUPTION"] = "START_OF_ACTIVITY_INTERRUPTS"


class SessionResumption(_Wire):
    handle: str | None = None


class Setup(_Wire):
    model: str
    generation_config: GenerationConfig
    system_instruction: Content
    tools: list[Tool]
    realtime_input_config: RealtimeInputConfig
    input_audio_transcription: dict[str, Any] = Field(default_factory=dict)
    output_audio_transcription: dict[str, Any] = Field(default_factory=dict)
    session_resumption: SessionResumption = Field(default_factory=SessionResumption)


class SetupMessage(_Wire):
    setup: Setup


class Blob(_Wire):
    data: str  # base64 PCM16
    mime_type: str


class RealtimeInput(_Wire):
    audio: Blob | None = None
    activity_start: dict[str, Any] | None = None
    activity_end: dict[str, Any] | None = None


class RealtimeInputMessage(_Wire):
    realtime_input: RealtimeInput


class FunctionResponse(_Wire):
    id: str | None = None
    name: str
    response: dict[str, Any]
    #: Set explicitly: the default (WHEN_IDLE) may never fire while audio streams.
    scheduling: Literal["INTERRUPT", "WHEN_IDLE", "SILENT"] = "INTERRUPT"


class ToolResponse(_Wire):
    function_responses: list[FunctionResponse]


class ToolResponseMessage(_Wire):
    tool_response: ToolResponse


# -- server → client -------------------------------------------------------------------------


class InlineData(_Server):
    mime_type: str = "audio/pcm;rate=24000"
    data: str = ""


class ServerPart(_Server):
    inline_data: InlineData | None = None
    text: str | None = None


class ModelTurn(_Server):
    parts: list[ServerPart] = Field(default_factory=list)


class Transcription(_Server):
    text: str | None = None
    finished: bool | None = None


class ServerContent(_Server):
    model_turn: ModelTurn | None = None
    turn_complete: bool | None = None
    interrupted: bool | None = None
    output_transcription: Transcription | None = None
    input_transcription: Transcription | None = None


class FunctionCall(_Server):
    id: str | None = None
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ToolCall(_Server):
    function_calls: list[FunctionCall] = Field(default_factory=list)


class ToolCallCancellation(_Server):
    ids: list[str] = Field(default_factory=list)


class ModalityCount(_Server):
    modality: str | None = None
    token_count: int = 0


class UsageMetadata(_Server):
    """Cumulative over the session (the adapter reports per-turn differences)."""

    prompt_token_count: int | None = None
    response_token_count: int | None = None
    cached_content_token_count: int | None = None
    prompt_tokens_details: list[ModalityCount] = Field(default_factory=list)
    response_tokens_details: list[ModalityCount] = Field(default_factory=list)


class GoAway(_Server):
    time_left: str | None = None


class ResumptionUpdate(_Server):
    new_handle: str | None = None
    resumable: bool | None = None


class SetupComplete(_Server):
    session_id: str | None = None


class ServerMessage(_Server):
    setup_complete: SetupComplete | None = None
    server_content: ServerContent | None = None
    tool_call: ToolCall | None = None
    tool_call_cancellation: ToolCallCancellation | None = None
    usage_metadata: UsageMetadata | None = None
    go_away: GoAway | None = None
    session_resumption_update: ResumptionUpdate | None = None
