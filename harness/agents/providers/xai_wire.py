"""xAI Grok Voice's session object: OpenAI Realtime event names, its own session shape.

Turn detection sits at the top level (``{"type": null}`` switches it off), voices are xAI's, and
there is no ``type: "realtime"``. The other events are the GA ones (``openai_wire``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from .openai_wire import AudioFormat, FunctionTool

__all__ = ["XaiAudio", "XaiMcpTool", "XaiSession", "XaiTurnDetection"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class XaiTurnDetection(_Strict):
    type: Literal["server_vad"] | None = "server_vad"
    threshold: float | None = None
    prefix_padding_ms: int | None = None
    silence_duration_ms: int | None = None

    @model_serializer(mode="wrap")
    def _always_send_type(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        data.setdefault("type", None)  # {"type": null} switches xAI's turn detection off
        return data


class XaiFormat(_Strict):
    format: AudioFormat = Field(default_factory=AudioFormat)


class XaiAudio(_Strict):
    input: XaiFormat = Field(default_factory=XaiFormat)
    output: XaiFormat = Field(default_factory=XaiFormat)


class XaiMcpTool(_Strict):
    """xAI's remote MCP tool (docs.x.ai ``/developers/tools/remote-mcp``, "supported in the Voice
    Agent API"): ``server_url`` and ``server_label`` required, ``allowed_tools`` and ``headers``
    optional; ``require_approval`` is not supported there, so it is never sent. Tool names reach
    the model prefixed with the label; the calls reach our server under their own names."""

    type: Literal["mcp"] = "mcp"
    server_url: str
    server_label: str
    headers: dict[str, str] | None = None
    allowed_tools: list[str] | None = None


class XaiSession(_Strict):
    voice: str
    instructions: str
    turn_detection: XaiTurnDetection
    audio: XaiAudio = Field(default_factory=XaiAudio)
    tools: list[FunctionTool | XaiMcpTool]
