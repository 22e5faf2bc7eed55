"""``.campaign.lock``: one writer per campaign directory.

Created exclusively with the writer's PID. A lock left by a process that died (or that cannot be
read) is reclaimed, so a crash never blocks the next run; a live holder is an error naming the
directory. Different models write to different directories and never contend.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

__all__ = ["LOCK_FILE", "CampaignLock", "CampaignLockedError"]

LOCK_FILE = ".campaign.lock"


class CampaignLockedError(RuntimeError):
    """Another live process holds the campaign directory."""


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OverflowError:
        return False
    return True


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
        self._held = False

    def acquire(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for _ in range(2):  # second try after reclaiming a dead holder's lock
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                pid = _holder(self.path)
                if pid is not None and _pid_alive(pid):
                    raise CampaignLockedError(
                        f"another campaign is already writing to {self.out_dir} (pid {pid}, lock {self.path})"
                    ) from None
                self.path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()}\n")
            self._held = True
            return
        raise CampaignLockedError(f"could not take {self.path}: another process keeps re-creating it")

    def release(self) -> None:
        if self._held:
            self._held = False
            if _holder(self.path) == os.getpid():
                self.path.unlink(missing_ok=True)

    def __enter__(self) -> CampaignLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
