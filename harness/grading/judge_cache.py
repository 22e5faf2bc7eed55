"""The judge's verdicts on disk: one SQLite row per verdict, the published JSON file read and written.

The configured path (``$APEX_VOICE_JUDGE_CACHE``, default ``~/.cache/apex_voice/judge_cache.json``)
names the published flat JSON object ``{md5-key: bool}``; the verdicts themselves live beside it in
``<stem>.sqlite3`` (:class:`~harness.first_writer_store.FirstWriterStore`). A JSON file found at the
configured path is imported when the store is first used (again whenever the file changes), so the
published cache can still be dropped in to regrade the published runs offline, and
:meth:`JudgeCache.export_json` writes the same format back out.

Unlike the reference (the whole file rewritten per verdict, last writer wins), a write costs one row
and the first verdict for a key wins, in every process: a verdict a session was graded with never
changes under a later session. An imported verdict that disagrees with a stored one is reported and
dropped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any, Protocol

from harness.atomic_write import atomic_write_text
from harness.first_writer_store import AddedEntries, FirstWriterStore

from .judge_prompt import JUDGE_VERSION

__all__ = [
    "JUDGE_CACHE_ENV",
    "JudgeCache",
    "NotAVerdictFile",
    "VerdictStore",
    "WitnessedVerdicts",
    "default_cache_path",
    "judge_cache_key",
    "read_verdict_file",
    "store_path_for",
]

JUDGE_CACHE_ENV = "APEX_VOICE_JUDGE_CACHE"
_STORE_SUFFIX = ".sqlite3"
_IMPORT_MARK = "imported_json"

_log = logging.getLogger(__name__)


def judge_cache_key(field: str, pred: Any, gold: Any) -> str:
    """MD5 hex of ``"<version>|<field>|<str(pred)>|<str(gold)>"`` (context is not part of it)."""
    return hashlib.md5(f"{JUDGE_VERSION}|{field}|{pred}|{gold}".encode()).hexdigest()


def default_cache_path() -> Path:
    """``$APEX_VOICE_JUDGE_CACHE`` or ``~/.cache/apex_voice/judge_cache.json``."""
    configured = os.environ.get(JUDGE_CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "apex_voice" / "judge_cache.json"


def store_path_for(path: Path) -> Path:
    """The SQLite file of the cache configured as ``path``: ``<stem>.sqlite3`` beside it, or
    ``path`` itself when it already ends in ``.sqlite3`` (then there is no JSON file to import)."""
    return path if path.suffix == _STORE_SUFFIX else path.with_suffix(_STORE_SUFFIX)


class NotAVerdictFile(ValueError):
    """A JSON file that cannot be read as the published ``{key: bool}`` object."""


class JudgeCache:
    """Verdicts by :func:`judge_cache_key`; the first verdict stored for a key wins."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.store_path = store_path_for(self.path)
        self._store = FirstWriterStore(self.store_path, on_open=self._import_configured_json)

    def get(self, key: str) -> bool | None:
        return _verdict(self._store.get(key))

    def put(self, key: str, verdict: bool) -> bool:
        """Record ``verdict`` unless the key has one; returns the verdict that stands."""
        return bool(self._store.put(key, bool(verdict)))

    async def aget(self, key: str) -> bool | None:
        """:meth:`get` without blocking the event loop."""
        return _verdict(await self._store.aget(key))

    async def aput(self, key: str, verdict: bool) -> bool:
        """:meth:`put` without blocking the event loop."""
        return bool(await self._store.aput(key, bool(verdict)))

    def __len__(self) -> int:
        return len(self._store)

    def import_json(self, path: Path | str) -> AddedEntries:
        """Add the verdicts of a published-format file that the store lacks (stored ones stay).

        Raises :class:`NotAVerdictFile` or :class:`OSError` when the file cannot be read.
        """
        return self._store.add_missing(read_verdict_file(Path(path)).items())

    def export_json(self, path: Path | str) -> int:
        """Write every verdict as the published flat JSON object (sorted keys); returns the count."""
        entries = {key: value for key, value in self._store.items() if isinstance(value, bool)}
        atomic_write_text(Path(path), json.dumps(entries, sort_keys=True))
        return len(entries)

    def close(self) -> None:
        self._store.close()

    def _import_configured_json(self, store: FirstWriterStore) -> None:
        """On first use: import the JSON file at the configured path if it changed since last time."""
        if self.path == self.store_path:
            return
        try:
            info = self.path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return  # no JSON file to import
        except OSError as exc:
            _log.warning("judge cache %s cannot be read (%s); its verdicts are not used", self.path, exc)
            return
        version = f"{self.path.resolve()}|{info.st_mtime_ns}|{info.st_size}"
        if store.marker(_IMPORT_MARK) == version:
            return
        try:
            verdicts = read_verdict_file(self.path)
        except (NotAVerdictFile, OSError) as exc:
            _log.warning("judge cache %s: %s; its verdicts are not used (the file is left as it is)", self.path, exc)
            return
        added = store.add_missing(verdicts.items(), mark=(_IMPORT_MARK, version))
        if added.disagreeing:
            _log.warning("judge cache %s: %d of its verdicts disagree with verdicts already stored in %s; "
                         "the stored ones stand", self.path, added.disagreeing, self.store_path)


class VerdictStore(Protocol):
    """Where a judge looks a verdict up and stores the one it decided (first writer wins)."""

    async def aget(self, key: str) -> bool | None: ...

    async def aput(self, key: str, verdict: bool) -> bool: ...


class WitnessedVerdicts:
    """A verdict store that remembers every verdict read from or stored into it.

    A cell graded on a Ray node uses its node's cache through this, and brings back
    :attr:`verdicts` (what its grading stood on) for the campaign's own store: ``regrade`` on the
    driver finds them there, and the first verdict for a key wins campaign-wide, not per node.
    """

    def __init__(self, store: VerdictStore) -> None:
        self._store = store
        #: Key → the verdict that stands for it, as this store's users saw it.
        self.verdicts: dict[str, bool] = {}

    async def aget(self, key: str) -> bool | None:
        verdict = await self._store.aget(key)
        if verdict is not None:
            self.verdicts[key] = verdict
        return verdict

    async def aput(self, key: str, verdict: bool) -> bool:
        stands = await self._store.aput(key, verdict)
        self.verdicts[key] = stands
        return stands


def read_verdict_file(path: Path) -> dict[str, bool]:
    """The boolean entries of a published-format judge cache (other values are skipped, as published)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise NotAVerdictFile(f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise NotAVerdictFile(f"expected a JSON object, found {type(data).__name__}")
    return {str(key): value for key, value in data.items() if isinstance(value, bool)}


def _verdict(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None
