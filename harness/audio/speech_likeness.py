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


class SpeechLikeness:
    """Accumulates the figures of a stream of PCM16 24 kHz samples, fed in pieces of any length.

    Each whole 20 ms frame costs one 480-point FFT and one webrtcvad decision; the figures are
    running sums, so :meth:`measure` is O(1) however long the audio.
    """

    def __init__(self) -> None:
        self._vad = FrameVad(mode=3)
        self._pending = np.zeros(0, dtype=np.int16)
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
        # Work arrays reused by every frame (a frame is a dozen small array operations: allocating
        # each result cost as much as computing it). Two magnitude spectra alternate: the one just
        # computed and the previous frame's, which flux compares it with.
        self._x = np.empty(FRAME_SAMPLES)
        self._squares = np.empty(FRAME_SAMPLES)
        self._spectrum = np.empty(_BINS, dtype=np.complex128)
        self._power = np.empty(_BINS)
        self._log_power = np.empty(_BINS)
        self._magnitudes = (np.empty(_BINS), np.empty(_BINS))

    def add(self, samples: np.ndarray) -> None:
        """Feed the next samples (int16); whole frames are measured, the rest waits for more."""
        if len(self._pending):
            samples = np.concatenate([self._pending, samples])
        whole = len(samples) // FRAME_SAMPLES * FRAME_SAMPLES
        for start in range(0, whole, FRAME_SAMPLES):
            self._frame(samples[start : start + FRAME_SAMPLES])
        self._pending = samples[whole:].copy()

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
        """One 20 ms frame. Means are ``np.add.reduce`` divided by the count, which is what
        ``np.mean`` computes (same sums in the same order) without its dispatch, and the norm is
        ``np.linalg.norm``'s own ``sqrt(dot)``: the figures are the same to the last bit."""
        self._frames += 1
        if self._vad.voiced(frame):
            self._voiced += 1
        x = np.divide(frame, PCM16_SCALE, out=self._x)
        squares = np.multiply(x, x, out=self._squares)
        hop_means = np.add.reduce(squares.reshape(2, _HOP), axis=1)
        hop_means /= _HOP
        energies = 10 * np.log10(hop_means + 1e-12)
        active = 10 * math.log10(float(np.add.reduce(squares)) / FRAME_SAMPLES + 1e-12) > ACTIVE_DBFS
        for energy in energies.tolist():
            self._envelope(max(energy, ENERGY_FLOOR_DBFS), active)
        if not active:
            self._previous = None
            return
        self._active += 1
        spectrum = np.fft.rfft(np.multiply(x, _WINDOW, out=squares), out=self._spectrum)
        power = np.abs(spectrum, out=self._power)
        np.square(power, out=power)
        power += 1e-20
        log_mean = np.add.reduce(np.log(power, out=self._log_power)) / _BINS
        self._flatness_sum += float(np.exp(log_mean) / (np.add.reduce(power) / _BINS))
        magnitude = self._magnitudes[0] if self._previous is not self._magnitudes[0] else self._magnitudes[1]
        np.sqrt(power, out=magnitude)
        magnitude /= np.sqrt(magnitude.dot(magnitude))
        if self._previous is not None:
            self._flux_sum += 1.0 - float(np.dot(magnitude, self._previous))
            self._flux_n += 1
        self._previous = magnitude

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


def measure_speech(pcm: np.ndarray) -> SpeechMeasure:
    """The figures of a whole clip (PCM16 mono 24 kHz)."""
    meter = SpeechLikeness()
    meter.add(np.asarray(pcm, dtype=np.int16))
    return meter.measure()
