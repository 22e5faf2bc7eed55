"""Small per-session subnets carved from one private pool, clear of every existing docker network.

Docker's default address pools hand each new network a large subnet and run out after ~30
networks ("could not find an available, non-overlapping IPv4 address pool"). One session needs
two addresses (gateway and server), so we give each session's internal network a /28 from a /16
of our own: 4096 sessions fit, and the engine's pools are never touched. Parallel processes start
at random offsets and retry on an overlap reported by the engine.
"""

from __future__ import annotations

import ipaddress
import os
import random
import threading
from collections.abc import Iterable, Iterator
from ipaddress import IPv4Network

__all__ = ["DEFAULT_SUBNET_POOL", "POOL_ENV_VAR", "SubnetPlanner", "subnets_in_use"]

POOL_ENV_VAR = "APEX_VOICE_SANDBOX_SUBNET_POOL"
DEFAULT_SUBNET_POOL = "10.213.0.0/16"
SESSION_PREFIX_LEN = 28


class SubnetPlanner:
    """Hands out free /28s of ``pool``; a subnet stays reserved in this process until released."""

    def __init__(self, pool: str | None = None, *, prefixlen: int = SESSION_PREFIX_LEN) -> None:
        text = pool or os.environ.get(POOL_ENV_VAR) or DEFAULT_SUBNET_POOL
        try:
            self.pool = IPv4Network(text)
        except ValueError as exc:
            raise ValueError(f"sandbox subnet pool {text!r} is not an IPv4 network: {exc}") from exc
        if not self.pool.is_private:
            raise ValueError(f"sandbox subnet pool {self.pool} is not a private range")
        if prefixlen < self.pool.prefixlen:
            raise ValueError(f"session prefix /{prefixlen} is larger than the pool {self.pool}")
        self.prefixlen = prefixlen
        self._reserved: set[IPv4Network] = set()
        self._lock = threading.Lock()

    def reserve(self, taken: Iterable[IPv4Network]) -> Iterator[IPv4Network]:
        """Candidate subnets, each reserved as it is yielded; release the ones not used.

        ``taken`` are the subnets of existing docker networks; none of the candidates overlaps one.
        """
        taken = [t for t in taken if t.version == 4 and t.overlaps(self.pool)]
        count = 2 ** (self.prefixlen - self.pool.prefixlen)
        start = random.randrange(count)
        size = 2 ** (32 - self.prefixlen)
        for step in range(count):
            base = int(self.pool.network_address) + ((start + step) % count) * size
            candidate = IPv4Network((base, self.prefixlen))
            if any(candidate.overlaps(t) for t in taken):
                continue
            with self._lock:
                if candidate in self._reserved:
                    continue
                self._reserved.add(candidate)
            yield candidate
        raise RuntimeError(f"sandbox subnet pool {self.pool} has no free /{self.prefixlen} left")

    def release(self, subnet: IPv4Network) -> None:
        with self._lock:
            self._reserved.discard(subnet)


def subnets_in_use(network_listing: Iterable[dict]) -> list[IPv4Network]:
    """IPv4 subnets of docker networks, from the engine's ``/networks`` listing."""
    found: list[IPv4Network] = []
    for network in network_listing:
        for config in (network.get("IPAM") or {}).get("Config") or []:
            subnet = config.get("Subnet")
            if subnet:
                parsed = ipaddress.ip_network(subnet, strict=False)
                if isinstance(parsed, IPv4Network):
                    found.append(parsed)
    return found
