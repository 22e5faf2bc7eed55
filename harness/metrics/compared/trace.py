"""One two-channel recording, read once, as every variant needs it.

A recording is a stereo file (left user, right agent, as ``stereo.wav`` is written) or two mono
files, at any common rate. Speech intervals come from the project's own segmentation
(:class:`~harness.audio.agent_speech.AgentSpeechMeter`: webrtcvad on 20 ms frames, a segment
from its first voiced frame to the end of its last, closed by ``gap_ms`` of silence), so on our
sessions they are the segments the runner measured. Where the recording is one of our sessions,
its events add what audio cannot tell: which user utterances were back-channels, and when tool
calls were open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

from harness.audio.agent_speech import SEGMENT_GAP_MS, AgentSpeechMeter
from harness.audio.frames import FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE
from harness.audio.resample import resample_clip
from harness.events import EventType, RunEvent, payload_as
from harness.events.payloads import ToolCall, UserAudioStart
from harness.metrics.timeline import Interval

__all__ = ["RecordingError", "Trace", "load_recording", "speech_intervals", "trace_from_audio"]


class RecordingError(ValueError):
    """A recording that cannot be read as two channels (the message names the file)."""


@dataclass
class Trace:
    """Both channels at 24 kHz int16, their speech intervals (ms) and what the events add."""

    user_pcm: np.ndarray
    agent_pcm: np.ndarray
    source_rate: int
    user: list[Interval]
    agent: list[Interval]
    #: User utterances the session marked as back-channels (empty for a foreign recording).
    backchannels: list[Interval] = field(default_factory=list)
    #: [call, result) of every tool call (empty for a foreign recording).
    tool_calls: list[Interval] = field(default_factory=list)
    #: The session's events, when the recording is one of ours.
    events: list[RunEvent] | None = None

    @property
    def duration_ms(self) -> int:
        return len(self.user_pcm) * 1000 // SAMPLE_RATE

    def is_backchannel(self, segment: Interval) -> bool:
        """The segment overlaps an utterance the session marked as a back-channel."""
        return any(min(b.end_ms, segment.end_ms) > max(b.start_ms, segment.start_ms) for b in self.backchannels)

    def pcm_16k(self, channel: str) -> np.ndarray:
        """One channel as float32 in [-1, 1] at 16 kHz (what Silero and Whisper read)."""
        pcm = self.user_pcm if channel == "user" else self.agent_pcm
        return (resample_clip(pcm.astype(np.float64), SAMPLE_RATE, 16_000) / 32768.0).astype(np.float32)


def _to_24k_int16(samples: np.ndarray, rate: int) -> np.ndarray:
    resampled = resample_clip(samples.astype(np.float64) * 32768.0, rate, SAMPLE_RATE) if rate != SAMPLE_RATE else samples * 32768.0
    return np.clip(np.round(resampled), -32768, 32767).astype(np.int16)


def _read(path: Path) -> tuple[np.ndarray, int]:
    try:
        samples, rate = sf.read(path, dtype="float64", always_2d=True)
    except (OSError, RuntimeError, sf.LibsndfileError) as exc:
        raise RecordingError(f"{path}: not a readable audio file ({exc})") from None
    return samples, int(rate)


def load_recording(stereo: Path | None = None, *, user: Path | None = None, agent: Path | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """``(user, agent, source rate)``: 24 kHz int16 channels of equal length (the shorter is padded)."""
    if stereo is not None:
        samples, rate = _read(stereo)
        if samples.shape[1] != 2:
            raise RecordingError(f"{stereo}: {samples.shape[1]} channel(s); want 2 (left user, right agent) or --user/--agent")
        left, right, right_rate = samples[:, 0], samples[:, 1], rate
    elif user is not None and agent is not None:
        user_samples, rate = _read(user)
        agent_samples, right_rate = _read(agent)
        if user_samples.shape[1] != 1 or agent_samples.shape[1] != 1:
            raise RecordingError(f"{user if user_samples.shape[1] != 1 else agent}: want a mono file")
        left, right = user_samples[:, 0], agent_samples[:, 0]
    else:
        raise RecordingError("a recording is a stereo file, or both --user and --agent")
    user_pcm, agent_pcm = _to_24k_int16(left, rate), _to_24k_int16(right, right_rate)
    length = max(len(user_pcm), len(agent_pcm))
    length += -length % FRAME_SAMPLES
    return np.pad(user_pcm, (0, length - len(user_pcm))), np.pad(agent_pcm, (0, length - len(agent_pcm))), rate


def speech_intervals(pcm: np.ndarray, gap_ms: int = SEGMENT_GAP_MS) -> list[Interval]:
    """Speech segments of one 24 kHz channel, as the runner measures the agent's."""
    meter = AgentSpeechMeter(gap_ms)
    for index in range(len(pcm) // FRAME_SAMPLES):
        meter.update(pcm[index * FRAME_SAMPLES : (index + 1) * FRAME_SAMPLES], index * FRAME_MS, None)
    meter.close()
    return [Interval(s.start_ms, s.last_voiced_end_ms) for s in meter.segments]


def trace_from_audio(user_pcm: np.ndarray, agent_pcm: np.ndarray, source_rate: int, *,
                     events: list[RunEvent] | None = None, tool_calls: list[Interval] | None = None) -> Trace:
    """The trace of a recording; ``events`` (one of our sessions) add back-channels and tool calls."""
    trace = Trace(user_pcm, agent_pcm, source_rate, speech_intervals(user_pcm), speech_intervals(agent_pcm))
    if tool_calls is not None:
        trace.tool_calls = list(tool_calls)
    if events is not None:
        trace.events = events
        trace.backchannels = _backchannels(events)
        trace.tool_calls = _tool_calls(events)
    return trace


def _backchannels(events: list[RunEvent]) -> list[Interval]:
    marked: list[Interval] = []
    for event in events:
        if event.type == EventType.USER_AUDIO_START:
            start = payload_as(event, UserAudioStart)
            if start.backchannel:
                marked.append(Interval(event.media_time_ms, event.media_time_ms + start.duration_ms))
    return marked


def _tool_calls(events: list[RunEvent]) -> list[Interval]:
    """[call, result) per tool call, paired by ``call_id`` (else in order); an unanswered call ends at its call."""
    open_calls: dict[str | None, list[int]] = {}
    spans: list[Interval] = []
    for event in events:
        if event.type == EventType.TOOL_CALL:
            open_calls.setdefault(payload_as(event, ToolCall).call_id, []).append(event.media_time_ms)
        elif event.type == EventType.TOOL_RESULT:
            key = event.payload.get("call_id")
            pending = open_calls.get(key) or open_calls.get(None) or next((v for v in open_calls.values() if v), None)
            if pending:
                spans.append(Interval(pending.pop(0), event.media_time_ms))
    spans.extend(Interval(start, start) for pending in open_calls.values() for start in pending)
    return sorted(spans, key=lambda s: s.start_ms)
