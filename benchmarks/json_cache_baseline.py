"""The baseline of ``bench_judge_cache.py``: the whole-file JSON cache both caches used before issue 20.

Kept here, out of the package, only to measure against: the judge's verdicts and the act
observer's labels now live in :mod:`harness.first_writer_store` (one SQLite row per entry).
What it was: a JSON-object cache on disk, shared safely by concurrent processes.

Reads are served from memory (re-reading the file when another process changed it); every write
takes an exclusive lock, re-reads and merges, then atomically replaces the file, so concurrent
writers never lose each other's entries. A corrupt file is moved aside, never overwritten.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from harness.atomic_write import atomic_write_text

__all__ = ["LockedJsonCache"]

V = TypeVar("V")

_log = logging.getLogger(__name__)


class _CorruptCache(Exception):
    pass


class LockedJsonCache(Generic[V]):
    """Values by string key; ``accept`` keeps only well-formed values read from the file."""

    def __init__(self, path: Path | str, accept: Callable[[Any], bool]) -> None:
        self.path = Path(path)
        self._accept = accept
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._entries: dict[str, V] = {}
        self._seen_stat: tuple[int, int] | None = None
        self._refresh()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> V | None:
        """The cached value, re-reading the file once if another process may have added it."""
        if key not in self._entries:
            self._refresh()
        return self._entries.get(key)

    def put(self, key: str, value: V) -> None:
        """Record a value without losing entries written concurrently by other processes."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                on_disk = self._read_or_quarantine()
                on_disk.update(self._entries)
                on_disk[key] = value
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
            _log.warning("cache %s is corrupt (%s); using an empty cache until the next write "
                         "moves it aside", self.path, exc)
        self._seen_stat = stat

    def _stat(self) -> tuple[int, int] | None:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return None
        return info.st_mtime_ns, info.st_size

    def _read(self) -> dict[str, V]:
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
        return {str(k): v for k, v in data.items() if self._accept(v)}

    def _read_or_quarantine(self) -> dict[str, V]:
        """Read under the lock; a corrupt file is moved to ``<path>.corrupt-<ns>``, never overwritten."""
        try:
            return self._read()
        except _CorruptCache as exc:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{time.time_ns()}")
            os.replace(self.path, aside)
            _log.warning("cache %s is corrupt (%s); moved it to %s", self.path, exc, aside)
            return {}

    def _write(self, entries: dict[str, V]) -> None:
        atomic_write_text(self.path, json.dumps(entries, sort_keys=True))
        self._seen_stat = self._stat()
