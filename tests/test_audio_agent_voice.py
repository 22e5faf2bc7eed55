"""The harness's agent voice (hibari "heart"): bit-reproducible in any process and order, trimmed,
cached by everything that changes its samples, and heard by the session's ASR word for word."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from harness.audio import agent_voice
from harness.audio.agent_asr import AgentTranscriber, WhisperRecognizer
from harness.audio.agent_voice import AGENT_VOICE, synthesize_agent_lines
from harness.audio.frames import SAMPLE_RATE
from harness.audio.silence_trim import sound_span
from harness.audio.spoken_words import align

TEXTS = [
    "Your order 4417 ships on Tuesday, March 3rd.",
    "I've cancelled the booking for Dr. Smith; the refund is $129.50.",
    "Okay.",
]
_SHA_IN_A_FRESH_PROCESS = (
    "import asyncio, sys; from harness.audio.agent_voice import synthesize_agent_lines; "
    "clips = asyncio.run(synthesize_agent_lines(sys.argv[1:], use_cache=False)); "
    "print(' '.join(clips[t].sha256() for t in sys.argv[1:]))"
)


async def test_the_same_text_gives_the_same_samples_in_any_order_and_any_process() -> None:
    first = await synthesize_agent_lines(TEXTS, use_cache=False)
    again = await synthesize_agent_lines(list(reversed(TEXTS)), use_cache=False)
    done = subprocess.run([sys.executable, "-c", _SHA_IN_A_FRESH_PROCESS, *TEXTS[1:]], capture_output=True,
                          text=True, check=True)
    assert [first[t].sha256() for t in TEXTS] == [again[t].sha256() for t in TEXTS]
    assert done.stdout.split() == [first[t].sha256() for t in TEXTS[1:]]
    assert len({first[t].sha256() for t in TEXTS}) == len(TEXTS)


async def test_clips_are_trimmed_name_the_voice_and_claim_no_word_timings() -> None:
    clips = await synthesize_agent_lines(TEXTS, use_cache=False)
    for text, clip in clips.items():
        assert clip.text == text and clip.source == AGENT_VOICE == "hibari:heart"
        assert sound_span(clip.pcm) == (0, clip.num_samples)  # trimming again changes nothing
        assert clip.word_timestamps == []  # hibari reports none; none are made up
    assert clips["Okay."].num_samples < SAMPLE_RATE < clips[TEXTS[1]].num_samples


async def test_concurrent_callers_share_one_cache_and_get_the_same_clips(tmp_path) -> None:
    both = await asyncio.gather(synthesize_agent_lines(TEXTS, cache_dir=tmp_path),
                                synthesize_agent_lines(TEXTS[::-1], cache_dir=tmp_path))
    assert [both[0][t].sha256() for t in TEXTS] == [both[1][t].sha256() for t in TEXTS]
    assert len(list(tmp_path.rglob("*.npz"))) == len(TEXTS)
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".npz"]  # no temp file left
    cached = await synthesize_agent_lines(TEXTS, cache_dir=tmp_path)
    assert [cached[t].sha256() for t in TEXTS] == [both[0][t].sha256() for t in TEXTS]
    assert cached[TEXTS[0]].source == AGENT_VOICE


async def test_another_engine_version_misses_the_cache_and_a_corrupt_entry_is_resynthesized(tmp_path,
                                                                                           monkeypatch) -> None:
    fresh = await synthesize_agent_lines(TEXTS[:1], cache_dir=tmp_path)
    (entry,) = tmp_path.rglob("*.npz")
    entry.write_bytes(b"not an npz")
    again = await synthesize_agent_lines(TEXTS[:1], cache_dir=tmp_path)
    assert again[TEXTS[0]].sha256() == fresh[TEXTS[0]].sha256()
    monkeypatch.setattr(agent_voice, "engine_version", lambda: "hibari-tts 9.9.9 (onnxruntime 0.0, numpy FFT)")
    await synthesize_agent_lines(TEXTS[:1], cache_dir=tmp_path)
    assert len(list(tmp_path.rglob("*.npz"))) == 2  # a second entry, under the other version's key


def test_the_engine_version_names_what_the_samples_depend_on() -> None:
    assert agent_voice.engine_version().startswith("hibari-tts 0.2.1 (onnxruntime ")
    assert agent_voice.engine_version().endswith(" FFT)")


@pytest.mark.slow
async def test_the_session_recognizer_hears_the_agent_voice_word_for_word() -> None:
    text = "Got it. And what's the best phone number to reach you?"
    clip = (await synthesize_agent_lines([text]))[text]
    heard = await AgentTranscriber(WhisperRecognizer()).transcribe(clip.pcm)
    alignment = align(text.split(), heard, final=True)
    assert all(alignment.carried), (heard, alignment)
