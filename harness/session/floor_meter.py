"""The one definition of "the agent is speaking", used by scheduling and scoring alike.

The agent is **speaking** at a frame boundary when audio it queued is still to play *and* a speech
segment is open on the audio that played (``agent_speech.py``: voiced within the last 500 ms). The
scheduler of duplex deliveries (``duplex_delivery.py``) waits for this state, and a delivery's
record says whether the user's onset met it; the turn logic reads :attr:`FloorMeter.last_audio_end_ms`.
Neither reads the adapter's account: the queue is what the harness will play, the segment what it
played. ``docs/duplex.md`` states the rule for each case.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.audio.agent_speech import AgentSpeechMeter, SpeechSegment
from harness.audio.frames import FRAME_MS
from harness.events import EventBus, EventType

__all__ = ["FloorMeter"]


class FloorMeter:
    """Feeds on each frame the agent channel played; logs the agent's floor and speech segments."""

    def __init__(self, log: EventBus) -> None:
        self._log = log
        self._speech = AgentSpeechMeter()
        self._queued = False
        #: End of the last frame that played any agent audio (media ms).
        self.last_audio_end_ms = 0

    @property
    def segment(self) -> SpeechSegment | None:
        """The open speech segment, if any (voiced within the last 500 ms of played audio)."""
        return self._speech.current

    @property
    def speaking(self) -> bool:
        """Audio is queued to play and a speech segment is open: the floor is the agent's."""
        return self._queued and self._speech.current is not None

    @property
    def onset_ms(self) -> int | None:
        """Start of the open speech segment (the response onset a delivery's window counts from)."""
        segment = self._speech.current
        return segment.start_ms if segment is not None else None

    def played(self, pcm: np.ndarray, t: int, response_id: str | None, audio_played: bool,
               queued_samples: int) -> None:
        """The frame over ``[t, t+20)`` played ``pcm``; ``queued_samples`` are still to play after it."""
        self._queued = queued_samples > 0
        if audio_played:
            self.last_audio_end_ms = t + FRAME_MS
        step = self._speech.update(pcm, t, response_id)
        if step.floor_changed:
            self._log.emit(EventType.FLOOR_CHANGE, "agent", t, {"channel": "agent", "speaking": step.floor})
        if step.opened is not None:
            self._log.emit(EventType.AGENT_AUDIO_START, "agent", t,
                           _present(segment=step.opened.index, response_id=step.opened.response_id))
        if step.closed is not None:
            self._ended(step.closed)

    def close(self) -> None:
        """Session end: the open segment ends at its last voiced frame."""
        closed = self._speech.close()
        if closed is not None:
            self._ended(closed)

    def _ended(self, segment: SpeechSegment) -> None:
        self._log.emit(EventType.AGENT_AUDIO_END, "agent", segment.last_voiced_end_ms,
                       _present(segment=segment.index, duration_ms=segment.duration_ms,
                                response_id=segment.response_id))


def _present(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
