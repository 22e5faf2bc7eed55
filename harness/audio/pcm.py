"""Float ↔ PCM16 conversion exactly as the published clips were encoded, and their digest.

Encoding (published): clip to [-1, 1], multiply by 32767, truncate toward zero. Decoding for replay
maps q to ``(q + 0.5·sign(q)) / 32767`` — the middle of q's truncation bin — so re-encoding the
decoded float gives back q bit for bit. The digest covers the int16 samples, never file bytes
(FLAC files embed an encoder vendor string).
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["PCM16_SCALE", "float_to_pcm16", "pcm16_sha256", "pcm16_to_float"]

PCM16_SCALE = 32767.0


def float_to_pcm16(samples: np.ndarray) -> np.ndarray:
    """Float samples in [-1, 1] (clipped) → int16, ×32767 truncated toward zero."""
    scaled = np.clip(np.asarray(samples, dtype=np.float64), -1.0, 1.0) * PCM16_SCALE
    return np.trunc(scaled).astype(np.int16)


def pcm16_to_float(pcm: np.ndarray) -> np.ndarray:
    """int16 → float64 at the centre of each truncation bin, so :func:`float_to_pcm16` inverts it."""
    q = np.asarray(pcm, dtype=np.float64)
    return (q + 0.5 * np.sign(q)) / PCM16_SCALE


def pcm16_sha256(pcm: np.ndarray) -> str:
    """SHA-256 hex of the little-endian int16 sample bytes."""
    return hashlib.sha256(np.ascontiguousarray(pcm, dtype="<i2").tobytes()).hexdigest()
