"""The session's audio record: both channels, sample-accurate on the media clock.

One frame per channel per tick goes into a preallocated int16 array that doubles when full (no
Python list of frames), so an hour-long session costs 2 bytes per sample per channel and appending
is a slice copy. A session allocates its whole time budget up front: the array is left
uninitialised (only what was appended is ever read), so the pages a short session never reaches
are never touched, and a long one is not copied at each doubling. ``write`` produces
``stereo.wav`` (L user, R agent) and the two mono files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .audio_files import write_pcm16
from .frames import FRAME_SAMPLES, SAMPLE_RATE

__all__ = ["StereoRecorder"]

_USER, _AGENT = 0, 1


class StereoRecorder:
    """Appends (user, agent) frame pairs; sample ``k·480`` of each file is the start of tick ``k``."""

    def __init__(self, initial_seconds: float = 60.0) -> None:
        self._samples = np.empty((max(FRAME_SAMPLES, int(initial_seconds * SAMPLE_RATE)), 2), dtype=np.int16)
        self._length = 0

    @property
    def num_samples(self) -> int:
        return self._length

    @property
    def duration_ms(self) -> int:
        return self._length * 1000 // SAMPLE_RATE

    def append(self, user: np.ndarray, agent: np.ndarray) -> None:
        """Record one tick: the same number of int16 samples on each channel."""
        if len(user) != len(agent):
            raise ValueError(f"StereoRecorder.append: user has {len(user)} samples, agent {len(agent)}; one tick needs equal lengths")
        end = self._length + len(user)
        if end > len(self._samples):
            grown = np.empty((max(end, 2 * len(self._samples)), 2), dtype=np.int16)
            grown[: self._length] = self._samples[: self._length]
            self._samples = grown
        self._samples[self._length : end, _USER] = user
        self._samples[self._length : end, _AGENT] = agent
        self._length = end

    def tail(self, samples: int) -> np.ndarray:
        """A read-only view of the last ``samples`` (user, agent) pairs recorded."""
        view = self._samples[max(0, self._length - samples) : self._length]
        view.flags.writeable = False
        return view

    def channel(self, name: str) -> np.ndarray:
        """A copy of one channel (``"user"`` or ``"agent"``) as recorded so far."""
        index = {"user": _USER, "agent": _AGENT}.get(name)
        if index is None:
            raise ValueError(f"StereoRecorder.channel: unknown channel {name!r} (use 'user' or 'agent')")
        return self._samples[: self._length, index].copy()

    def write(self, audio_dir: Path) -> dict[str, Path]:
        """Write ``stereo.wav``, ``user.wav`` and ``agent.wav`` (PCM16 24 kHz) atomically."""
        audio_dir = Path(audio_dir)
        recorded = self._samples[: self._length]
        return {
            "stereo": write_pcm16(audio_dir / "stereo.wav", np.ascontiguousarray(recorded)),
            "user": write_pcm16(audio_dir / "user.wav", np.ascontiguousarray(recorded[:, _USER])),
            "agent": write_pcm16(audio_dir / "agent.wav", np.ascontiguousarray(recorded[:, _AGENT])),
        }
