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
    per_channel: list[list[np.ndarray]] = [[] for _ in range(info.channels)]
    full_scale = float(np.iinfo(np.int16).max)
    for block in sf.blocks(str(path), blocksize=bin_frames * _BINS_PER_BLOCK, dtype="int16", always_2d=True):
        frames = block.shape[0]
        bins = -(-frames // bin_frames)
        padded = np.zeros((bins * bin_frames, block.shape[1]), dtype=np.int32)
        padded[:frames] = np.abs(block.astype(np.int32))
        peak = padded.reshape(bins, bin_frames, block.shape[1]).max(axis=1)
        for channel in range(block.shape[1]):
            per_channel[channel].append(peak[:, channel])
    scaled = tuple(
        np.minimum(PEAK_SCALE, np.round(np.concatenate(parts) * PEAK_SCALE / full_scale)).astype(int).tolist()
        if parts else []
        for parts in per_channel
    )
    return Peaks(duration_ms=info.frames * 1000 / info.samplerate, sample_rate=info.samplerate, channels=scaled)
