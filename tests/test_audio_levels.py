"""The live level meter: RMS per window of each channel, as recorded."""

from __future__ import annotations

import math

import numpy as np

from harness.audio.stereo_recorder import StereoRecorder
from harness.session.audio_levels import LevelMeter


def test_levels_are_the_exact_rms_of_each_window_down_to_full_scale() -> None:
    rng = np.random.default_rng(4)
    recorder = StereoRecorder()
    meter = LevelMeter(recorder)
    user = rng.integers(-32768, 32768, size=480 * 10, dtype=np.int16)
    agent = np.zeros_like(user)
    agent[480 * 5 :] = rng.integers(-300, 300, size=480 * 5, dtype=np.int16)
    agent[480 * 5] = -32768
    levels = []
    for start in range(0, len(user), 480):
        recorder.append(user[start : start + 480], agent[start : start + 480])
        levels.append(meter.frame_recorded())
    assert levels[:4] == [None] * 4 and levels[5:9] == [None] * 4

    def exact(samples: np.ndarray) -> float:
        squares = int(np.sum(samples.astype(np.int64) ** 2))
        return -90.0 if not squares else round(max(-90.0, 20 * math.log10(math.sqrt(squares / len(samples)) / 32767)), 1)

    assert levels[4] == (exact(user[:2400]), -90.0)
    assert levels[9] == (exact(user[2400:]), exact(agent[2400:]))


def test_a_silent_window_is_the_floor_on_both_channels() -> None:
    recorder = StereoRecorder()
    meter = LevelMeter(recorder)
    silence = np.zeros(480, dtype=np.int16)
    for _ in range(4):
        recorder.append(silence, silence)
        assert meter.frame_recorded() is None
    recorder.append(silence, silence)
    assert meter.frame_recorded() == (-90.0, -90.0)
