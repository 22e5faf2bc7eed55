"""Reading and writing clips (FLAC, WAV) as PCM16 at the harness rate, atomically.

A clip at another rate is an error naming the file: resampling silently on read would change the
samples whose digest the index records.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from harness.atomic_write import atomic_path

from .frames import SAMPLE_RATE

__all__ = ["AudioFileError", "read_pcm16", "write_pcm16"]

_FORMATS = {".flac": "FLAC", ".wav": "WAV"}


class AudioFileError(ValueError):
    """A clip file that cannot be used as harness audio (wrong rate, format or shape)."""


def _format_for(path: Path) -> str:
    try:
        return _FORMATS[path.suffix.lower()]
    except KeyError:
        raise AudioFileError(
            f"{path}: unsupported audio file suffix {path.suffix!r} (use one of {', '.join(_FORMATS)})"
        ) from None


def read_pcm16(path: Path, *, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """The file's samples as int16: shape (n,) for mono, (n, channels) otherwise."""
    path = Path(path)
    with sf.SoundFile(path) as handle:
        if handle.samplerate != sample_rate:
            raise AudioFileError(f"{path}: sample rate is {handle.samplerate} Hz, expected {sample_rate} Hz")
        pcm = handle.read(dtype="int16", always_2d=False)
    return pcm


def write_pcm16(path: Path, pcm: np.ndarray, *, sample_rate: int = SAMPLE_RATE) -> Path:
    """Write int16 samples ((n,) mono or (n, channels)) as PCM_16 FLAC/WAV by suffix, atomically."""
    path = Path(path)
    audio_format = _format_for(path)
    if pcm.dtype != np.int16 or pcm.ndim not in (1, 2):
        raise AudioFileError(f"{path}: expected int16 samples of shape (n,) or (n, ch), got {pcm.dtype} {pcm.shape}")
    with atomic_path(path) as tmp:
        sf.write(tmp, pcm, sample_rate, subtype="PCM_16", format=audio_format)
    return path
