"""Write-then-rename file writes: a reader never sees half a file, a crash never leaves one.

Every file the harness writes for others to read (indexes, checksums, audio clips, caches, results)
goes through here, so they all get the same guarantees: the temp file lives beside the target (same
filesystem, so the rename is atomic) and ends with the permissions a plain ``open()`` would give
(``mkstemp`` alone makes them private, which broke containers that read a dataset as another user).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_json", "atomic_write_text"]


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temp path beside ``path`` to write to; renamed over ``path`` when the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, _default_mode())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return Path(path)


def atomic_write_text(path: Path, text: str) -> Path:
    """UTF-8 text with the newlines given (no platform translation)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value: Any, *, indent: int | None = 2) -> Path:
    return atomic_write_text(path, json.dumps(value, indent=indent, ensure_ascii=False, default=str) + "\n")
