"""Where the simulated user's speech comes from: pre-rendered clips, or live synthesis.

Pre-rendered clips (``user/audio/index.jsonl`` + FLAC files, reference §1.18) make user speech
bit-identical across runs and machines; each clip is checked against the index's sample count and
PCM digest when first read. Live synthesis (espeak-ng) covers packages without an index and, in
``auto`` mode, texts the index lacks (logged, since that breaks bit-identical replay).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

from pydantic import ValidationError

from harness.tasks.bounded_parse import JSONL_LIMITS, ParseRefused, read_bounded
from harness.tasks.contained_paths import PathEscape, resolve_inside
from harness.tasks.models import AudioIndexRow
from harness.tasks.package_paths import AUDIO_DIR, AUDIO_INDEX_FILE

from . import espeak
from .audio_files import read_pcm16
from .clip import Clip, WordTiming
from .frames import SAMPLE_RATE
from .pcm import pcm16_sha256
from .user_audio_mode import UserAudioMode

__all__ = [
    "Clip",
    "MAX_CLIP_BYTES",
    "ClipIntegrityError",
    "MissingClipError",
    "PrerenderedBank",
    "SpeechSource",
    "SpeechSourceError",
    "UserAudioMode",
    "open_speech_source",
]

_log = logging.getLogger(__name__)

#: The demo's longest clip is 1.0 MB; 16 MiB is several minutes of 24 kHz speech.
MAX_CLIP_BYTES = 16 << 20

LiveSynthesizer = Callable[[list[str]], Awaitable[dict[str, Clip]]]


class MissingClipError(KeyError):
    """No pre-rendered clip for a text the session needs."""

    def __str__(self) -> str:
        return str(self.args[0])


class ClipIntegrityError(ValueError):
    """A clip file disagrees with its index row (sample count, rate or PCM digest)."""


class SpeechSourceError(RuntimeError):
    """The requested ``--user-audio`` mode cannot serve this task."""


class PrerenderedBank:
    """A package's pre-rendered clips, looked up by exact text (first index row per text wins)."""

    def __init__(self, task_dir: Path, task_id: str | None = None) -> None:
        self.task_dir = Path(task_dir)
        self.task_id = task_id or self.task_dir.name
        self.index_path = self.task_dir / AUDIO_INDEX_FILE
        self._rows: dict[str, AudioIndexRow] = {}
        self._paths: dict[str, Path] = {}
        for number, line in enumerate(self._index_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = AudioIndexRow.model_validate_json(line)
            except ValidationError as exc:
                raise ClipIntegrityError(f"{self.index_path}:{number}: invalid index row: {exc}") from None
            if row.text not in self._rows:
                self._rows[row.text] = row
                self._paths[row.text] = self._clip_path(row, number)
        self._clips: dict[str, Clip] = {}

    def _index_text(self) -> str:
        try:
            path = resolve_inside(self.task_dir, AUDIO_INDEX_FILE)
            return read_bounded(path, JSONL_LIMITS).decode("utf-8")
        except (PathEscape, ParseRefused, UnicodeDecodeError) as exc:
            raise ClipIntegrityError(f"{self.index_path}: {exc}") from None

    def _clip_path(self, row: AudioIndexRow, number: int) -> Path:
        """The clip's real path, never outside ``user/audio/`` (the index is the package's word)."""
        try:
            return resolve_inside(self.index_path.parent, row.file, where=AUDIO_DIR)
        except PathEscape as exc:
            raise ClipIntegrityError(
                f"task {self.task_id!r}: {AUDIO_INDEX_FILE} line {number}: file = {row.file!r}: {exc}"
            ) from None

    @staticmethod
    def exists(task_dir: Path) -> bool:
        return (Path(task_dir) / AUDIO_INDEX_FILE).is_file()

    @property
    def texts(self) -> list[str]:
        return list(self._rows)

    def __contains__(self, text: object) -> bool:
        return text in self._rows

    def get(self, text: str) -> Clip:
        """The verified clip for ``text``; :class:`MissingClipError` names the text and the task."""
        if text in self._clips:
            return self._clips[text]
        row = self._rows.get(text)
        if row is None:
            raise MissingClipError(
                f"task {self.task_id!r}: no pre-rendered clip for text {text!r} in {self.index_path} "
                "(re-run `apex-voice render-audio` or use --user-audio espeak)"
            )
        self._clips[text] = clip = self._read(row, self._paths[text])
        return clip

    def _read(self, row: AudioIndexRow, path: Path) -> Clip:
        if path.is_file() and path.stat().st_size > MAX_CLIP_BYTES:
            raise ClipIntegrityError(f"{path}: file is larger than the {MAX_CLIP_BYTES >> 20} MiB limit for a clip")
        if row.sample_rate != SAMPLE_RATE:
            raise ClipIntegrityError(f"{path}: index says {row.sample_rate} Hz, the harness needs {SAMPLE_RATE} Hz")
        pcm = read_pcm16(path)
        if pcm.ndim != 1:
            raise ClipIntegrityError(f"{path}: expected a mono clip, got {pcm.shape[1]} channels")
        if len(pcm) != row.num_samples:
            raise ClipIntegrityError(f"{path}: {len(pcm)} samples, index.jsonl says {row.num_samples}")
        digest = pcm16_sha256(pcm)
        if digest != row.pcm16_sha256:
            raise ClipIntegrityError(f"{path}: pcm16_sha256 {digest} does not match index.jsonl ({row.pcm16_sha256})")
        words = [WordTiming(w.word, w.start_ms, w.end_ms) for w in row.word_timestamps]
        return Clip(pcm, row.text, f"prerendered:{row.file}", words)


class SpeechSource:
    """Clips for the texts a session may speak: from the bank when it has them, else live.

    ``fallback_texts`` lists texts that had to be synthesized live although a bank was used.
    """

    def __init__(self, task_id: str, bank: PrerenderedBank | None, live: LiveSynthesizer | None) -> None:
        self.task_id = task_id
        self.bank = bank
        self.live = live
        self.fallback_texts: list[str] = []

    async def prepare(self, texts: list[str]) -> dict[str, Clip]:
        """Every distinct text's clip, synthesized up front so the session loop never waits."""
        unique = list(dict.fromkeys(texts))
        clips: dict[str, Clip] = {}
        needed = unique
        if self.bank is not None:
            needed = [t for t in unique if t not in self.bank]
            # Reading and verifying the clips is file and CPU work: off the loop, so a session
            # starting never stalls the frames of sessions already streaming beside it.
            bank = self.bank
            clips.update(await asyncio.to_thread(lambda: {t: bank.get(t) for t in unique if t in bank}))
            if needed and self.live is None:
                self.bank.get(needed[0])  # raises MissingClipError naming the text
            for text in needed:
                _log.info("task %s: no pre-rendered clip for %r, synthesizing it live", self.task_id, text)
            self.fallback_texts.extend(t for t in needed if t not in self.fallback_texts)
        if needed and self.live is not None:
            clips.update(await self.live(needed))
        return {text: clips[text] for text in unique}


def _bank_or_none(task_dir: Path, task_id: str) -> PrerenderedBank | None:
    """The package's bank; an index that cannot be used makes the mode unable to serve the task."""
    if not PrerenderedBank.exists(task_dir):
        return None
    try:
        return PrerenderedBank(task_dir, task_id)
    except ClipIntegrityError as exc:
        raise SpeechSourceError(str(exc)) from None


def _espeak(voice: str, cache_dir: Path | None) -> LiveSynthesizer:
    return partial(espeak.synthesize, voice=voice, cache_dir=cache_dir)


def _auto(task_dir: Path, task_id: str, voice: str, cache_dir: Path | None) -> SpeechSource:
    return SpeechSource(task_id, _bank_or_none(task_dir, task_id), _espeak(voice, cache_dir))


def _prerendered(task_dir: Path, task_id: str, voice: str, cache_dir: Path | None) -> SpeechSource:
    bank = _bank_or_none(task_dir, task_id)
    if bank is None:
        raise SpeechSourceError(
            f"task {task_id!r}: --user-audio prerendered needs {task_dir / AUDIO_INDEX_FILE} "
            "(run `apex-voice render-audio` or use --user-audio auto)"
        )
    return SpeechSource(task_id, bank, None)


def _live_espeak(task_dir: Path, task_id: str, voice: str, cache_dir: Path | None) -> SpeechSource:
    return SpeechSource(task_id, None, _espeak(voice, cache_dir))


def _kokoro(task_dir: Path, task_id: str, voice: str, cache_dir: Path | None) -> SpeechSource:
    if importlib.util.find_spec("kokoro") is None:
        raise SpeechSourceError(
            "--user-audio kokoro needs the optional 'kokoro' extra (pip install 'apex-voice[kokoro]'); "
            "use --user-audio auto or espeak instead"
        )
    raise SpeechSourceError("--user-audio kokoro: live Kokoro synthesis is not supported by this harness yet")


_MODES: dict[UserAudioMode, Callable[[Path, str, str, Path | None], SpeechSource]] = {
    UserAudioMode.AUTO: _auto,
    UserAudioMode.PRERENDERED: _prerendered,
    UserAudioMode.ESPEAK: _live_espeak,
    UserAudioMode.KOKORO: _kokoro,
}


def open_speech_source(
    task_dir: Path,
    mode: UserAudioMode | str = UserAudioMode.AUTO,
    *,
    voice: str = espeak.DEFAULT_USER_VOICE,
    task_id: str | None = None,
    cache_dir: Path | None = None,
) -> SpeechSource:
    """Resolve ``--user-audio`` for one task. ``voice`` is the espeak voice for live synthesis
    (see :func:`harness.audio.espeak.user_voice`)."""
    try:
        resolved = UserAudioMode(mode)
    except ValueError:
        raise SpeechSourceError(
            f"unknown --user-audio mode {mode!r}; use one of {', '.join(m.value for m in UserAudioMode)}"
        ) from None
    task_dir = Path(task_dir)
    return _MODES[resolved](task_dir, task_id or task_dir.name, voice, cache_dir)
