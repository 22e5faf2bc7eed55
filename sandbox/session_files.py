"""The private files of one sandbox session: the control and agent tokens (and, for ``local``, the state).

Two tokens, both fresh per session: the control token guards the control API (harness only); the
agent token guards ``/mcp`` and is handed to whoever calls the task's tools (the harness's bridge,
a native agent, a provider's MCP client), so holding it never grants the control plane.

Everything lives in one ``mkdtemp`` directory (mode 0700) named ``apexvoice-*``, so other host
users cannot read the token or the state. Containers run as another uid: for them the token is made
world-readable and the control socket's directory world-writable; the 0700 parent still keeps host users out, because a bind mount exposes only the
mounted path itself. (The task itself is uploaded, never mounted; a container's state lives in its
own tmpfs.)

Each directory holds an ``owner`` file (pid, host, boot id of the harness that made it): when the
harness is SIGKILLed its directories stay behind, and :func:`sweep_orphaned_files` (run by the
first session of the next harness and by ``apex-voice sandbox cleanup``) removes those whose owner
is gone. :func:`owned_temp_dir` gives the harness's other per-session folders (the public copy of a
task served to a sandbox) the same owner file, so a kill leaves nothing the sweep does not find.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import SandboxUnavailableError
from .ownership import Owner, current_owner

__all__ = [
    "CONTROL_SOCKET_NAME",
    "PRIVATE_DIR_PREFIX",
    "SessionFiles",
    "owned_mkdtemp",
    "owned_temp_dir",
    "sweep_orphaned_files",
]

STATE_FILE_NAME = "state.jsonl"
CONTROL_SOCKET_NAME = "control.sock"
PRIVATE_DIR_PREFIX = "apexvoice-"
_OWNER_FILE = "owner"
#: Linux keeps unix socket paths to 107 bytes; the control socket lives in the private directory.
_MAX_SOCKET_PATH = 107


@dataclass(frozen=True)
class SessionFiles:
    root: Path
    token: str
    token_file: Path
    agent_token: str
    agent_token_file: Path
    state_dir: Path
    #: Where the server creates its control socket (bind-mounted into a container).
    control_dir: Path

    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE_NAME

    @property
    def control_socket(self) -> Path:
        return self.control_dir / CONTROL_SOCKET_NAME

    @classmethod
    def create(cls, prefix: str, *, for_container: bool) -> SessionFiles:
        parent = tempfile.gettempdir()
        if len(os.fsencode(parent)) + len(prefix) + 40 > _MAX_SOCKET_PATH:
            raise SandboxUnavailableError(
                f"the temporary directory {parent} is too long for a unix socket path; set TMPDIR to a shorter one"
            )
        root = owned_mkdtemp(prefix, parent)
        token, token_file = _write_token(root / "token")
        agent_token, agent_token_file = _write_token(root / "agent-token")
        state_dir = root / "state"
        state_dir.mkdir()
        control_dir = root / "control"
        control_dir.mkdir()
        if for_container:
            token_file.chmod(0o644)
            agent_token_file.chmod(0o644)
            control_dir.chmod(0o777)  # the container's uid creates the socket; the 0700 root guards it
        return cls(
            root=root, token=token, token_file=token_file, agent_token=agent_token,
            agent_token_file=agent_token_file, state_dir=state_dir, control_dir=control_dir,
        )  # fmt: skip

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _write_token(path: Path) -> tuple[str, Path]:
    """A fresh random token, written to ``path`` (created 0600, never overwritten)."""
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token)
    return token, path


def owned_mkdtemp(prefix: str, parent: str | None = None) -> Path:
    """A new 0700 ``apexvoice-*`` directory stamped with this harness as its owner."""
    if not prefix.startswith(PRIVATE_DIR_PREFIX):
        raise ValueError(f"private directories are named {PRIVATE_DIR_PREFIX}*, got {prefix!r}")
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    (root / _OWNER_FILE).write_text(json.dumps(asdict(current_owner())), encoding="utf-8")
    return root


@contextmanager
def owned_temp_dir(prefix: str) -> Iterator[Path]:
    """Like ``tempfile.TemporaryDirectory``, but swept by :func:`sweep_orphaned_files` after a kill."""
    root = owned_mkdtemp(prefix)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _owner(directory: Path) -> Owner | None:
    try:
        return Owner(**json.loads((directory / _OWNER_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None  # not one of ours, or still being created: leave it alone


def sweep_orphaned_files(parent: Path | None = None) -> list[Path]:
    """Remove private directories whose owning harness is gone; returns what was removed."""
    removed: list[Path] = []
    for directory in Path(parent or tempfile.gettempdir()).glob(f"{PRIVATE_DIR_PREFIX}*"):
        owner = _owner(directory) if directory.is_dir() and not directory.is_symlink() else None
        if owner is not None and owner.is_gone():
            shutil.rmtree(directory, ignore_errors=True)  # another sweep may be removing it too
            if not directory.exists():
                removed.append(directory)
    return removed
