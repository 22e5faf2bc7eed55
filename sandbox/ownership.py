"""Who owns a sandbox resource, and whether that owner is gone (so the resource is a leftover).

An owner is a harness process: its pid, its host and the host's boot id. A pid alone is not enough:
after a reboot (or on another host sharing the engine) the same pid may belong to anything. A
resource is an orphan only when its owner is on this host and either the boot id differs or the
pid no longer exists; an owner we cannot judge (another host, a pid we may not signal) is alive.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Owner", "current_owner"]

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _boot_id() -> str:
    try:
        return _BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return "unknown"


@dataclass(frozen=True)
class Owner:
    pid: str
    host: str
    boot_id: str

    def is_gone(self) -> bool:
        """True only for an owner on this host that died (or belonged to an earlier boot)."""
        if self.host != socket.gethostname():
            return False
        if self.boot_id not in ("", "unknown") and self.boot_id != _boot_id():
            return True
        try:
            os.kill(int(self.pid), 0)
        except ProcessLookupError:
            return True
        except (PermissionError, ValueError, OverflowError):
            return False  # someone else's process, or a value we cannot read: leave it alone
        return False


def current_owner() -> Owner:
    return Owner(pid=str(os.getpid()), host=socket.gethostname(), boot_id=_boot_id())
