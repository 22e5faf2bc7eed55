"""The voice of the harness's own agents (the oracle voice agent, the cascade): hibari, voice "heart".

Why not espeak-ng: the simulated user hears an agent only through local ASR (faster-whisper
``tiny.en``), and a word the agent claims counts only if ASR of the played audio carries it. tiny.en
mishears espeak: of the demo suite's 90 reference-policy lines, espeak ``en-us+m7`` was carried
word for word in 58 (agreement p50 0.84), hibari's "heart" in 82 (p50 1.00, none below 0.5). An
honest oracle must be heard as it spoke.

hibari (``hibari-tts``: a 7.9 MB ONNX model inside the wheel, numpy and onnxruntime) synthesizes
24 kHz float32 audio; with a fixed noise seed the same text gives bit-identical samples in any
process and in any order, so, unlike espeak, it runs in this process: loaded once, called in a
worker thread (CPU work stays off the session loop), one clip at a time (one model per process;
hibari does not promise its tokenizer and tagger are thread-safe). Clips are trimmed like espeak's
and cached on disk (:class:`~harness.audio.tts_cache.TtsCache`), keyed by everything that changes
the samples: hibari's and onnxruntime's versions, its FFT backend, the voice, the seed, the text.

hibari reports no word timings, so these clips carry none; nothing reads an agent clip's word
timings (what the user heard of an agent comes from ASR of the audio).
"""

from __future__ import annotations

import asyncio
import threading
from functools import cache
from importlib.metadata import version as package_version
from pathlib import Path

import numpy as np
from hibari import SAMPLE_RATE as HIBARI_SAMPLE_RATE
from hibari import Hibari
from hibari import dsp as hibari_dsp

from .clip import Clip
from .frames import SAMPLE_RATE
from .pcm import PCM16_SCALE
from .silence_trim import sound_span
from .tts_cache import TtsCache, default_cache_dir

__all__ = ["AGENT_VOICE", "engine_version", "synthesize_agent_lines"]

_VOICE = "heart"
#: The source every agent clip names (``Clip.source``, the cascade's metadata).
AGENT_VOICE = f"hibari:{_VOICE}"
#: hibari's noise seed: fixed, so every clip is reproducible.
_SEED = 0
#: Bump when the conversion to PCM16 or the trimming changes, so cached clips are not reused.
_POSTPROCESS_VERSION = "1"
_synthesis_lock = threading.Lock()

if HIBARI_SAMPLE_RATE != SAMPLE_RATE:  # pragma: no cover - a hibari release at another rate needs resampling here
    raise ImportError(f"hibari speaks at {HIBARI_SAMPLE_RATE} Hz; the harness plays {SAMPLE_RATE} Hz")


@cache
def engine_version() -> str:
    """``"hibari-tts <v> (onnxruntime <v>, <fft backend> FFT)"``: what the samples depend on."""
    return (f"hibari-tts {package_version('hibari-tts')} (onnxruntime {package_version('onnxruntime')}, "
            f"{hibari_dsp.FFT_BACKEND} FFT)")


@cache
def _engine() -> Hibari:
    return Hibari(voice=_VOICE, threads=1)


def _render(text: str) -> Clip:
    with _synthesis_lock:
        audio = _engine()(text, seed=_SEED)
    pcm = np.clip(np.round(audio * PCM16_SCALE), -32768, 32767).astype(np.int16)
    start, end = sound_span(pcm)
    return Clip(pcm[start:end].copy(), text, AGENT_VOICE)


async def synthesize_agent_lines(texts: list[str], *, cache_dir: Path | None = None,
                                 use_cache: bool = True) -> dict[str, Clip]:
    """A clip for every distinct text in the agent voice; cache hits skip synthesis.

    ``cache_dir`` defaults to ``$APEX_VOICE_TTS_CACHE`` or ``~/.cache/apex_voice/tts`` (shared with
    espeak: the keys differ by engine).
    """
    unique = list(dict.fromkeys(texts))
    store = TtsCache(cache_dir or default_cache_dir()) if use_cache else None
    clips: dict[str, Clip] = {}
    keys: dict[str, str] = {}
    if store is not None:
        for text in unique:
            keys[text] = TtsCache.key(engine_version(), _POSTPROCESS_VERSION, _VOICE, _SEED, SAMPLE_RATE, text)
            hit = await asyncio.to_thread(store.load, keys[text], text, AGENT_VOICE)  # file reads: off the loop
            if hit is not None:
                clips[text] = hit
    for text in unique:
        if text in clips:
            continue
        clips[text] = await asyncio.to_thread(_render, text)
        if store is not None:
            await asyncio.to_thread(store.store, keys[text], clips[text])
    return {text: clips[text] for text in unique}
