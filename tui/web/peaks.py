"""Waveform peaks of ``audio/stereo.wav``, computed once in Python so the page draws, never decodes.

A bin is :data:`BIN_MS` of media time; its value is the channel's peak absolute sample in it,
scaled to 0..:data:`PEAK_SCALE` (integers keep the session file small: about 4 bytes a bin and
channel, 25 kB a minute for both channels). The file is read in blocks, so an hour-long recording
never sits in memory whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

__all__ = ["BIN_MS", "PEAK_SCALE", "Peaks", "read_peaks"]

BIN_MS = 20
PEAK_SCALE = 100
#: Bins read per block of the file.
_BINS_PER_BLOCK = 3_000


@dataclass(frozen=True)
class Peaks:
    """Per channel (0 user / left, 1 agent / right), the peak of each :data:`BIN_MS` bin."""

    duration_ms: float
    sample_rate: int
    channels: tuple[list[int], ...]


def read_peaks(path: Path) -> Peaks:
    """The peaks of every channel of the WAV at ``path`` (a mono file has one channel)."""
    info = sf.info(str(path))
    bin_frames = max(1, round(info.samplerate * BIN_MS / 1000))
    parts: list[np.ndarray] = []
    for block in sf.blocks(str(path), blocksize=bin_frames * _BINS_PER_BLOCK, dtype="int16", always_2d=True):
        bins = -(-block.shape[0] // bin_frames)
        # Channel-major and padded to whole bins, so each bin's reduction runs over contiguous samples.
        samples = np.zeros((block.shape[1], bins * bin_frames), dtype=np.int16)
        samples[:, : block.shape[0]] = block.T
        binned = samples.reshape(block.shape[1], bins, bin_frames)
        parts.append(np.maximum(binned.max(axis=2).astype(np.int32), -binned.min(axis=2).astype(np.int32)))
    peaks = np.concatenate(parts, axis=1) if parts else np.zeros((info.channels, 0), dtype=np.int32)
    scaled = np.minimum(PEAK_SCALE, np.round(peaks * (PEAK_SCALE / np.iinfo(np.int16).max))).astype(int)
    return Peaks(duration_ms=info.frames * 1000 / info.samplerate, sample_rate=info.samplerate,
                 channels=tuple(channel.tolist() for channel in scaled))
