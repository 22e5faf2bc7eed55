"""The environment persisted to one JSON file after every mutation (write-then-rename).

The file exists so the harness can still grade a session whose server hung or whose container was
killed: the kernel keeps a finished ``write`` + ``rename`` whatever happens to the writing process
afterwards. It does not ``fsync``: surviving a host power loss is not the goal, and an fsync per
tool call cost more (~6 ms) than the whole rest of the round trip. Without it a write is a page-cache
copy (~0.4 ms), done on the event loop: no thread hop, and no other write can interleave.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["StateFile"]


class StateFile:
    """A snapshot file that is always complete: readers see the previous or the new version."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write_bytes(self, snapshot_json: bytes) -> None:
        """Replace the file with ``snapshot_json`` (already serialized) in one atomic rename.

        One writer per file (the server's event loop), so the temporary name can be fixed.
        """
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            tmp.write_bytes(snapshot_json)
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def read(self) -> dict[str, Any]:
        return json.loads(self.path.read_text(encoding="utf-8"))
