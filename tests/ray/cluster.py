"""A real local multi-node Ray cluster for a test module, on loopback only.

Every node (``ray.cluster_utils.Cluster``: a head and more raylets on this machine) binds to
127.0.0.1 (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``). The nodes and their workers (not the test
process) get a private temporary folder (``TMPDIR``), so what the cells leave behind — or do not —
can be checked there alone, whatever else runs on the machine; and the repository on
``PYTHONPATH``, so the workers import the harness and the test doubles
(``tests.ray.recording_agent``) by name.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.campaign.ray_executor import LOOPBACK, SANDBOX_RESOURCE
from tests.conftest import REPO

__all__ = ["LocalCluster", "leftovers", "local_cluster"]


@dataclass
class LocalCluster:
    cluster: Any
    #: The nodes' shared temporary folder (their ``TMPDIR``).
    tmp: Path

    @property
    def address(self) -> str:
        return self.cluster.address


@contextmanager
def local_cluster(
    *sandboxes: int, system_config: dict[str, Any] | None = None, site: Path | None = None
) -> Iterator[LocalCluster]:
    """One node per entry of ``sandboxes`` (the first is the head), each advertising that many;
    ``site``: a folder of installed distributions the nodes also have (on their ``PYTHONPATH``)."""
    # Short: Ray's unix sockets live under it, and their paths are limited to 107 bytes.
    tmp = Path(tempfile.mkdtemp(prefix="avray-", dir="/tmp"))
    with pytest.MonkeyPatch.context() as env:
        # Read by every Ray process as it starts; this process read it when it first imported Ray.
        env.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        from ray._private import ray_constants
        from ray.cluster_utils import Cluster

        env.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)
        with pytest.MonkeyPatch.context() as nodes_env:  # the nodes' environment, not this process's
            nodes_env.setenv("TMPDIR", str(tmp))
            path = [str(site) if site else None, str(REPO), os.environ.get("PYTHONPATH")]
            nodes_env.setenv("PYTHONPATH", os.pathsep.join(filter(None, path)))
            head, *others = sandboxes
            cluster = Cluster(initialize_head=True, head_node_args={
                "node_ip_address": LOOPBACK, "num_cpus": 1, "resources": {SANDBOX_RESOURCE: head},
                "include_dashboard": False, **({"_system_config": system_config} if system_config else {}),
            })
            try:
                for count in others:
                    cluster.add_node(node_ip_address=LOOPBACK, num_cpus=1, resources={SANDBOX_RESOURCE: count})
                cluster.wait_for_nodes()
            except BaseException:
                cluster.shutdown()
                raise
        assert cluster.address.startswith(f"{LOOPBACK}:"), cluster.address
        try:
            yield LocalCluster(cluster, tmp)
        finally:
            import ray

            ray.shutdown()
            cluster.shutdown()
            shutil.rmtree(tmp, ignore_errors=True)


def _server_processes(tmp: Path) -> list[int]:
    """Task servers (``python -m mcp_servers``) still running from a folder under ``tmp``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if b"mcp_servers" in cmdline and cwd.startswith(str(tmp)):
            found.append(int(proc.name))
    return found


def leftovers(tmp: Path) -> list[str]:
    """What the cells left on the nodes: private folders (``apexvoice-*``: task copies, session
    files, server tokens and state) and task server processes. Ray's own folder is not ours."""
    folders = sorted(p.name for p in tmp.glob("apexvoice-*"))
    return folders + [f"task server pid {pid}" for pid in _server_processes(tmp)]
