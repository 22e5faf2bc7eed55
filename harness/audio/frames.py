"""Canonical audio inside the harness: PCM16 mono 24 kHz, moved in 20 ms frames.

Resampling happens only at the edges (a provider that wants 16 kHz, a VAD that needs 16 kHz),
never inside the session loop's bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "FRAME_BYTES",
    "FRAME_MS",
    "FRAME_SAMPLES",
    "SAMPLE_RATE",
    "AudioFrame",
    "ms_to_samples",
    "samples_to_ms",
    "silence",
]

SAMPLE_RATE = 24_000
FRAME_MS = 20
FRAME_SAMPLES = SAMPLE_RATE * FRAME_MS // 1000  # 480
FRAME_BYTES = FRAME_SAMPLES * 2


def ms_to_samples(ms: int) -> int:
    return SAMPLE_RATE * ms // 1000


def samples_to_ms(samples: int) -> int:
    return samples * 1000 // SAMPLE_RATE


def silence(samples: int = FRAME_SAMPLES) -> np.ndarray:
    return np.zeros(samples, dtype=np.int16)


@dataclass(frozen=True, slots=True)
class AudioFrame:
    """20 ms of one channel at ``start_ms`` on the media clock (int16 samples, 24 kHz mono)."""

    pcm: np.ndarray
    start_ms: int

    def __post_init__(self) -> None:
        if self.pcm.dtype != np.int16 or self.pcm.ndim != 1:
            raise ValueError(f"AudioFrame wants 1-D int16 samples, got {self.pcm.dtype} {self.pcm.shape}")

    @property
    def end_ms(self) -> int:
        return self.start_ms + samples_to_ms(len(self.pcm))

    def to_bytes(self) -> bytes:
        return self.pcm.astype("<i2", copy=False).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, start_ms: int) -> AudioFrame:
        return cls(np.frombuffer(data, dtype="<i2").astype(np.int16), start_ms)
