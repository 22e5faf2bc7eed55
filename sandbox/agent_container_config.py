"""What an agent container is, apart from running one: its port, its limits, where it listens.

Kept apart from :mod:`sandbox.agent_container` so a campaign that starts no agent container (every
in-tree agent, the local sandbox) never imports the Docker SDK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .hardening import ContainerLimits

__all__ = ["AGENT_PORT", "REALTIME_PATH", "AgentContainer", "AgentContainerConfig"]

#: The port every agent image serves the OpenAI Realtime protocol on (docs/agent-containers.md).
AGENT_PORT = 8765
#: The same as ``harness.agents.realtime.REALTIME_PATH`` (the sandbox imports nothing of the harness;
#: ``tests/test_agent_container_registry.py`` keeps them equal).
REALTIME_PATH = "/v1/realtime"


@dataclass(frozen=True)
class AgentContainerConfig:
    """Image and resource limits of one agent container."""

    image: str
    user: str = "10001:10001"
    mem_limit: str = "512m"  # python, numpy/scipy and the MCP client on one CPU
    pids_limit: int = 64
    nano_cpus: int = 1_000_000_000
    tmpfs_size: str = "64m"  # /tmp (counted in mem_limit): caches, synthesized speech
    nofile: int = 1024
    port: int = AGENT_PORT
    #: The websocket path the image serves (OpenAI Realtime's, or a telephony bot's).
    path: str = REALTIME_PATH
    ready_timeout_s: float = 60.0
    #: The image's command, replaced (the adapter-host image is told which adapter to host).
    command: tuple[str, ...] | None = None
    #: Host path → container path, bound read-only (a hosted adapter's package; nothing else).
    read_only_mounts: tuple[tuple[str, str], ...] = ()
    #: Variables set in the container (only what the user passes explicitly: ``run --adapter-env``).
    environment: tuple[tuple[str, str], ...] = ()

    @property
    def limits(self) -> ContainerLimits:
        return ContainerLimits(self.user, self.mem_limit, self.pids_limit, self.nano_cpus, self.tmpfs_size, self.nofile)


@dataclass(frozen=True)
class AgentContainer:
    """A running agent container: where the harness connects, and what to record."""

    url: str
    container_id: str
    name: str
    address: str
    image: str
    #: ``create_s``, ``start_s``, ``ready_s`` (port accepting) and ``start_to_ready_s`` (all of it).
    timings: dict[str, float]
    #: Its memory limit (``AgentContainerConfig.mem_limit``): a bot killed by it closes its socket.
    mem_limit: str = ""
    #: How it was found when the session was over, filled in as it is removed: ``status``
    #: (``running``: alive to the end), ``exit_code`` and ``oom_killed``.
    ended: dict[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        """For ``result.json``: which image ran, as which container, how long it took to start, and
        (the same dict, filled in at removal, before the record is written) how it ended."""
        return {
            "image": self.image,
            "container_id": self.container_id,
            "name": self.name,
            "url": self.url,
            "timings": dict(self.timings),
            "mem_limit": self.mem_limit,
            "ended": self.ended,
        }
