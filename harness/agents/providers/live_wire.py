"""The OpenAI Live sessions API (GPT-Live) events this adapter sends and reads, as pydantic models.

GPT-Live is a voice front-end that delegates the task to a backend: here a Responses model with the
task's tools (``delegation.type = "responses"``), whose stream arrives wrapped in ``response.event``.
Shapes follow ``openai.types.live`` (the protocol fake validates what we send against them).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .openai_wire import AudioFormat, FunctionTool, McpTool
from .openai_wire import ErrorEvent as ErrorEvent  # the Live error event has the Realtime shape


class _Client(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Server(BaseModel):
    model_config = ConfigDict(extra="ignore")


# -- client → server -------------------------------------------------------------------------


class LiveVoice(_Client):
    voice: str


class LiveAudio(_Client):
    format: AudioFormat = Field(default_factory=AudioFormat)
    output: LiveVoice


class ResponsesBackend(_Client):
    model: str
    instructions: str
    #: Function tools (bridge), or the task's MCP server for the backend's own MCP client (native).
    tools: list[FunctionTool | McpTool]
    tool_choice: Literal["auto", "none", "required"] = "auto"


class ResponsesDelegation(_Client):
    type: Literal["responses"] = "responses"
    responses: ResponsesBackend


class LiveSession(_Client):
    model: str
    instructions: str
    audio: LiveAudio
    delegation: ResponsesDelegation


class SessionStart(_Client):
    type: Literal["session.start"] = "session.start"
    session: LiveSession


class InputAudioAppend(_Client):
    type: Literal["session.input_audio.append"] = "session.input_audio.append"
    audio: str


class FunctionCallOutput(_Client):
    type: Literal["function_call_output"] = "function_call_output"
    call_id: str
    output: str


class ResponseItemCreate(_Client):
    type: Literal["response.item.create"] = "response.item.create"
    item: FunctionCallOutput


class ResponseCreate(_Client):
    type: Literal["response.create"] = "response.create"


class SessionClose(_Client):
    type: Literal["session.close"] = "session.close"


# -- server → client -------------------------------------------------------------------------


class SessionRef(_Server):
    id: str | None = None
    model: str | None = None


class SessionStarted(_Server):
    session: SessionRef = Field(default_factory=SessionRef)


class Delta(_Server):
    """``session.output_audio.delta``, ``session.output_transcript.delta``, ``session.input_transcript.delta``."""

    delta: str = ""


class ResponseEvent(_Server):
    """A backend Responses streaming event, wrapped; ``event`` is dispatched on its ``type``."""

    event: dict[str, Any]
    delegation_id: str | None = None


class BackendItem(_Server):
    type: str
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None


class BackendItemDone(_Server):
    """Inner ``response.output_item.done``."""

    response_id: str | None = None
    item: BackendItem


class TokenDetails(_Server):
    cached_tokens: int | None = None


class BackendUsage(_Server):
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_tokens_details: TokenDetails = Field(default_factory=TokenDetails)


class BackendResponse(_Server):
    id: str | None = None
    status: str | None = None
    usage: BackendUsage | None = None


class BackendResponseDone(_Server):
    """Inner ``response.completed`` / ``response.failed`` / ``response.incomplete``."""

    response: BackendResponse = Field(default_factory=BackendResponse)


class SessionClosed(_Server):
    reason: str | None = None
