"""On-disk cache of judge verdicts, shared safely by concurrent processes.

The file format is the published flat JSON object ``{md5-key: bool}``, so the published cache can
be dropped in to regrade the published runs offline. Unlike the reference (last writer wins),
every write takes an exclusive lock, re-reads and merges, then atomically replaces the file.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from harness.locked_json_cache import LockedJsonCache

from .judge_prompt import JUDGE_VERSION

__all__ = ["JUDGE_CACHE_ENV", "JudgeCache", "default_cache_path", "judge_cache_key"]

JUDGE_CACHE_ENV = "APEX_VOICE_JUDGE_CACHE"

def judge_cache_key(field: str, pred: Any, gold: Any) -> str:
    """MD5 hex of ``"<version>|<field>|<str(pred)>|<str(gold)>"`` (context is not part of it)."""
    return hashlib.md5(f"{JUDGE_VERSION}|{field}|{pred}|{gold}".encode()).hexdigest()


def default_cache_path() -> Path:
    """``$APEX_VOICE_JUDGE_CACHE`` or ``~/.cache/apex_voice/judge_cache.json``."""
    configured = os.environ.get(JUDGE_CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "apex_voice" / "judge_cache.json"


class JudgeCache(LockedJsonCache[bool]):
    """Verdicts by key (the published ``{md5-key: bool}`` file)."""

    def __init__(self, path: Path | str | None = None) -> None:
        super().__init__(path if path is not None else default_cache_path(), accept=lambda v: isinstance(v, bool))

    def put(self, key: str, verdict: bool) -> None:
        super().put(key, bool(verdict))
