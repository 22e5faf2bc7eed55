"""The agent's speech as it actually played: segments measured on the agent channel's samples.

Every duplex figure (response onset, overlap, yield, stop latency) is read from these segments,
which come from the same samples as the right channel of ``stereo.wav`` — never from what the
adapter says it did. An agent that announces it stopped and keeps talking is still speaking here.

A segment starts at its first voiced frame and ends at the end of its last voiced frame once
``gap_ms`` of silence follow it (shorter pauses, between words or sentences, stay inside it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.audio.frames import FRAME_MS
from harness.audio.vad import FrameVad

__all__ = ["SEGMENT_GAP_MS", "AgentSpeechMeter", "MeterStep", "SpeechSegment"]

#: Silence that ends a speech segment; pauses between an agent's sentences are shorter.
SEGMENT_GAP_MS = 500


@dataclass
class SpeechSegment:
    index: int
    start_ms: int
    #: End of the last voiced frame so far (final once ``closed``).
    last_voiced_end_ms: int
    closed: bool = False
    #: The adapter's response id whose audio was playing at the segment's first frame (diagnostic).
    response_id: str | None = None

    @property
    def duration_ms(self) -> int:
        return self.last_voiced_end_ms - self.start_ms


@dataclass(frozen=True, slots=True)
class MeterStep:
    """What one played frame changed: the floor state (smoothed VAD) and segment boundaries."""

    floor: bool
    floor_changed: bool
    opened: SpeechSegment | None
    closed: SpeechSegment | None


_UNCHANGED = {floor: MeterStep(floor, False, None, None) for floor in (False, True)}


class AgentSpeechMeter:
    """Feeds on each played agent frame; reports the floor state and segments opening and closing."""

    def __init__(self, gap_ms: int = SEGMENT_GAP_MS) -> None:
        self._vad = FrameVad()
        self._gap_ms = gap_ms
        self.segments: list[SpeechSegment] = []
        self.current: SpeechSegment | None = None

    def update(self, frame: np.ndarray, t: int, response_id: str | None) -> MeterStep:
        """The frame that played over ``[t, t+20)``."""
        voiced = self._vad.voiced(frame)
        was_floor = self._vad.speaking
        floor = self._vad.smooth(voiced)
        opened = closed = None
        if voiced:
            if self.current is None:
                self.current = SpeechSegment(len(self.segments), t, t + FRAME_MS, response_id=response_id)
                self.segments.append(self.current)
                opened = self.current
            else:
                self.current.last_voiced_end_ms = t + FRAME_MS
        elif self.current is not None and t + FRAME_MS - self.current.last_voiced_end_ms >= self._gap_ms:
            closed, self.current = self.current, None
            closed.closed = True
        if opened is None and closed is None and floor == was_floor:
            return _UNCHANGED[floor]  # most frames: no allocation
        return MeterStep(floor, floor != was_floor, opened, closed)

    @property
    def speaking(self) -> bool:
        """A segment is open: the agent has spoken within the last ``gap_ms``."""
        return self.current is not None

    def close(self) -> SpeechSegment | None:
        """End of the session: the open segment, if any, ends at its last voiced frame."""
        closed, self.current = self.current, None
        if closed is not None:
            closed.closed = True
        return closed
