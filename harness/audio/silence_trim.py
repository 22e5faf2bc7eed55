"""Deterministic leading/trailing silence trimming of synthesized clips.

Same rule as the published Kokoro renderer: 10 ms frames, a frame is sound when its RMS reaches
−45 dBFS, keep 30 ms of margin around the first and last sound frames. Without it espeak clips
carry silence that would delay every simulated user turn.
"""

from __future__ import annotations

import numpy as np

from .frames import ms_to_samples
from .pcm import PCM16_SCALE

__all__ = ["sound_span"]

_FRAME_MS = 10
_THRESHOLD_DBFS = -45.0
_MARGIN_MS = 30


def sound_span(pcm: np.ndarray) -> tuple[int, int]:
    """``(start, end)`` sample bounds to keep; the whole clip when no frame reaches the threshold."""
    frame = ms_to_samples(_FRAME_MS)
    count = -(-len(pcm) // frame)
    if count == 0:
        return 0, 0
    padded = np.zeros(count * frame)
    padded[: len(pcm)] = np.asarray(pcm, dtype=np.float64) / PCM16_SCALE
    rms = np.sqrt(np.mean(padded.reshape(count, frame) ** 2, axis=1))
    loud = np.flatnonzero(rms >= 10 ** (_THRESHOLD_DBFS / 20))
    if len(loud) == 0:
        return 0, len(pcm)
    margin = ms_to_samples(_MARGIN_MS)
    return max(0, int(loud[0]) * frame - margin), min(len(pcm), (int(loud[-1]) + 1) * frame + margin)
