"""The stereo record is sample-accurate: tick k starts at sample k·480, L user, R agent."""

from __future__ import annotations

import numpy as np
import pytest

from harness.audio.audio_files import read_pcm16
from harness.audio.frames import FRAME_SAMPLES
from harness.audio.stereo_recorder import StereoRecorder


def test_user_click_at_frame_k_lands_at_sample_k_times_480_in_left_only(tmp_path) -> None:
    recorder = StereoRecorder(initial_seconds=0.05)  # forces several growths
    silence = np.zeros(FRAME_SAMPLES, dtype=np.int16)
    click = silence.copy()
    click[0] = 12_345
    agent_tone = np.full(FRAME_SAMPLES, 7, dtype=np.int16)
    for k in range(200):
        recorder.append(click if k == 137 else silence, agent_tone if k == 50 else silence)
    files = recorder.write(tmp_path / "audio")

    stereo = read_pcm16(files["stereo"])
    assert stereo.shape == (200 * FRAME_SAMPLES, 2)
    assert np.flatnonzero(stereo[:, 0]).tolist() == [137 * FRAME_SAMPLES]
    assert np.flatnonzero(stereo[:, 1]).tolist() == list(range(50 * FRAME_SAMPLES, 51 * FRAME_SAMPLES))
    assert np.array_equal(read_pcm16(files["user"]), stereo[:, 0])
    assert np.array_equal(read_pcm16(files["agent"]), stereo[:, 1])
    assert recorder.duration_ms == 4000


def test_a_recorder_sized_for_the_session_never_moves_what_it_recorded() -> None:
    recorder = StereoRecorder(initial_seconds=1.0)
    frame = np.arange(FRAME_SAMPLES, dtype=np.int16)
    recorder.append(frame, -frame)
    first = recorder.tail(FRAME_SAMPLES)
    for _ in range(49):
        recorder.append(frame, frame)
    assert np.shares_memory(first, recorder.tail(50 * FRAME_SAMPLES))  # one second: no copy
    recorder.append(frame, frame)
    assert not np.shares_memory(first, recorder.tail(51 * FRAME_SAMPLES))  # grown
    assert np.array_equal(recorder.channel("agent")[:FRAME_SAMPLES], -frame)


def test_channel_copy_and_mismatched_tick_is_rejected() -> None:
    recorder = StereoRecorder()
    recorder.append(np.ones(480, dtype=np.int16), np.zeros(480, dtype=np.int16))
    assert recorder.channel("user").sum() == 480
    with pytest.raises(ValueError, match="479"):
        recorder.append(np.ones(480, dtype=np.int16), np.zeros(479, dtype=np.int16))
    assert recorder.num_samples == 480
