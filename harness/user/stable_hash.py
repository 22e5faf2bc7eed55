"""The published deterministic hashing behind variant choice and scenario ids.

Kept bit-compatible with the reference so the same task hears the same words: BLAKE2b with a
16-byte digest over the parts' ``str()`` joined by the unit separator U+001F.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from enum import Enum
from typing import TypeVar

__all__ = ["DEFAULT_TRACK", "scenario_id", "stable_choice", "stable_int", "stable_key"]

T = TypeVar("T")

_SEPARATOR = "\x1f"
DEFAULT_TRACK = "FROZEN_SYNTHETIC"


def stable_key(*parts: object) -> str:
    """Hex BLAKE2b-128 of the parts' ``str()`` joined by U+001F."""
    joined = _SEPARATOR.join(str(p) for p in parts)
    return hashlib.blake2b(joined.encode("utf-8"), digest_size=16).hexdigest()


def stable_int(*parts: object) -> int:
    """The first 64 bits of :func:`stable_key` as an unsigned integer."""
    return int(stable_key(*parts)[:16], 16)


def stable_choice(seq: Sequence[T], *parts: object) -> T:
    """Pick an element of ``seq`` reproducibly from ``parts``."""
    if not seq:
        raise ValueError(f"stable_choice needs a non-empty sequence (parts={parts!r})")
    return seq[stable_int(*parts) % len(seq)]


def _plain(value: object) -> str:
    # ``str()`` of a str-Enum is "Cls.MEMBER" on 3.11; the published id uses the bare value.
    return str(value.value) if isinstance(value, Enum) else str(value)


def scenario_id(task_id: str, version: str, condition: object, track: object = DEFAULT_TRACK) -> str:
    """``"<task_id>@<version>:<condition>:<track>"`` — the seed context of variant selection."""
    return f"{task_id}@{version}:{_plain(condition)}:{_plain(track)}"
