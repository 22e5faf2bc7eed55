"""Live, bit-reproducible speech synthesis with espeak-ng (the ``espeakng-loader`` wheel).

espeak-ng keeps hidden state between utterances in one process and seeds breath noise from the
clock, so every clip is synthesized in a FRESH process (``espeak_worker.py`` run as a script, at most
``os.cpu_count()`` at once; this process never loads the library) with ``espeak_ng_SetRandSeed(1)``.
The 22050 Hz output is resampled to 24 kHz with ``resample_poly(160, 147)``, trimmed
deterministically, and cached on disk.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version as package_version
from pathlib import Path

import numpy as np

from .clip import Clip, WordTiming
from .frames import SAMPLE_RATE, samples_to_ms
from .resample import resample_clip
from .silence_trim import sound_span
from .tts_cache import TtsCache, default_cache_dir

__all__ = [
    "DEFAULT_RATE_WPM",
    "DEFAULT_USER_VOICE",
    "PERSONA_VOICES",
    "EspeakError",
    "engine_version",
    "synthesize",
    "user_voice",
]

#: Persona ``voice_id`` → espeak-ng voice (female f2/f4, male m3).
PERSONA_VOICES: dict[str, str] = {"voice_01": "en-us+f4", "voice_03": "en-us+f2", "voice_07": "en-us+m3"}
DEFAULT_USER_VOICE = "en-us+f2"
DEFAULT_RATE_WPM = 175
#: Bump when resampling/trimming/word timing changes, so cached clips are not reused.
_POSTPROCESS_VERSION = "1"
_WORD = re.compile(r"\S+")
_ESPEAK_RATE = 22_050
_WORKER = [sys.executable, str(Path(__file__).with_name("espeak_worker.py"))]


class EspeakError(RuntimeError):
    """The espeak-ng worker process failed (its stderr is in the message)."""


@dataclass(frozen=True)
class _RawSpeech:
    """What one worker process returns: 22050 Hz samples and espeak's word/end events (ms)."""

    pcm: np.ndarray
    words: list[tuple[int, int, int]]
    ends: list[int]


def user_voice(voice_id: str | None) -> str:
    """The espeak voice for a persona's ``voice_id`` (unknown or missing → female default)."""
    return PERSONA_VOICES.get(voice_id or "", DEFAULT_USER_VOICE)


@cache
def engine_version() -> str:
    """``"<espeak-ng version> (espeakng-loader <wheel version>)"``, asked of a child process once."""
    done = subprocess.run([*_WORKER, "--version"], capture_output=True, check=False)
    if done.returncode != 0:
        raise EspeakError(f"espeak-ng version query failed: {done.stderr.decode(errors='replace').strip()}")
    return f"{done.stdout.decode().strip()} (espeakng-loader {package_version('espeakng-loader')})"


async def _synthesize_in_fresh_process(text: str, voice: str, rate_wpm: int) -> _RawSpeech:
    process = await asyncio.create_subprocess_exec(
        *_WORKER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    request = json.dumps({"text": text, "voice": voice, "rate_wpm": rate_wpm}).encode()
    stdout, stderr = await process.communicate(request)
    if process.returncode != 0:
        raise EspeakError(
            f"espeak-ng failed for voice {voice!r}, text {text!r}: {stderr.decode(errors='replace').strip()}"
        )
    header_line, _, payload = stdout.partition(b"\n")
    header = json.loads(header_line)
    pcm = np.frombuffer(payload, dtype="<i2").astype(np.int16)
    if len(pcm) != header["num_samples"]:
        raise EspeakError(f"espeak-ng returned {len(pcm)} samples, announced {header['num_samples']} for {text!r}")
    return _RawSpeech(pcm, [tuple(w) for w in header["words"]], list(header["ends"]))


def _word_timings(text: str, events: list[tuple[int, int, int]], ends: list[int], offset_ms: int,
                  duration_ms: int) -> list[WordTiming]:
    """espeak WORD events → words with [start, end) ms in the trimmed clip.

    espeak's text positions drift after some punctuation, so when it reports one event per
    whitespace token (the usual case) the tokens themselves name the words.
    """
    tokens = [t.strip(".,!?;:\"'()\u2014\u2013-") for t in _WORD.findall(text)]
    tokens = [t for t in tokens if any(ch.isalnum() for ch in t)]
    starts = [audio_ms for _, _, audio_ms in events]
    boundaries = sorted(set(starts + ends))

    def in_clip(ms: int) -> int:
        return min(max(ms - offset_ms, 0), duration_ms)

    timings: list[WordTiming] = []
    for index, (position, length, start) in enumerate(events):
        word = tokens[index] if len(tokens) == len(events) else text[position - 1 : position - 1 + length]
        end = next((b for b in boundaries if b > start), start)
        timings.append(WordTiming(word, in_clip(start), in_clip(end)))
    return timings


def _postprocess(text: str, voice: str, raw: _RawSpeech) -> Clip:
    resampled = resample_clip(raw.pcm, _ESPEAK_RATE, SAMPLE_RATE)
    pcm = np.clip(np.round(resampled), -32768, 32767).astype(np.int16)
    start, end = sound_span(pcm)
    pcm = pcm[start:end].copy()
    words = _word_timings(text, raw.words, raw.ends, samples_to_ms(start), samples_to_ms(len(pcm)))
    return Clip(pcm, text, f"espeak:{voice}", words)


async def synthesize(
    texts: list[str],
    voice: str,
    *,
    rate_wpm: int = DEFAULT_RATE_WPM,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    max_workers: int | None = None,
) -> dict[str, Clip]:
    """Clips for every distinct text, each from its own fresh process, up to ``max_workers``
    (default ``os.cpu_count()``) at once; cache hits skip synthesis.

    ``cache_dir`` defaults to ``$APEX_VOICE_TTS_CACHE`` or ``~/.cache/apex_voice/tts``.
    """
    unique = list(dict.fromkeys(texts))
    store = TtsCache(cache_dir or default_cache_dir()) if use_cache else None
    source = f"espeak:{voice}"
    clips: dict[str, Clip] = {}
    keys: dict[str, str] = {}
    if store is not None:
        version = await asyncio.to_thread(engine_version)
        for text in unique:
            keys[text] = TtsCache.key(version, _POSTPROCESS_VERSION, voice, rate_wpm, SAMPLE_RATE, text)
            hit = await asyncio.to_thread(store.load, keys[text], text, source)  # file reads: off the loop
            if hit is not None:
                clips[text] = hit
    missing = [t for t in unique if t not in clips]
    slots = asyncio.Semaphore(max_workers or os.cpu_count() or 1)

    async def render(text: str) -> None:
        async with slots:
            raw = await _synthesize_in_fresh_process(text, voice, rate_wpm)
        clips[text] = _postprocess(text, voice, raw)
        if store is not None:
            await asyncio.to_thread(store.store, keys[text], clips[text])

    await asyncio.gather(*(render(text) for text in missing))
    return {text: clips[text] for text in unique}
