"""``.campaign.lock``: one writer per campaign directory.

Held as an advisory ``flock`` on the file, which the kernel drops when its holder dies, so a crash
never blocks the next run and no reader ever has to guess from the file's contents whether the lock
is live (a file that is still empty because its creator has not written its PID yet is as locked as
any other). The PID inside is only for the message naming the holder. Different models write to
different directories and never contend.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

__all__ = ["LOCK_FILE", "CampaignLock", "CampaignLockedError"]

LOCK_FILE = ".campaign.lock"


class CampaignLockedError(RuntimeError):
    """Another live process holds the campaign directory."""


def _holder(path: Path) -> int | None:
    """The PID in the lock file, ``None`` when it is gone or unreadable."""
    try:
        return int(path.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


class CampaignLock:
    """``with CampaignLock(out_dir):`` — exclusive for the block, removed on exit."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                pid = _holder(self.path)
                holder = f"pid {pid}" if pid is not None else "a process that is starting"
                raise CampaignLockedError(
                    f"another campaign is already writing to {self.out_dir} ({holder}, lock {self.path})"
                ) from None
            if self._is_current(fd):
                break
            os.close(fd)  # a releasing holder unlinked it between our open and our lock: take the new one
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def _is_current(self, fd: int) -> bool:
        try:
            return os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            return False

    def release(self) -> None:
        if self._fd is not None:
            self.path.unlink(missing_ok=True)  # while still locked, so nobody locks a file on its way out
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> CampaignLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
