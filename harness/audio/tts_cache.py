"""Disk cache of synthesized clips, so repeated sessions do not re-synthesize the same lines.

Keyed by everything that changes the samples (engine version, voice, rate, text, post-processing
version). Entries are single files written to a temp name and renamed, so concurrent writers of the
same key race harmlessly (identical content) and a reader never sees half an entry. An unreadable
entry is treated as a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from harness.atomic_write import atomic_path

from .clip import Clip, WordTiming

__all__ = ["CACHE_ENV_VAR", "TtsCache", "default_cache_dir"]

CACHE_ENV_VAR = "APEX_VOICE_TTS_CACHE"


def default_cache_dir() -> Path:
    """``$APEX_VOICE_TTS_CACHE`` or ``~/.cache/apex_voice/tts``."""
    override = os.environ.get(CACHE_ENV_VAR)
    return Path(override).expanduser() if override else Path.home() / ".cache" / "apex_voice" / "tts"


class TtsCache:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    @staticmethod
    def key(*parts: object) -> str:
        return hashlib.sha256(json.dumps([str(p) for p in parts], ensure_ascii=False).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.npz"

    def load(self, key: str, text: str, source: str) -> Clip | None:
        path = self._path(key)
        try:
            with np.load(path, allow_pickle=False) as entry:
                pcm = entry["pcm"].astype(np.int16)
                words = json.loads(str(entry["words"]))
                cached_text = str(entry["text"])
        except (OSError, ValueError, KeyError):
            return None
        if cached_text != text:
            return None
        return Clip(pcm, text, source, [WordTiming(**w) for w in words])

    def store(self, key: str, clip: Clip) -> None:
        with atomic_path(self._path(key)) as tmp, open(tmp, "wb") as handle:
            np.savez(
                handle,
                pcm=clip.pcm,
                text=np.array(clip.text),
                words=np.array(json.dumps([w.to_json() for w in clip.word_timestamps])),
            )
