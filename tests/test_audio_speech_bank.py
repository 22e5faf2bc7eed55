"""Replaying pre-rendered clips: verified against the index; clear errors; mode resolution."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from harness.audio.audio_files import write_pcm16
from harness.audio.pcm import pcm16_sha256
from harness.audio.speech_bank import (
    MAX_CLIP_BYTES,
    ClipIntegrityError,
    MissingClipError,
    PrerenderedBank,
    SpeechSourceError,
    open_speech_source,
)

HELLO = "Hello, I need help with a claim."
BYE = "That's all, thanks."


def _package(tmp_path, clips: dict[str, np.ndarray]):
    audio = tmp_path / "pkg" / "user" / "audio"
    rows = []
    for number, (text, pcm) in enumerate(clips.items()):
        name = f"clip_{number}.flac"
        write_pcm16(audio / name, pcm)
        rows.append({"file": name, "kind": "variant", "user_plan_id": f"p{number}", "variant_id": f"p{number}#v1",
                     "text": text, "voice": "en-us+f2", "sample_rate": 24000, "num_samples": len(pcm),
                     "pcm16_sha256": pcm16_sha256(pcm), "word_timestamps": [{"word": "x", "start_ms": 0, "end_ms": 5}]})
    rows.append({**rows[0], "file": "duplicate.flac"})  # a later row for the same text never wins
    (audio / "index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return tmp_path / "pkg"


def _pcm(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-3000, 3000, 4800, dtype=np.int16)


def test_bank_replays_clips_bit_exactly_first_row_wins(tmp_path) -> None:
    package = _package(tmp_path, {HELLO: _pcm(1), BYE: _pcm(2)})
    bank = PrerenderedBank(package, "demo_task")
    clip = bank.get(HELLO)
    assert np.array_equal(clip.pcm, _pcm(1))
    assert clip.source == "prerendered:clip_0.flac"
    assert clip.word_timestamps[0].word == "x"
    assert bank.texts == [HELLO, BYE]


def test_corrupt_sample_is_an_error_naming_the_file(tmp_path) -> None:
    package = _package(tmp_path, {HELLO: _pcm(1)})
    corrupted = _pcm(1)
    corrupted[100] += 1
    write_pcm16(package / "user" / "audio" / "clip_0.flac", corrupted)
    with pytest.raises(ClipIntegrityError, match=r"clip_0\.flac: pcm16_sha256"):
        PrerenderedBank(package).get(HELLO)


def test_truncated_clip_is_an_error_naming_the_file(tmp_path) -> None:
    package = _package(tmp_path, {HELLO: _pcm(1)})
    write_pcm16(package / "user" / "audio" / "clip_0.flac", _pcm(1)[:-1])
    with pytest.raises(ClipIntegrityError, match=r"clip_0\.flac: 4799 samples"):
        PrerenderedBank(package).get(HELLO)


def test_giant_clip_is_refused_before_it_is_decoded(tmp_path) -> None:
    package = _package(tmp_path, {HELLO: _pcm(1)})
    with (package / "user" / "audio" / "clip_0.flac").open("r+b") as handle:
        handle.truncate(MAX_CLIP_BYTES + 1)  # sparse
    with pytest.raises(ClipIntegrityError, match=r"clip_0\.flac: file is larger than the 16 MiB limit for a clip"):
        PrerenderedBank(package).get(HELLO)


def test_giant_index_is_a_speech_source_error(tmp_path) -> None:
    package = _package(tmp_path, {HELLO: _pcm(1)})
    with (package / "user" / "audio" / "index.jsonl").open("r+b") as handle:
        handle.truncate(9 << 20)
    with pytest.raises(SpeechSourceError, match=r"index\.jsonl: file is 9\.0 MiB, the limit for JSONL files is 8 MiB"):
        open_speech_source(package, "prerendered")


def test_missing_text_error_names_the_text_and_task(tmp_path) -> None:
    bank = PrerenderedBank(_package(tmp_path, {HELLO: _pcm(1)}), "demo_task")
    with pytest.raises(MissingClipError, match=r"demo_task.*'Never recorded\.'"):
        bank.get("Never recorded.")


async def test_prerendered_mode_serves_the_bank_and_refuses_unknown_texts(tmp_path) -> None:
    source = open_speech_source(_package(tmp_path, {HELLO: _pcm(1)}), "prerendered", task_id="demo_task")
    clips = await source.prepare([HELLO, HELLO])
    assert list(clips) == [HELLO]
    with pytest.raises(MissingClipError, match="Not in the bank"):
        await source.prepare([HELLO, "Not in the bank."])


async def test_auto_mode_falls_back_to_live_synthesis_for_missing_texts(tmp_path) -> None:
    source = open_speech_source(_package(tmp_path, {HELLO: _pcm(1)}), "auto", cache_dir=tmp_path / "tts")
    clips = await source.prepare([HELLO, BYE])
    assert clips[HELLO].source.startswith("prerendered:")
    assert clips[BYE].source == "espeak:en-us+f2"
    assert source.fallback_texts == [BYE]


async def test_auto_without_index_is_live_and_prerendered_without_index_is_an_error(tmp_path) -> None:
    (tmp_path / "bare").mkdir()
    source = open_speech_source(tmp_path / "bare", "auto", cache_dir=tmp_path / "tts")
    assert source.bank is None
    assert (await source.prepare([BYE]))[BYE].num_samples > 0
    with pytest.raises(SpeechSourceError, match=r"prerendered needs .*index\.jsonl"):
        open_speech_source(tmp_path / "bare", "prerendered")
    with pytest.raises(SpeechSourceError, match="unknown --user-audio mode 'tape'"):
        open_speech_source(tmp_path / "bare", "tape")


def test_kokoro_mode_is_a_clear_error_naming_the_extra_when_absent(tmp_path) -> None:
    absent = importlib.util.find_spec("kokoro") is None
    with pytest.raises(SpeechSourceError, match=r"apex-voice\[kokoro\]" if absent else "--user-audio kokoro"):
        open_speech_source(tmp_path, "kokoro")


async def test_clips_are_read_off_the_event_loop(tmp_path, monkeypatch) -> None:
    """Reading and verifying a session's clips runs in a worker thread: a session starting must not
    stall the frames of sessions already streaming on the same loop."""
    import threading

    readers: list[threading.Thread] = []
    read = PrerenderedBank._read

    def recording_read(self, row, path):
        readers.append(threading.current_thread())
        return read(self, row, path)

    monkeypatch.setattr(PrerenderedBank, "_read", recording_read)
    source = open_speech_source(_package(tmp_path, {HELLO: _pcm(1), BYE: _pcm(2)}), "prerendered", task_id="demo_task")
    clips = await source.prepare([HELLO, BYE])
    assert list(clips) == [HELLO, BYE]
    assert len(readers) == 2 and threading.main_thread() not in readers
