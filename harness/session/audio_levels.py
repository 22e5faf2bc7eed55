"""Audio levels of both channels for live views: RMS per window, from the recorded samples."""

from __future__ import annotations

import math

import numpy as np

from harness.audio.frames import FRAME_MS
from harness.audio.pcm import PCM16_SCALE

__all__ = ["LEVEL_WINDOW_MS", "LevelMeter"]

LEVEL_WINDOW_MS = 100
_FLOOR_DBFS = -90.0


class LevelMeter:
    """Accumulates sums of squares per channel; yields (user dBFS, agent dBFS) once per window."""

    def __init__(self, window_ms: int = LEVEL_WINDOW_MS) -> None:
        self.window_ms = window_ms
        self._frames_per_window = max(1, window_ms // FRAME_MS)
        self._sums = [0.0, 0.0]
        self._samples = 0
        self._frames = 0

    def update(self, user: np.ndarray, agent: np.ndarray) -> tuple[float, float] | None:
        # int64 dot products: exact and ~1 µs per frame, so the meter costs nothing on the hot path.
        self._sums[0] += float(np.dot(user.astype(np.int64), user))
        self._sums[1] += float(np.dot(agent.astype(np.int64), agent))
        self._samples += len(user)
        self._frames += 1
        if self._frames < self._frames_per_window:
            return None
        levels = (_dbfs(self._sums[0], self._samples), _dbfs(self._sums[1], self._samples))
        self._sums = [0.0, 0.0]
        self._samples = self._frames = 0
        return levels


def _dbfs(sum_squares: float, samples: int) -> float:
    if not samples or sum_squares <= 0:
        return _FLOOR_DBFS
    rms = math.sqrt(sum_squares / samples) / PCM16_SCALE
    return round(max(_FLOOR_DBFS, 20 * math.log10(rms)), 1)
