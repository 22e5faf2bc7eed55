"""Follow a file another process appends to: complete lines only, from where we stopped.

Reads 64 KiB chunks from the last offset (toolong's watcher does the same); bytes after the last
newline are kept until their line is finished, so a line caught half-written is read once, whole.
A file that shrinks (rewritten from scratch) is read again from the start.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["FileTail"]

CHUNK = 64 * 1024


class FileTail:
    """New complete lines of one file since the previous :meth:`read_lines` (not thread-safe)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.offset = 0
        self._partial = b""

    def read_lines(self) -> list[bytes]:
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return []
        if size < self.offset:
            self.offset, self._partial = 0, b""
        if size == self.offset:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read(max(size - self.offset, CHUNK))
        self.offset += len(data)
        data = self._partial + data
        *lines, self._partial = data.split(b"\n")
        return [line for line in lines if line.strip()]
