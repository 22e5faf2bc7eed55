"""One utterance of user (or oracle) speech, ready to be played frame by frame."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .frames import FRAME_SAMPLES, SAMPLE_RATE, samples_to_ms
from .pcm import pcm16_sha256

__all__ = ["Clip", "WordTiming"]


@dataclass(frozen=True, slots=True)
class WordTiming:
    """A spoken word and where it sits in its clip (ms from the clip's first sample)."""

    word: str
    start_ms: int
    end_ms: int

    def to_json(self) -> dict[str, object]:
        return {"word": self.word, "start_ms": self.start_ms, "end_ms": self.end_ms}


@dataclass(frozen=True)
class Clip:
    """PCM16 mono 24 kHz samples of ``text``; ``source`` says where they came from
    (``prerendered:<file>``, ``espeak:<voice>``, ...), for the run log."""

    pcm: np.ndarray
    text: str
    source: str
    word_timestamps: list[WordTiming] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.pcm.dtype != np.int16 or self.pcm.ndim != 1:
            raise ValueError(f"Clip {self.text!r} wants 1-D int16 samples, got {self.pcm.dtype} {self.pcm.shape}")

    @property
    def num_samples(self) -> int:
        return len(self.pcm)

    @property
    def duration_ms(self) -> int:
        return samples_to_ms(len(self.pcm))

    @property
    def num_frames(self) -> int:
        """20 ms frames needed to play the clip (the last one padded with silence)."""
        return -(-len(self.pcm) // FRAME_SAMPLES)

    @property
    def sample_rate(self) -> int:
        return SAMPLE_RATE

    def frame(self, index: int) -> np.ndarray:
        """The ``index``-th 20 ms frame, zero-padded at the end of the clip."""
        chunk = self.pcm[index * FRAME_SAMPLES : (index + 1) * FRAME_SAMPLES]
        if len(chunk) == FRAME_SAMPLES:
            return chunk
        return np.concatenate((chunk, np.zeros(FRAME_SAMPLES - len(chunk), dtype=np.int16)))

    def sha256(self) -> str:
        return pcm16_sha256(self.pcm)
