"""The private files of one sandbox session: the control token and the state file.

Everything lives in one ``mkdtemp`` directory (mode 0700), so other host users cannot read the
token or the state. Containers run as another uid: for them the token is made world-readable and
the state directory world-writable; the 0700 parent still keeps host users out, because a bind
mount exposes only the mounted path itself. (The task itself is uploaded, never mounted.)
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SessionFiles"]

STATE_FILE_NAME = "state.jsonl"


@dataclass(frozen=True)
class SessionFiles:
    root: Path
    token: str
    token_file: Path
    state_dir: Path

    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE_NAME

    @classmethod
    def create(cls, prefix: str, *, for_container: bool) -> SessionFiles:
        root = Path(tempfile.mkdtemp(prefix=prefix))
        token = secrets.token_urlsafe(32)
        token_file = root / "token"
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(token)
        state_dir = root / "state"
        state_dir.mkdir()
        if for_container:
            token_file.chmod(0o644)
            state_dir.chmod(0o777)
        return cls(root=root, token=token, token_file=token_file, state_dir=state_dir)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
