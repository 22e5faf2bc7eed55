"""Per-frame VAD: finds speech in an espeak clip, not in silence, with a tight onset."""

from __future__ import annotations

import numpy as np
import pytest

from harness.audio.espeak import synthesize
from harness.audio.frames import FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE
from harness.audio.vad import FrameVad, is_silent


def _states(vad: FrameVad, pcm: np.ndarray) -> np.ndarray:
    return np.array([vad.update(pcm[i : i + FRAME_SAMPLES]) for i in range(0, len(pcm) - FRAME_SAMPLES + 1, FRAME_SAMPLES)])


def _energy_onset_ms(pcm: np.ndarray) -> int:
    """First 10 ms frame at or above −45 dBFS."""
    size = SAMPLE_RATE // 100
    frames = pcm[: len(pcm) // size * size].astype(np.float64).reshape(-1, size) / 32767
    loud = np.flatnonzero(np.sqrt(np.mean(frames**2, axis=1)) >= 10 ** (-45 / 20))
    return int(loud[0]) * 10


async def test_speech_is_found_with_onset_near_the_energy_onset() -> None:
    clip = (await synthesize(["Yes, please go ahead and submit it."], "en-us+f2", use_cache=False)).popitem()[1]
    lead = np.zeros(SAMPLE_RATE, dtype=np.int16)
    pcm = np.concatenate((lead, clip.pcm, lead))
    states = _states(FrameVad(), pcm)
    speaking = np.flatnonzero(states)
    assert speaking.size > 0
    onset_ms = int(speaking[0]) * FRAME_MS
    assert abs(onset_ms - _energy_onset_ms(pcm)) <= 60
    assert not states[-10:].any()  # back to silence after the hangover


def test_silence_and_low_noise_are_never_speech() -> None:
    noise = (np.random.default_rng(5).standard_normal(SAMPLE_RATE * 2) * 3).astype(np.int16)
    assert not _states(FrameVad(), np.zeros(SAMPLE_RATE * 2, dtype=np.int16)).any()
    assert not _states(FrameVad(), noise).any()
    assert is_silent(noise[:FRAME_SAMPLES])
    assert not is_silent(np.full(FRAME_SAMPLES, 3000, dtype=np.int16))


def test_onset_and_hangover_smoothing() -> None:
    vad = FrameVad(onset_frames=2, hangover_ms=200)
    assert vad.onset_delay_ms == 20
    with pytest.raises(ValueError, match="480"):
        vad.update(np.zeros(100, dtype=np.int16))
    with pytest.raises(ValueError, match="hangover_ms"):
        FrameVad(hangover_ms=0)
