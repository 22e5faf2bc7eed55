"""Is this audio speech? A cheap, streaming check that a constant tone, a sweep or noise fail.

The simulated user hears an agent's words only over audio that sounds like someone saying them
(``docs/duplex.md``, "Only what played is heard"). A voice activity detector alone cannot decide
that: webrtcvad calls a harmonic tone and white noise voice. Three properties of speech can, each
measured on 20 ms frames of the audio that played, in one pass and constant memory:

- **syllabic energy modulation** — speech rises and falls by 10–20 dB several times a second
  (vowels against consonants and pauses); a tone, a sweep or steady noise stays within a dB or
  two. Measured as the standard deviation of the 10 ms log energy (floored at −60 dBFS) from the
  first to the last active frame, so leading or trailing silence never counts;
- **spectral change** — formants and pitch move from one frame to the next; a tone's spectrum,
  even an amplitude-modulated or gated one, does not. Measured as the mean cosine distance between the
  magnitude spectra of consecutive active frames (spectral flux);
- **harmonic structure** — voiced speech has a peaky spectrum; white noise is flat. Measured as
  the mean spectral flatness (geometric over arithmetic mean of the power spectrum) of active frames.

Voiced time, for the duration plausibility of a transcript, is webrtcvad at aggressiveness 3 (its
strictest). Figures measured on this machine are in ``docs/duplex.md``; the unit tests hold them
on the demo suite's clips, espeak speech and synthetic signals.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from .frames import FRAME_MS, FRAME_SAMPLES
from .pcm import PCM16_SCALE
from .vad import FrameVad

__all__ = [
    "MIN_ENVELOPE_STD_DB",
    "MAX_SPECTRAL_FLATNESS",
    "MIN_ACTIVE_MS",
    "MIN_SPECTRAL_FLUX",
    "SpeechLikeness",
    "SpeechMeasure",
    "measure_speech",
]

#: A 20 ms frame is active (sound, not silence) above this RMS level.
ACTIVE_DBFS = -45.0
#: 10 ms energies are floored here, so digital silence inside speech counts as a deep dip, not −∞.
ENERGY_FLOOR_DBFS = -60.0
#: Speech measured 8.3–16.9 dB (demo clips), 5.6 dB for a one-syllable espeak "Yes."; a tone, a
#: sweep or noise at most 1.5 dB. (A tone amplitude-modulated at a syllable rate reaches 6.7 dB:
#: spectral flux rejects it.)
MIN_ENVELOPE_STD_DB = 4.0
#: Speech measured 0.10–0.23; tones, amplitude-modulated tones and sweeps at most 0.03.
MIN_SPECTRAL_FLUX = 0.05
#: White noise measured 0.56; speech at most 0.062.
MAX_SPECTRAL_FLATNESS = 0.3
#: Less active audio than this is too little to judge (the shortest "Okay." has about 400 ms).
MIN_ACTIVE_MS = 200

_HOP = FRAME_SAMPLES // 2  # 10 ms
_WINDOW = np.hanning(FRAME_SAMPLES)
_BINS = FRAME_SAMPLES // 2 + 1  # of the real FFT
#: Frames analysed by one set of array operations (2 s: the arrays stay in cache).
_BLOCK_SAMPLES = 100 * FRAME_SAMPLES


@dataclass(frozen=True, slots=True)
class SpeechMeasure:
    """The figures of one stretch of audio and whether they are those of speech."""

    played_ms: int
    active_ms: int
    voiced_ms: int
    envelope_std_db: float
    spectral_flux: float
    spectral_flatness: float

    @property
    def judgeable(self) -> bool:
        return self.active_ms >= MIN_ACTIVE_MS

    @property
    def speech_like(self) -> bool:
        return (
            self.judgeable
            and self.envelope_std_db >= MIN_ENVELOPE_STD_DB
            and self.spectral_flux >= MIN_SPECTRAL_FLUX
            and self.spectral_flatness <= MAX_SPECTRAL_FLATNESS
        )

    def as_dict(self) -> dict[str, float | int | bool]:
        return {
            "played_ms": self.played_ms,
            "active_ms": self.active_ms,
            "voiced_ms": self.voiced_ms,
            "envelope_std_db": round(self.envelope_std_db, 2),
            "spectral_flux": round(self.spectral_flux, 4),
            "spectral_flatness": round(self.spectral_flatness, 4),
            "speech_like": self.speech_like,
        }


@dataclass(frozen=True, slots=True)
class _Figures:
    """What one 20 ms frame contributes, computed before it plays (``magnitude``: unit-norm
    magnitude spectrum of an active frame, ``None`` for an inactive one)."""

    samples: np.ndarray
    energies: tuple[float, float]  # of its two 10 ms hops, floored
    flatness: float
    magnitude: np.ndarray | None


class SpeechLikeness:
    """Accumulates the figures of a stream of PCM16 24 kHz samples, fed in pieces of any length.

    The figures are running sums, so :meth:`measure` is O(1) however long the audio. A frame's
    spectral figures depend on its samples alone, so they are computed ahead, many frames to one
    array operation, when the audio arrives (:meth:`received`); when a frame plays
    (:meth:`played`) its figures are added and webrtcvad, whose decisions depend on what it heard
    before, hears it. Audio that never plays is forgotten (:meth:`dropped`); a played frame that is
    not the one analysed ahead is analysed on the spot, so the figures are always those of what
    played, whichever way it was fed. :meth:`add` is both at once (a clip, or audio as it plays).
    """

    def __init__(self) -> None:
        self._vad = FrameVad(mode=3)
        self._ahead = np.zeros(0, dtype=np.int16)  # received, less than a frame: not analysed yet
        self._analysed: deque[_Figures] = deque()  # received whole frames, in order, not yet played
        self._playing = np.zeros(0, dtype=np.int16)  # played, less than a frame
        self._frames = 0
        self._active = 0
        self._voiced = 0
        # Welford over 10 ms energies of the active span; silent hops wait until sound follows them.
        self._n = 0
        self._mean = 0.0
        self._m2 = 0.0
        self._silent_hops = 0
        self._flux_sum = 0.0
        self._flux_n = 0
        self._flatness_sum = 0.0
        self._previous: np.ndarray | None = None

    def add(self, samples: np.ndarray) -> None:
        """Feed the next samples (int16) that played; whole frames are measured, the rest waits for more."""
        self.received(samples)
        self.played(samples)

    def received(self, samples: np.ndarray) -> None:
        """Samples that will play next, after those received before: their whole frames are analysed."""
        if len(self._ahead):
            samples = np.concatenate([self._ahead, samples])
        whole = len(samples) // FRAME_SAMPLES * FRAME_SAMPLES
        for start in range(0, whole, _BLOCK_SAMPLES):
            self._analysed.extend(_analyse(samples[start : min(whole, start + _BLOCK_SAMPLES)]))
        self._ahead = samples[whole:].copy()

    def played(self, samples: np.ndarray) -> None:
        """The next samples that played; each frame they complete is measured."""
        if len(self._playing):
            samples = np.concatenate([self._playing, samples])
        whole = len(samples) // FRAME_SAMPLES * FRAME_SAMPLES
        for start in range(0, whole, FRAME_SAMPLES):
            self._frame(samples[start : start + FRAME_SAMPLES])
        self._playing = samples[whole:].copy()

    def dropped(self) -> None:
        """What was received and has not played never will: later audio follows what played."""
        self._analysed.clear()
        self._ahead = self._playing.copy()

    def measure(self) -> SpeechMeasure:
        std = math.sqrt(self._m2 / self._n) if self._n else 0.0
        return SpeechMeasure(
            played_ms=self._frames * FRAME_MS,
            active_ms=self._active * FRAME_MS,
            voiced_ms=self._voiced * FRAME_MS,
            envelope_std_db=std,
            spectral_flux=self._flux_sum / self._flux_n if self._flux_n else 0.0,
            spectral_flatness=self._flatness_sum / self._active if self._active else 0.0,
        )

    def _frame(self, frame: np.ndarray) -> None:
        """One 20 ms frame that played."""
        figures = self._analysed.popleft() if self._analysed else None
        if figures is None or not np.array_equal(figures.samples, frame):
            # Not the audio analysed ahead (it was fed only as it played): the rest ahead is not next either.
            self._analysed.clear()
            figures = _analyse(frame)[0]
        self._frames += 1
        if self._vad.voiced(frame):
            self._voiced += 1
        active = figures.magnitude is not None
        for energy in figures.energies:
            self._envelope(energy, active)
        if figures.magnitude is None:
            self._previous = None
            return
        self._active += 1
        self._flatness_sum += figures.flatness
        if self._previous is not None:
            self._flux_sum += 1.0 - float(np.dot(figures.magnitude, self._previous))
            self._flux_n += 1
        self._previous = figures.magnitude

    def _envelope(self, energy_db: float, active: bool) -> None:
        if not active:
            if self._n:
                self._silent_hops += 1  # counted only if sound follows (not trailing silence)
            return
        for _ in range(self._silent_hops):
            self._welford(ENERGY_FLOOR_DBFS)
        self._silent_hops = 0
        self._welford(energy_db)

    def _welford(self, value: float) -> None:
        self._n += 1
        delta = value - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (value - self._mean)


def _analyse(pcm: np.ndarray) -> list[_Figures]:
    """The figures of whole frames, a few array operations for all of them.

    Each frame's figures are to the last bit those of the frame computed alone (``rfft`` and the
    sums along a row run as they would on the row by itself; the level and the norm are taken per
    frame with ``math.log10`` and ``dot``): how the audio was fed never changes a measure.
    """
    count = len(pcm) // FRAME_SAMPLES
    x = np.divide(pcm[: count * FRAME_SAMPLES].reshape(count, FRAME_SAMPLES), PCM16_SCALE)
    squares = x * x
    hop_means = np.add.reduce(squares.reshape(count, 2, _HOP), axis=2)
    hop_means /= _HOP
    energies = np.maximum(10 * np.log10(hop_means + 1e-12), ENERGY_FLOOR_DBFS).tolist()
    levels = (np.add.reduce(squares, axis=1) / FRAME_SAMPLES).tolist()
    active = [10 * math.log10(level + 1e-12) > ACTIVE_DBFS for level in levels]
    rows = [i for i, is_active in enumerate(active) if is_active]
    flatness: list[float] = [0.0] * count
    magnitudes: list[np.ndarray | None] = [None] * count
    if rows:
        power = np.abs(np.fft.rfft(x[rows] * _WINDOW, axis=1))
        np.square(power, out=power)
        power += 1e-20
        geometric = np.exp(np.add.reduce(np.log(power), axis=1) / _BINS)
        for i, value in zip(rows, (geometric / (np.add.reduce(power, axis=1) / _BINS)).tolist(), strict=True):
            flatness[i] = value
        magnitude = np.sqrt(power, out=power)
        magnitude /= np.array([math.sqrt(row.dot(row)) for row in magnitude])[:, None]
        for i, row in zip(rows, magnitude, strict=True):
            magnitudes[i] = row
    # Copied: the samples are kept to check, when a frame plays, that it is the frame analysed.
    frames = np.array(pcm[: count * FRAME_SAMPLES], dtype=np.int16).reshape(count, FRAME_SAMPLES)
    return [_Figures(frames[i], (energies[i][0], energies[i][1]), flatness[i], magnitudes[i]) for i in range(count)]


def measure_speech(pcm: np.ndarray) -> SpeechMeasure:
    """The figures of a whole clip (PCM16 mono 24 kHz)."""
    meter = SpeechLikeness()
    meter.add(np.asarray(pcm, dtype=np.int16))
    return meter.measure()
