"""The inactive voice agent: connects, listens, never speaks or acts. No valid task may pass."""

from __future__ import annotations

from typing import ClassVar, Literal

from harness.audio.frames import AudioFrame

from .realtime import AgentEvent, RealtimeAdapter, SessionConfig, ToolResult

__all__ = ["NoOpVoiceAgent"]


class NoOpVoiceAgent(RealtimeAdapter):
    model_id: ClassVar[str] = "noop"
    clock_mode: ClassVar[Literal["virtual", "realtime"]] = "virtual"

    async def connect(self, config: SessionConfig) -> None:
        return None

    async def send_audio(self, frame: AudioFrame) -> None:
        return None

    async def send_tool_result(self, result: ToolResult) -> None:
        return None

    def poll_events(self) -> list[AgentEvent]:
        return []
