"""Drive a realtime adapter directly with user speech, answering its tool calls (no runner)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from harness.agents.realtime import AgentEvent, RealtimeAdapter, ToolCallRequested, ToolResult
from harness.audio import espeak
from harness.audio.frames import FRAME_SAMPLES, AudioFrame

__all__ = ["DriveLog", "drive", "user_speech"]


async def user_speech(*texts: str) -> list[np.ndarray]:
    clips = await espeak.synthesize(list(texts), espeak.DEFAULT_USER_VOICE)
    return [clips[t].pcm for t in texts]


@dataclass
class DriveLog:
    events: list[AgentEvent] = field(default_factory=list)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


async def drive(
    adapter: RealtimeAdapter,
    utterances: list[np.ndarray],
    *,
    gap_ms: int = 2500,
    frame_pause_s: float = 0.002,
    log: DriveLog | None = None,
) -> DriveLog:
    """Each utterance, then ``gap_ms`` of silence, as 20 ms frames (10× real time by default);
    every tool call is answered with ``{"ok": true}``."""
    log = log or DriveLog()
    t = 0
    stream = np.concatenate([np.concatenate([u, np.zeros(gap_ms * 24, dtype=np.int16)]) for u in utterances])
    stream = np.concatenate([stream, np.zeros(-len(stream) % FRAME_SAMPLES, dtype=np.int16)])
    for start in range(0, len(stream), FRAME_SAMPLES):
        await adapter.send_audio(AudioFrame(stream[start : start + FRAME_SAMPLES], t))
        t += 20
        await asyncio.sleep(frame_pause_s)
        for event in adapter.poll_events():
            log.events.append(event)
            if isinstance(event, ToolCallRequested):
                await adapter.send_tool_result(ToolResult(event.call_id, event.name, {"ok": True}))
    return log
