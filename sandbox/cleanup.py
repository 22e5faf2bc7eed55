"""Remove sandbox containers and networks left behind (crashed harness, kill -9, engine restart).

Everything the docker backend creates carries :mod:`sandbox.labels`. ``sweep()`` removes all of it
(``apex-voice sandbox cleanup``), ``sweep(run_id=...)`` one run's, and ``sweep(orphans_only=True)``
only what belongs to harness processes on this host that no longer exist, which is safe to run at
start-up while other campaigns are running.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from typing import Any

from .labels import LABEL_HOST, LABEL_OWNER_PID, LABEL_RUN

__all__ = ["SweepReport", "sweep"]


@dataclass
class SweepReport:
    containers: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _process_alive(pid_text: str | None) -> bool:
    try:
        os.kill(int(pid_text or ""), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True  # someone else's process, or a label we cannot read: leave it alone
    return True


def _selected(labels: dict[str, str], orphans_only: bool) -> bool:
    if not orphans_only:
        return True
    if labels.get(LABEL_HOST) != socket.gethostname():
        return False
    return not _process_alive(labels.get(LABEL_OWNER_PID))


def sweep(run_id: str | None = None, *, orphans_only: bool = False, client: Any = None) -> SweepReport:
    """Remove labelled containers (with their anonymous volumes), then labelled networks."""
    import docker
    import docker.errors

    client = client or docker.from_env()
    selector = f"{LABEL_RUN}={run_id}" if run_id else LABEL_RUN
    report = SweepReport()
    for container in client.containers.list(all=True, filters={"label": selector}):
        if not _selected(container.labels, orphans_only):
            continue
        try:
            container.remove(force=True, v=True)
            report.containers.append(container.name)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            report.errors.append(f"container {container.name}: {exc}")
    for network in client.networks.list(filters={"label": selector}):
        if not _selected(network.attrs.get("Labels") or {}, orphans_only):
            continue
        try:
            network.remove()
            report.networks.append(network.name)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            report.errors.append(f"network {network.name}: {exc}")
    return report
