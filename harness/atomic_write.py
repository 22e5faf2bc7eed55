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


def _read_umask() -> int:
    """The process umask, read once at import. Reading it by setting it (``os.umask``) would, for a
    moment, give files that other threads create meanwhile mode 0666/0777; /proc shows it without
    a change, and the swap is the fallback while the import (single-threaded) runs."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0)
    os.umask(umask)
    return umask


#: Mode of every written file: what a plain ``open()`` would give under the process umask.
_FILE_MODE = 0o666 & ~_read_umask()


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable: without it a crash can bring back the old entry."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a directory; the rename is still atomic
    finally:
        os.close(fd)


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
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
        _fsync_directory(path.parent)
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
