"""A key → JSON value store on disk (SQLite in WAL mode) where the first write of a key wins.

Made for caches whose entries must never change once a session used one, such as the judge's
verdicts. One row per key, so a write costs the same with ten entries or a hundred thousand (the
JSON file it replaces was rewritten whole for every entry). Concurrent processes are safe: SQLite
serialises writers (a busy writer waits rather than fails), WAL lets readers go on meanwhile, and
``INSERT OR IGNORE`` followed by a read-back tells every writer the value that won.

Every call blocks on the disk: async code uses :meth:`aget` / :meth:`aput`, which run in a worker
thread and answer a key already seen from memory without leaving the loop (a stored value never
changes, so memory cannot go stale). The file is opened on first use, never in the constructor. A
file that is not a SQLite database is moved aside to ``<path>.corrupt-<ns>`` (with its ``-wal`` and
``-shm``), never overwritten. Where the file cannot be created at all (a read-only home, a path
through a file), the store lives in memory for this process, with a warning, rather than failing.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AddedEntries", "FirstWriterStore"]

_log = logging.getLogger(__name__)

#: How long a writer waits for another process's write to finish before giving up.
_BUSY_TIMEOUT_S = 60.0
_CORRUPTION = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_CANNOT_WRITE = {sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class AddedEntries:
    """What :meth:`FirstWriterStore.add_missing` did with the entries it was given."""

    offered: int
    added: int
    #: Keys the store already held with another value (the stored value stays).
    disagreeing: int


class FirstWriterStore:
    """Values by string key; a key, once written by any process, keeps its first value."""

    def __init__(self, path: Path | str, *, on_open: Callable[[FirstWriterStore], None] | None = None) -> None:
        """``on_open`` runs once per process, right after the file is first opened (e.g. an import)."""
        self.path = Path(path)
        self._on_open = on_open
        self._lock = threading.RLock()  # one connection, shared by the worker threads
        self._conn: sqlite3.Connection | None = None
        self._conn_pid = 0
        self._seen: dict[str, Any] = {}

    def get(self, key: str) -> Any | None:
        """The stored value, or ``None`` when no process has written ``key``."""
        if key in self._seen:
            return self._seen[key]
        with self._lock:
            row = self._connection().execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value = self._seen[key] = json.loads(row[0])
        return value

    def put(self, key: str, value: Any) -> Any:
        """Store ``value`` unless ``key`` has one already; returns the stored (first) value either way."""
        if key in self._seen:
            return self._seen[key]
        with self._lock:
            conn = self._connection()
            conn.execute("INSERT OR IGNORE INTO entries (key, value) VALUES (?, ?)", (key, json.dumps(value)))
            (stored,) = conn.execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        value = self._seen[key] = json.loads(stored)
        return value

    async def aget(self, key: str) -> Any | None:
        """:meth:`get` off the event loop (from memory when the key was seen before)."""
        if key in self._seen:
            return self._seen[key]
        return await asyncio.to_thread(self.get, key)

    async def aput(self, key: str, value: Any) -> Any:
        """:meth:`put` off the event loop."""
        if key in self._seen:
            return self._seen[key]
        return await asyncio.to_thread(self.put, key, value)

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._connection().execute("SELECT count(*) FROM entries").fetchone()
        return int(count)

    def items(self) -> list[tuple[str, Any]]:
        """Every entry, by key."""
        with self._lock:
            rows = self._connection().execute("SELECT key, value FROM entries ORDER BY key").fetchall()
        return [(key, json.loads(value)) for key, value in rows]

    def marker(self, name: str) -> str | None:
        """A value recorded with :meth:`add_missing` (``mark``), e.g. which file was imported."""
        with self._lock:
            row = self._connection().execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def add_missing(self, entries: Iterable[tuple[str, Any]], *, mark: tuple[str, str] | None = None) -> AddedEntries:
        """Add the entries whose keys the store lacks, in one transaction; the others keep their value.

        ``mark`` = ``(name, value)`` is recorded in the same transaction, so an import and the note
        that it happened are never apart.
        """
        rows = [(key, json.dumps(value)) for key, value in entries]
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("CREATE TEMP TABLE IF NOT EXISTS incoming (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.executemany("INSERT OR REPLACE INTO incoming (key, value) VALUES (?, ?)", rows)
                before = conn.total_changes
                conn.execute("INSERT OR IGNORE INTO entries (key, value) SELECT key, value FROM incoming")
                added = conn.total_changes - before
                (disagreeing,) = conn.execute(
                    "SELECT count(*) FROM incoming JOIN entries USING (key) WHERE incoming.value != entries.value"
                ).fetchone()
                conn.execute("DELETE FROM incoming")
                if mark is not None:
                    conn.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", mark)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return AddedEntries(offered=len(rows), added=added, disagreeing=int(disagreeing))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._conn_pid == os.getpid():
                self._conn.close()
            self._conn = None

    def _connection(self) -> sqlite3.Connection:
        # A connection must not cross a fork: a child opens its own (the parent's is left alone).
        if self._conn is None or self._conn_pid != os.getpid():
            self._conn = self._open()
            self._conn_pid = os.getpid()
            if self._on_open is not None:
                self._on_open(self)
        return self._conn

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return self._connect(self.path)
        except OSError as exc:
            return self._in_memory(exc)
        except sqlite3.DatabaseError as exc:
            if exc.sqlite_errorcode in _CANNOT_WRITE:
                return self._in_memory(exc)
            if exc.sqlite_errorcode not in _CORRUPTION:
                raise
        # Under a lock, so two processes that both found it corrupt do not move a fresh file aside.
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return self._connect(self.path)
            except sqlite3.DatabaseError as exc:
                if exc.sqlite_errorcode not in _CORRUPTION:
                    raise
                self._move_aside(exc)
                return self._connect(self.path)

    def _in_memory(self, exc: Exception) -> sqlite3.Connection:
        _log.warning("store %s cannot be written (%s); its entries are kept in memory for this process only",
                     self.path, exc)
        return self._connect(":memory:")

    @staticmethod
    def _connect(target: Path | str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # an in-memory database keeps its own journal mode
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across crashes of the process
            conn.executescript(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _move_aside(self, exc: sqlite3.DatabaseError) -> None:
        stamp = time.time_ns()
        for suffix in ("", "-wal", "-shm"):  # a stale WAL must never be replayed into the new file
            source = self.path.with_name(self.path.name + suffix)
            with contextlib.suppress(FileNotFoundError):
                os.replace(source, source.with_name(f"{source.name}.corrupt-{stamp}"))
        _log.warning("store %s is not a usable SQLite database (%s); moved it to %s.corrupt-%d",
                     self.path, exc, self.path.name, stamp)
