"""On-disk cache of judge verdicts, shared safely by concurrent processes.

The file format is the published flat JSON object ``{md5-key: bool}``, so the published cache can
be dropped in to regrade the published runs offline. Unlike the reference (last writer wins),
every write takes an exclusive lock, re-reads and merges, then atomically replaces the file.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from harness.atomic_write import atomic_write_text

from .judge_prompt import JUDGE_VERSION

__all__ = ["JUDGE_CACHE_ENV", "JudgeCache", "default_cache_path", "judge_cache_key"]

JUDGE_CACHE_ENV = "APEX_VOICE_JUDGE_CACHE"

_log = logging.getLogger(__name__)


def judge_cache_key(field: str, pred: Any, gold: Any) -> str:
    """MD5 hex of ``"<version>|<field>|<str(pred)>|<str(gold)>"`` (context is not part of it)."""
    return hashlib.md5(f"{JUDGE_VERSION}|{field}|{pred}|{gold}".encode()).hexdigest()


def default_cache_path() -> Path:
    """``$APEX_VOICE_JUDGE_CACHE`` or ``~/.cache/apex_voice/judge_cache.json``."""
    configured = os.environ.get(JUDGE_CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "apex_voice" / "judge_cache.json"


class _CorruptCache(Exception):
    pass


class JudgeCache:
    """Verdicts by key; reads are served from memory, writes are merged into the file under a lock."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._entries: dict[str, bool] = {}
        self._seen_stat: tuple[int, int] | None = None
        self._refresh()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> bool | None:
        """The cached verdict, re-reading the file once if another process may have added it."""
        if key not in self._entries:
            self._refresh()
        return self._entries.get(key)

    def put(self, key: str, verdict: bool) -> None:
        """Record a verdict without losing entries written concurrently by other processes."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                on_disk = self._read_or_quarantine()
                on_disk.update(self._entries)
                on_disk[key] = bool(verdict)
                self._write(on_disk)
                self._entries = on_disk
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _refresh(self) -> None:
        stat = self._stat()
        if stat is None or stat == self._seen_stat:
            return
        try:
            self._entries = {**self._read(), **self._entries}
        except _CorruptCache as exc:
            _log.warning("judge cache %s is corrupt (%s); using an empty cache until the next write "
                         "moves it aside", self.path, exc)
        self._seen_stat = stat

    def _stat(self) -> tuple[int, int] | None:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return None
        return info.st_mtime_ns, info.st_size

    def _read(self) -> dict[str, bool]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _CorruptCache(f"invalid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise _CorruptCache(f"expected a JSON object, found {type(data).__name__}")
        return {str(k): v for k, v in data.items() if isinstance(v, bool)}

    def _read_or_quarantine(self) -> dict[str, bool]:
        """Read under the lock; a corrupt file is moved to ``<path>.corrupt-<ns>``, never overwritten."""
        try:
            return self._read()
        except _CorruptCache as exc:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{time.time_ns()}")
            os.replace(self.path, aside)
            _log.warning("judge cache %s is corrupt (%s); moved it to %s", self.path, exc, aside)
            return {}

    def _write(self, entries: dict[str, bool]) -> None:
        atomic_write_text(self.path, json.dumps(entries, sort_keys=True))
        self._seen_stat = self._stat()
