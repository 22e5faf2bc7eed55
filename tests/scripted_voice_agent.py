"""A scripted realtime agent for tests, in the spirit of httpx's ``MockTransport``.

A test gives a handler; the agent calls it with what it has heard on every user frame and with
every tool result, and emits what the handler returns. It runs on the virtual clock, so a session
with it is deterministic. Speech is real audio (a synthetic voice stands in for words when no clip is
given: the runner measures speech on the samples, and this synthetic voice passes its checks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from harness.agents.realtime import AgentEvent, AudioDelta, RealtimeAdapter, SessionConfig, ToolResult
from harness.audio.frames import FRAME_MS, SAMPLE_RATE, AudioFrame
from harness.audio.vad import FrameVad


def voiced_audio(ms: int, *, seed: int = 0) -> bytes:
    """``ms`` of speech-like audio that VAD hears as voice and the speech check as speech.

    Harmonics of a gliding pitch whose balance shifts from syllable to syllable (spectral change,
    as formants give) under a 4 Hz syllable envelope (energy modulation): a steady tone would be
    refused as "not speech" and its words never heard (``harness/audio/speech_likeness.py``).
    """
    n = SAMPLE_RATE * ms // 1000
    t = np.arange(n) / SAMPLE_RATE
    f0 = (140 + 10 * seed) * (1 + 0.2 * np.sin(2 * np.pi * 1.3 * t))
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    syllable = 2 * np.pi * 4 * t
    tone = sum(np.sin(k * phase) * (1.05 + np.sin(0.7 * k * syllable + k)) / np.sqrt(k) for k in range(1, 10))
    envelope = 0.08 + 0.92 * np.sin(syllable / 2) ** 2
    return (tone * envelope * 2000).astype("<i2").tobytes()


@dataclass
class Heard:
    """What the scripted agent knows when its handler runs."""

    now_ms: int
    config: SessionConfig
    user_voiced: bool = False
    #: Voiced ms of the user's current utterance (pauses under 400 ms do not end it).
    user_voiced_ms: int = 0
    #: Silence since the user's voice was last heard.
    user_silence_ms: int = 0
    tool_result: ToolResult | None = None
    results: list[ToolResult] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)


Handler = Callable[[Heard], list[AgentEvent]]


class ScriptedVoiceAgent(RealtimeAdapter):
    model_id: ClassVar[str] = "scripted"
    clock_mode: ClassVar[str] = "virtual"

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._vad = FrameVad()
        self._events: list[AgentEvent] = []
        self.heard: Heard | None = None
        self.playback_reports: list[Any] = []

    async def connect(self, config: SessionConfig) -> None:
        self.heard = Heard(now_ms=0, config=config, user_silence_ms=10_000)

    async def send_audio(self, frame: AudioFrame) -> None:
        heard = self.heard
        assert heard is not None
        heard.now_ms, heard.tool_result = frame.start_ms, None
        voiced = self._vad.voiced(frame.pcm)
        if voiced:
            if heard.user_silence_ms >= 400:
                heard.user_voiced_ms = 0
            heard.user_voiced_ms += FRAME_MS
            heard.user_silence_ms = 0
        else:
            heard.user_silence_ms += FRAME_MS
        heard.user_voiced = voiced
        self._events.extend(self._handler(heard))

    async def send_tool_result(self, result: ToolResult) -> None:
        assert self.heard is not None
        self.heard.tool_result = result
        self.heard.results.append(result)
        self._events.extend(self._handler(self.heard))
        self.heard.tool_result = None

    def poll_events(self) -> list[AgentEvent]:
        events, self._events = self._events, []
        return events

    def playback(self, report: Any) -> None:
        self.playback_reports.append(report)


def say(ms: int, *, response_id: str | None = None, seed: int = 0) -> AudioDelta:
    return AudioDelta(voiced_audio(ms, seed=seed), response_id=response_id)


class TransformedAgent(RealtimeAdapter):
    """Another agent whose events pass through ``transform`` (one event in, a list out).

    Composition rather than subclassing: e.g. the oracle, but it keeps talking after it says it
    stopped, or it sends words without audio.
    """

    clock_mode: ClassVar[str] = "virtual"

    def __init__(self, inner: RealtimeAdapter, transform: Callable[[AgentEvent], list[AgentEvent]]) -> None:
        self.inner = inner
        self.model_id = f"{inner.model_id}+transformed"  # type: ignore[misc]
        self._transform = transform

    async def connect(self, config: SessionConfig) -> None:
        await self.inner.connect(config)

    async def send_audio(self, frame: AudioFrame) -> None:
        await self.inner.send_audio(frame)

    async def send_tool_result(self, result: ToolResult) -> None:
        await self.inner.send_tool_result(result)

    def poll_events(self) -> list[AgentEvent]:
        return [out for event in self.inner.poll_events() for out in self._transform(event)]
