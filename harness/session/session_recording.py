"""Both channels as recorded: ``stereo.wav``'s samples, the live level meter and the user's floor."""

from __future__ import annotations

import numpy as np

from harness.audio.frames import FRAME_MS
from harness.audio.stereo_recorder import StereoRecorder
from harness.audio.vad import FrameVad
from harness.events import EventBus, EventType

from .audio_levels import LevelMeter

__all__ = ["SessionRecording"]

_PREALLOCATED_S = 3600.0


class SessionRecording:
    def __init__(self, log: EventBus, seconds: float) -> None:
        """``seconds``: the longest the session can run; its recorder holds that much from the start
        (up to an hour: a longer budget grows past it as needed)."""
        self._log = log
        self.recorder = StereoRecorder(initial_seconds=min(seconds, _PREALLOCATED_S))
        self._levels = LevelMeter(self.recorder)
        self._last_levels: tuple[float, float] | None = None
        self._user_vad = FrameVad()
        self._user_speaking = False

    def frame(self, user_pcm: np.ndarray, agent_pcm: np.ndarray, t: int) -> None:
        """Both channels' frames over ``[t, t+20)``: recorded, levels and the user's floor logged on change."""
        self.recorder.append(user_pcm, agent_pcm)
        levels = self._levels.frame_recorded()
        if levels is not None and levels != self._last_levels:
            # Only changes are sent (a silent stretch is one event); a consumer holds the last level.
            self._last_levels = levels
            window_ms = self._levels.window_ms
            self._log.emit(EventType.AUDIO_LEVEL, "harness", t + FRAME_MS - window_ms,
                           {"window_ms": window_ms, "user_dbfs": levels[0], "agent_dbfs": levels[1]})
        user_speaking = self._user_vad.update(user_pcm)
        if user_speaking != self._user_speaking:
            self._user_speaking = user_speaking
            self._log.emit(EventType.FLOOR_CHANGE, "user", t, {"channel": "user", "speaking": user_speaking})
