"""Remove sandbox containers, networks and private folders left behind (crashed harness, kill -9).

Everything the docker backend creates carries :mod:`sandbox.labels`, with its owner (pid, host,
boot id). ``sweep()`` removes only leftovers whose owner is gone, which is safe while other
campaigns run (``apex-voice sandbox cleanup``, and the first session of every harness);
``sweep(run_id=...)`` removes one run's resources, ``sweep(owner_pid=...)`` those of one harness
process (its own forced exit), ``sweep(everything=True)`` all labelled ones (``--all``). Each
sweep also removes the private folders (tokens, state) of owners that are gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .labels import LABEL_OWNER_PID, LABEL_RUN, owner_of
from .session_files import sweep_orphaned_files

__all__ = ["SweepReport", "sweep"]

#: How long a sweep waits for a removal another client has in progress.
_REMOVAL_WAIT_S = 60


@dataclass
class SweepReport:
    containers: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def sweep(
    run_id: str | None = None, *, everything: bool = False, owner_pid: int | None = None, client: Any = None
) -> SweepReport:
    """Remove selected labelled containers (with their anonymous volumes), networks, then folders.

    Selected: the run's resources when ``run_id`` is given, those of the harness process
    ``owner_pid``, all with ``everything``, else those whose owner is gone.
    """
    import docker
    import docker.errors

    client = client or docker.from_env(use_context=False)
    if owner_pid is not None:
        selector = f"{LABEL_OWNER_PID}={owner_pid}"
    else:
        selector = f"{LABEL_RUN}={run_id}" if run_id else LABEL_RUN
    orphans_only = run_id is None and owner_pid is None and not everything
    report = SweepReport()
    # ignore_removed: list() inspects each container it found; one another harness removed in
    # between (its own teardown) would otherwise raise NotFound out of the sweep.
    for container in client.containers.list(all=True, filters={"label": selector}, ignore_removed=True):
        if orphans_only and not owner_of(container.labels).is_gone():
            continue
        try:
            container.remove(force=True, v=True)
            report.containers.append(container.name)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if not _removal_in_progress(exc):
                report.errors.append(f"container {container.name}: {exc}")
            elif (problem := _wait_removed(container)) is not None:
                report.errors.append(f"container {container.name}: {problem}")
    for network in client.networks.list(filters={"label": selector}):
        if orphans_only and not owner_of(network.attrs.get("Labels") or {}).is_gone():
            continue
        try:
            network.remove()
            report.networks.append(network.name)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            report.errors.append(f"network {network.name}: {exc}")
    report.folders = [str(path) for path in sweep_orphaned_files()]
    return report


def _removal_in_progress(exc: Any) -> bool:
    """The engine's 409 when another client is already removing the container: a sweep of another
    harness (every first session sweeps the orphans of dead harnesses) got there first."""
    return getattr(exc, "status_code", None) == 409 and "already in progress" in str(exc)


def _wait_removed(container: Any) -> str | None:
    """Wait for the other client's removal to finish (the network cannot go while the container
    holds it); ``None`` once the container is gone, else what went wrong."""
    import docker.errors

    try:
        container.wait(condition="removed", timeout=_REMOVAL_WAIT_S)
    except docker.errors.NotFound:
        pass
    except Exception as exc:  # the engine's error, or the wait's timeout
        return f"another client's removal did not finish: {exc}"
    return None
