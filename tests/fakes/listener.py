"""The scripted fake agents' ears: the oracle's turn-taking manners, on the user-audio timeline.

A fake provider cannot see the harness's clock; it counts the user audio it receives (20 ms
frames at 24 kHz), as a real provider's VAD does, and decides on that timeline when the user
started speaking, barged in over its audio, or finished a turn.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from harness.agents.oracle_voice import REPLY_AFTER_SILENCE_MS, UTTERANCE_GAP_MS, YIELD_AFTER_SPEECH_MS
from harness.audio.frames import FRAME_MS
from harness.audio.vad import FrameVad

__all__ = ["Heard", "Listener"]


class Heard(Enum):
    SPEECH_STARTED = "speech_started"  # the user started talking on a free floor
    BARGE_IN = "barge_in"  # the user has talked over the agent's audio long enough to yield
    TURN_END = "turn_end"  # the user's turn is over: answer now


class Listener:
    def __init__(self) -> None:
        self.vad = FrameVad()
        self.now_ms = 0
        self.audio_until_ms = 0
        self._silence_ms = UTTERANCE_GAP_MS
        self._utterance_voiced_ms = 0
        self._announced = False
        self._turn_heard = False

    @property
    def talking(self) -> bool:
        return self.audio_until_ms > self.now_ms

    def speak(self, duration_ms: int) -> None:
        """The agent sent this much audio now (the client plays it after what is queued)."""
        self.audio_until_ms = max(self.audio_until_ms, self.now_ms) + duration_ms

    def hear(self, frame: np.ndarray, *, busy: bool) -> list[Heard]:
        """One 20 ms frame of user audio; ``busy``: the agent cannot take a turn now."""
        heard = []
        voiced = self.vad.voiced(frame)
        if voiced:
            if self._silence_ms >= UTTERANCE_GAP_MS:
                self._utterance_voiced_ms = 0
            self._utterance_voiced_ms += FRAME_MS
            self._silence_ms = 0
        else:
            self._silence_ms += FRAME_MS
        if self.talking and voiced and self._utterance_voiced_ms >= YIELD_AFTER_SPEECH_MS:
            self.audio_until_ms = self.now_ms  # the agent yields: its client stops playing
            self._announced = True
            heard.append(Heard.BARGE_IN)
        if voiced and not self.talking:
            self._turn_heard = True
            if not self._announced:
                self._announced = True
                heard.append(Heard.SPEECH_STARTED)
        if self._turn_heard and self._silence_ms >= REPLY_AFTER_SILENCE_MS and not self.talking and not busy:
            self._turn_heard = self._announced = False
            heard.append(Heard.TURN_END)
        self.now_ms += FRAME_MS
        return heard
