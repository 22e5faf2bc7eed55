"""The hardening every sandbox container gets, in one place: the MCP server and the agent under test.

Both are untrusted code on a session's ``internal`` network, so both run alike: read-only root
filesystem, an init process (zombies are reaped), a size-limited noexec ``/tmp`` tmpfs, all
capabilities dropped, no-new-privileges, a non-root uid, pids/memory/CPU/open-file limits and a
private IPC namespace. What differs (image, command, mounts, extra tmpfs) is added by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ContainerLimits", "hardened_create_options"]


@dataclass(frozen=True)
class ContainerLimits:
    """The resource limits and uid of one sandbox container."""

    user: str
    mem_limit: str
    pids_limit: int
    nano_cpus: int
    tmpfs_size: str
    nofile: int


def hardened_create_options(limits: ContainerLimits, *, extra_tmpfs: dict[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments for ``client.containers.create`` shared by every sandbox container."""
    from docker.types import Ulimit  # only where a container is created: the local path never loads docker

    return {
        "user": limits.user,
        "read_only": True,
        "init": True,  # an init process reaps zombies (a fork bomb's children)
        "tmpfs": {"/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmpfs_size}", **(extra_tmpfs or {})},
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges:true"],
        "pids_limit": limits.pids_limit,
        "mem_limit": limits.mem_limit,
        "memswap_limit": limits.mem_limit,
        "nano_cpus": limits.nano_cpus,
        "ulimits": [Ulimit(name="nofile", soft=limits.nofile, hard=limits.nofile)],
        "ipc_mode": "private",
    }
