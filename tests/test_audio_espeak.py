"""Live espeak-ng synthesis: bit-reproducible, distinct voices, cached, with word timings."""

from __future__ import annotations

import numpy as np
import pytest

from harness.audio.espeak import EspeakError, synthesize, user_voice
from harness.audio.frames import SAMPLE_RATE
from harness.audio.silence_trim import sound_span

TEXTS = [
    "My employee ID is E one zero four two.",
    "Actually, sorry, the total was two hundred dollars, not two forty.",
    "Yes, please go ahead and submit it.",
]


def _median_f0(pcm: np.ndarray) -> float:
    """Rough pitch: autocorrelation peak in 60–400 Hz over loud 40 ms frames."""
    x = pcm.astype(np.float64)
    size = SAMPLE_RATE // 25
    lo, hi = SAMPLE_RATE // 400, SAMPLE_RATE // 60
    loudness = np.sqrt(np.mean(x[: len(x) // size * size].reshape(-1, size) ** 2, axis=1))
    pitches = []
    for index in np.flatnonzero(loudness > 0.3 * loudness.max()):
        frame = x[index * size : (index + 1) * size]
        frame = frame - frame.mean()
        corr = np.correlate(frame, frame, "full")[size - 1 :]
        pitches.append(SAMPLE_RATE / (lo + int(np.argmax(corr[lo:hi]))))
    return float(np.median(pitches))


async def test_same_text_in_different_processes_and_orders_gives_identical_pcm() -> None:
    first = await synthesize(TEXTS, "en-us+f2", use_cache=False)
    second = await synthesize(list(reversed(TEXTS)), "en-us+f2", use_cache=False, max_workers=1)
    for text in TEXTS:
        assert first[text].sha256() == second[text].sha256()
        assert first[text].num_samples > SAMPLE_RATE // 2


async def test_female_and_male_voices_differ_in_median_pitch() -> None:
    female = (await synthesize(TEXTS[:1], user_voice("voice_03"), use_cache=False))[TEXTS[0]]
    male = (await synthesize(TEXTS[:1], user_voice("voice_07"), use_cache=False))[TEXTS[0]]
    assert _median_f0(female.pcm) > 1.3 * _median_f0(male.pcm)


async def test_clips_are_trimmed_and_carry_ordered_word_timings() -> None:
    clip = (await synthesize(TEXTS[2:], "en-us+f2", use_cache=False))[TEXTS[2]]
    assert clip.source == "espeak:en-us+f2"
    assert sound_span(clip.pcm) == (0, clip.num_samples)  # trimming again changes nothing
    words = clip.word_timestamps
    assert [w.word for w in words] == ["Yes", "please", "go", "ahead", "and", "submit", "it"]
    assert all(a.start_ms <= b.start_ms for a, b in zip(words, words[1:], strict=False))
    assert all(0 <= w.start_ms <= w.end_ms <= clip.duration_ms for w in words)


async def test_cache_serves_repeats_and_survives_a_corrupt_entry(tmp_path) -> None:
    fresh = await synthesize(TEXTS[:1], "en-us+m3", cache_dir=tmp_path)
    entries = list(tmp_path.rglob("*.npz"))
    assert len(entries) == 1
    cached = await synthesize(TEXTS[:1], "en-us+m3", cache_dir=tmp_path)
    assert cached[TEXTS[0]].sha256() == fresh[TEXTS[0]].sha256()
    assert cached[TEXTS[0]].word_timestamps == fresh[TEXTS[0]].word_timestamps
    entries[0].write_bytes(b"not an npz")
    again = await synthesize(TEXTS[:1], "en-us+m3", cache_dir=tmp_path)
    assert again[TEXTS[0]].sha256() == fresh[TEXTS[0]].sha256()


async def test_unknown_voice_is_an_error_naming_it() -> None:
    with pytest.raises(EspeakError, match="no-such-voice"):
        await synthesize(["hello"], "no-such-voice", use_cache=False)
