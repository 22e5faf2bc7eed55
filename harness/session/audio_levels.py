"""Audio levels of both channels for live views: RMS per window, read from the recording."""

from __future__ import annotations

import math

import numpy as np

from harness.audio.frames import FRAME_MS, ms_to_samples
from harness.audio.pcm import PCM16_SCALE
from harness.audio.stereo_recorder import StereoRecorder

__all__ = ["LEVEL_WINDOW_MS", "LevelMeter"]

LEVEL_WINDOW_MS = 100
_FLOOR_DBFS = -90.0


class LevelMeter:
    """Every ``window_ms``, the RMS level (dBFS) of each channel over the window just recorded.

    It reads the recorder's samples once per window rather than touching every frame, so a live
    view's level meter costs next to nothing on the session's hot path. A channel's sum of squares
    over a window shorter than 5 minutes is an integer below 2**53 (an int16 square is at most
    2**30), so float64 holds every partial sum exactly: one dot product gives it, in any order.
    """

    def __init__(self, recorder: StereoRecorder, window_ms: int = LEVEL_WINDOW_MS) -> None:
        self.window_ms = window_ms
        self._recorder = recorder
        self._frames_per_window = max(1, window_ms // FRAME_MS)
        self._window_samples = ms_to_samples(window_ms)
        self._frames = 0

    def frame_recorded(self) -> tuple[float, float] | None:
        """Call after each recorded frame; returns (user dBFS, agent dBFS) when a window is complete."""
        self._frames += 1
        if self._frames < self._frames_per_window:
            return None
        self._frames = 0
        recorded = self._recorder.tail(self._window_samples)
        if not np.count_nonzero(recorded):
            return _FLOOR_DBFS, _FLOOR_DBFS
        user, agent = recorded.astype(np.float64).T
        return _dbfs(float(user.dot(user)), len(recorded)), _dbfs(float(agent.dot(agent)), len(recorded))


def _dbfs(sum_squares: float, samples: int) -> float:
    if not samples or sum_squares <= 0:
        return _FLOOR_DBFS
    rms = math.sqrt(sum_squares / samples) / PCM16_SCALE
    return round(max(_FLOOR_DBFS, 20 * math.log10(rms)), 1)
