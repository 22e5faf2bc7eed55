"""The speech check on real audio: the demo suite's clips, espeak speech and the agent voice pass; a constant tone,
a tone sweep, white noise and tones shaped like syllables fail (figures in ``docs/duplex.md``)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.audio.agent_voice import synthesize_agent_lines
from harness.audio.audio_files import read_pcm16
from harness.audio.espeak import synthesize
from harness.audio.frames import SAMPLE_RATE
from harness.audio.speech_likeness import SpeechLikeness, measure_speech
from tests.conftest import DEMO_DATA

_T = np.arange(SAMPLE_RATE * 3) / SAMPLE_RATE
_HARMONIC = sum(np.sin(2 * np.pi * 140 * k * _T) / k for k in range(1, 8))
_SWEEP = np.sin(2 * np.pi * np.cumsum(200 * 10 ** (_T / 3)) / SAMPLE_RATE)


def _pcm(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -32768, 32767).astype(np.int16)


NOT_SPEECH = {
    "constant sine": _pcm(np.sin(2 * np.pi * 220 * _T) * 8000),
    "constant harmonic tone": _pcm(_HARMONIC * 4000),
    "tone sweep 200-2000 Hz": _pcm(_SWEEP * 8000),
    "white noise": _pcm(np.random.default_rng(0).standard_normal(len(_T)) * 3000),
    "tone with a syllable-rate envelope": _pcm(_HARMONIC * np.abs(np.sin(2 * np.pi * 3 * _T)) * 4000),
    "gated tone": _pcm(_HARMONIC * 4000 * (np.sin(2 * np.pi * 2 * _T) > 0)),
    "a second of silence, then a tone": _pcm(np.concatenate([np.zeros(SAMPLE_RATE), _HARMONIC * 4000])),
}


@pytest.mark.parametrize("pcm", list(NOT_SPEECH.values()), ids=list(NOT_SPEECH))
def test_tones_sweeps_and_noise_are_not_speech(pcm):
    measure = measure_speech(pcm)
    assert measure.judgeable and not measure.speech_like, measure


@pytest.mark.slow
def test_every_bundled_user_clip_of_the_demo_suite_is_speech():
    clips = sorted(DEMO_DATA.glob("tasks/*/user/audio/*.flac"))
    assert len(clips) > 100
    failing = [path.name for path in clips if not measure_speech(read_pcm16(path)).speech_like]
    assert failing == []


async def test_espeak_speech_and_the_agent_voice_are_speech_down_to_one_syllable():
    texts = ["Could you please tell me your employee ID?", "Okay.", "Yes.",
             "Thanks. I have updated the dental plan to the premium option; is there anything else?"]
    voices = [await synthesize(texts, "en-us+m7"), await synthesize(texts, "en-us+f2"), await synthesize_agent_lines(texts)]
    for clips in voices:
        for text, clip in clips.items():
            measure = measure_speech(clip.pcm)
            assert measure.speech_like, (clip.source, text, measure)
            assert measure.voiced_ms >= 0.8 * measure.active_ms  # webrtcvad mode 3 hears it as voice


def test_feeding_pieces_of_any_length_measures_the_same_as_the_whole():
    pcm = read_pcm16(next(iter(sorted(DEMO_DATA.glob("tasks/demo_benefits_enrollment_001/user/audio/*.flac")))))
    meter = SpeechLikeness()
    for start in range(0, len(pcm), 317):
        meter.add(pcm[start : start + 317])
    assert meter.measure() == measure_speech(pcm)


def test_too_little_sound_is_not_judged():
    measure = measure_speech(_pcm(_HARMONIC[: SAMPLE_RATE // 10] * 4000))
    assert not measure.judgeable and not measure.speech_like
    assert measure_speech(np.zeros(SAMPLE_RATE, dtype=np.int16)).active_ms == 0


def _clip(index: int) -> np.ndarray:
    clips = sorted(DEMO_DATA.glob("tasks/demo_benefits_enrollment_001/user/audio/*.flac"))
    return read_pcm16(clips[index])


def test_audio_analysed_ahead_measures_as_if_measured_as_it_played():
    pcm = _clip(0)
    ahead, as_played = SpeechLikeness(), SpeechLikeness()
    for start in range(0, len(pcm), 2400):  # received in 100 ms deltas, long before it plays
        ahead.received(pcm[start : start + 2400])
    for start in range(0, len(pcm), 317):
        ahead.played(pcm[start : start + 317])
        as_played.add(pcm[start : start + 317])
        assert ahead.measure() == as_played.measure()


def test_audio_dropped_before_it_played_is_not_measured_and_what_follows_is():
    first, second = _clip(0), _clip(1)
    played = 37 * 480 + 123  # mid-frame: the frame is finished by the audio received after the drop
    meter = SpeechLikeness()
    meter.received(first)
    meter.played(first[:played])
    meter.dropped()
    meter.received(second)
    meter.played(second)
    assert meter.measure() == measure_speech(np.concatenate([first[:played], second]))


def test_audio_that_plays_other_than_it_was_received_is_measured_as_it_played():
    received, played = _clip(0), _clip(1)
    meter = SpeechLikeness()
    meter.received(received)
    meter.played(played)  # nothing told the meter: each frame is checked against the one analysed
    assert meter.measure() == measure_speech(played)


def test_frames_that_play_as_received_are_not_analysed_again(monkeypatch):
    import harness.audio.speech_likeness as module

    analysed: list[int] = []
    analyse = module._analyse
    monkeypatch.setattr(module, "_analyse", lambda pcm: analysed.append(len(pcm)) or analyse(pcm))
    pcm = _clip(0)
    meter = SpeechLikeness()
    meter.received(pcm)
    before = len(analysed)
    for start in range(0, len(pcm), 480):
        meter.played(pcm[start : start + 480])
    assert before == -(-(len(pcm) // 480) // 100) and len(analysed) == before  # blocks of 100 frames, once
