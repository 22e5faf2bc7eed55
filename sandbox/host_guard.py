"""Keep sandbox containers from opening connections to the host itself.

An ``internal`` docker network has no route out, but the host owns the network's gateway address,
so a container can still connect to every host service listening on any address (measured: the
gateway, docker0's 172.17.0.1 and the host's own LAN address all answered). Docker offers no
per-network switch for this. All sandbox bridges are named with one prefix, so a single rule per
address family closes it for every session, present and future::

    iptables -I INPUT -i avx+ -m conntrack --ctstate NEW -j DROP

Replies to connections the harness opens (health polls, MCP calls) are ESTABLISHED and pass.
The rule is installed once and left in place (it only matches our bridges); installing it is
announced (a warning naming the rule and how to remove it), and ``apex-voice sandbox cleanup
--firewall`` removes it. Installing it needs root; without it the sandbox still has no egress, and
the session metadata says the guard is off.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading

__all__ = ["BRIDGE_PREFIX", "HostGuard", "remove_host_guard"]

log = logging.getLogger(__name__)

#: Linux interface names are at most 15 characters: "avx" + a 12-character session id.
BRIDGE_PREFIX = "avx"
_COMMENT = "apexvoice-sandbox-host-guard"
_RULE = ["INPUT", "-i", f"{BRIDGE_PREFIX}+", "-m", "conntrack", "--ctstate", "NEW",
         "-m", "comment", "--comment", _COMMENT, "-j", "DROP"]  # fmt: skip
_TOOLS = ("iptables", "ip6tables")


class HostGuard:
    """Installs the INPUT drop rule for sandbox bridges (idempotent, once per process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: str | None = None

    def ensure(self) -> str:
        """``"on"`` when the IPv4 rule is in place, else ``"off: <reason>"``."""
        with self._lock:
            if self._state is None:
                self._state = self._install()
                if self._state != "on":
                    log.warning("sandbox host guard %s; containers can reach host services", self._state)
            return self._state

    @staticmethod
    def _install() -> str:
        problems: list[str] = []
        for tool in _TOOLS:
            binary = shutil.which(tool)
            if binary is None:
                problems.append(f"{tool} not found")
                continue
            try:
                if not _present(binary):
                    subprocess.run([binary, "-I", *_RULE], capture_output=True, timeout=10, check=True)
                    log.warning(
                        "sandbox host guard: installed the host firewall rule `%s -I %s` (drops connections "
                        "from sandbox bridges to this host); remove it with `apex-voice sandbox cleanup "
                        "--firewall`",
                        tool,
                        " ".join(_RULE),
                    )
            except (OSError, subprocess.SubprocessError) as exc:
                detail = getattr(exc, "stderr", b"") or b""
                problems.append(f"{tool}: {detail.decode(errors='replace').strip() or exc}")
        ipv4_failed = any(p.startswith("iptables") for p in problems)
        if problems:
            log.info("sandbox host guard: %s", "; ".join(problems))
        return f"off: {'; '.join(problems)}" if ipv4_failed else "on"


def _present(binary: str) -> bool:
    return subprocess.run([binary, "-C", *_RULE], capture_output=True, timeout=10).returncode == 0


def remove_host_guard() -> list[str]:
    """Delete every copy of the rule (both address families); returns what was done, one line each."""
    done: list[str] = []
    for tool in _TOOLS:
        binary = shutil.which(tool)
        if binary is None:
            continue
        removed = 0
        try:
            while _present(binary):
                subprocess.run([binary, "-D", *_RULE], capture_output=True, timeout=10, check=True)
                removed += 1
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            done.append(f"{tool}: cannot remove the rule: {detail.decode(errors='replace').strip() or exc}")
            continue
        done.append(f"{tool}: removed {removed} rule(s)" if removed else f"{tool}: no rule installed")
    return done
