"""xAI Grok Voice: the OpenAI Realtime adapter with xAI's endpoint, key, voices and session shape."""

from __future__ import annotations

from typing import ClassVar

from harness.agents.realtime import SessionConfig

from . import openai_wire, xai_wire
from .openai_realtime import OpenAIRealtimeAdapter, allowed_tools

__all__ = ["GrokVoiceAdapter"]


class GrokVoiceAdapter(OpenAIRealtimeAdapter):
    model_id: ClassVar[str] = "grok-voice"
    provider: ClassVar[str] = "xAI"
    api_key_env: ClassVar[tuple[str, ...]] = ("XAI_API_KEY",)
    endpoint_env: ClassVar[str | None] = "XAI_REALTIME_URL"
    default_endpoint: ClassVar[str] = "wss://api.x.ai/v1/realtime"
    default_model: ClassVar[str | None] = "grok-voice-think-fast-2.0"
    voices: ClassVar[frozenset[str]] = frozenset({"ara", "rex", "sal", "eve", "leo"})
    default_voice: ClassVar[str] = "ara"

    def _mcp_tool(self, config: SessionConfig) -> xai_wire.XaiMcpTool:
        mcp = config.mcp
        assert mcp is not None
        return xai_wire.XaiMcpTool(
            server_url=mcp.url, server_label=mcp.server_label, headers=dict(mcp.headers) or None,
            allowed_tools=allowed_tools(config),
        )  # fmt: skip

    def _session(self, config: SessionConfig) -> openai_wire.SessionUpdate:
        turns = config.turn_detection
        # xAI has server VAD only: semantic VAD is asked for as server VAD.
        detection = xai_wire.XaiTurnDetection(
            type=None if turns.type == "none" else "server_vad",
            threshold=turns.threshold,
            prefix_padding_ms=turns.prefix_padding_ms,
            silence_duration_ms=turns.silence_duration_ms,
        )
        return openai_wire.SessionUpdate(
            session=xai_wire.XaiSession(
                voice=self._voice, instructions=config.instructions, turn_detection=detection, tools=self._tools(config)
            )
        )
