"""What the Ray executor costs per cell, and what it gives in throughput, against the local executor.

One run: the demo suite × ``--reps`` (the oracle, ``--sandbox local``, virtual clock) through the
local executor, then through a two-node local Ray cluster (``ray.cluster_utils.Cluster``, every
node on 127.0.0.1, ``--sandboxes`` each), both at ``--parallel``. Per cell it measures the time the
campaign waited for it (from the cell runner's call to its return, the record and files written)
against the session's own wall time (``wall_s``, measured where the session ran): the difference is
the executor's overhead — on the Ray path scheduling, a worker process, shipping the task package,
rebuilding the runner and backend on the node, packing the session's files (~30 MB of audio) and
landing them. Throughput is cells per minute of campaign wall time. The cluster's start is timed
apart (it is paid once per cluster, not per campaign).

On one 2-core machine the two nodes share the same two cores, so this measures the Ray path's cost,
not a speed-up: the gain comes from nodes with cores of their own.

Measured (issue 21) on the 2-core shared VM (load 1–6), the 10 demo tasks, oracle, local sandbox:

    --reps 1 --parallel 2 --sandboxes 1 (cluster up in 4.1 s)
    executor  passed  wall s  cells/min  session s (med)  cell s (med)  overhead s (med)  overhead s (max)
       local   10/10    24.6       24.3             4.45          4.49              0.08              0.24
     ray 2×1   10/10    34.3       17.5             3.95          6.27              2.32              4.75

    --reps 2 --parallel 4 --sandboxes 2 (cluster up in 7.4 s)
       local   20/20    45.2       26.6             8.15          8.22              0.09              0.28
     ray 2×2   20/20    67.9       17.7             8.40         12.40              3.84              9.34

So the Ray path costs 2–4 s per cell here (the worst cells: a worker's first cell, which imports the
harness), 0.67–0.72× the local throughput on the same two cores; it pays off with nodes of their own.

Usage: python benchmarks/bench_ray_executor.py [--reps N] [--parallel P] [--sandboxes S] [--only ID]...
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every node on loopback; read when Ray is imported

from harness.agents.registry import get_model  # noqa: E402  # after the variable above
from harness.audio.espeak import user_voice  # noqa: E402
from harness.audio.speech_bank import open_speech_source  # noqa: E402
from harness.campaign.campaign import CampaignCell, CampaignSettings, run_campaign  # noqa: E402
from harness.campaign.ray_executor import LOOPBACK, SANDBOX_RESOURCE, ray_cells  # noqa: E402
from harness.campaign.sandboxed_cell import SandboxedCellRunner  # noqa: E402
from harness.results.result_record import ResultRecord  # noqa: E402
from harness.tasks.dataset import resolve_data  # noqa: E402
from sandbox.backend import get_backend  # noqa: E402

DEMO_DATA = Path(__file__).resolve().parents[1] / "harness" / "demo_data"


@dataclass
class TimedCells:
    """A cell runner that times each call of the one it wraps."""

    inner: object
    waited_s: list[float] = field(default_factory=list)
    session_s: list[float] = field(default_factory=list)

    async def __call__(self, cell: CampaignCell, rep_dir: Path) -> ResultRecord:
        started = time.monotonic()
        record = await self.inner(cell, rep_dir)  # type: ignore[operator]
        self.waited_s.append(time.monotonic() - started)
        self.session_s.append(record.wall_s or 0.0)
        return record


@dataclass
class Figures:
    name: str
    cells: int
    passed: int
    wall_s: float
    timed: TimedCells

    def row(self) -> list[str]:
        overhead = [w - s for w, s in zip(self.timed.waited_s, self.timed.session_s, strict=True)]
        return [
            self.name, f"{self.passed}/{self.cells}", f"{self.wall_s:.1f}",
            f"{self.cells / self.wall_s * 60:.1f}", f"{statistics.median(self.timed.session_s):.2f}",
            f"{statistics.median(self.timed.waited_s):.2f}", f"{statistics.median(overhead):.2f}",
            f"{max(overhead):.2f}",
        ]


def _runner(task_dirs: list[Path], checksums) -> SandboxedCellRunner:
    return SandboxedCellRunner(
        model=get_model("oracle"), backend=get_backend("local"), task_dirs={d.name: d for d in task_dirs},
        speech=lambda b: open_speech_source(b.task_dir, "auto", voice=user_voice(b.persona.get("voice_id")),
                                            task_id=b.task_id),
        checksums=checksums,
    )


async def _measure(name: str, settings: CampaignSettings, tasks: list[str], run_cell) -> Figures:
    timed = TimedCells(run_cell)
    started = time.monotonic()
    result = await run_campaign(settings, tasks, timed)
    wall = time.monotonic() - started
    assert result.complete, result.summary()
    return Figures(name, len(result.outcomes), result.passed, wall, timed)


async def _run(args: argparse.Namespace, out: Path) -> list[Figures]:
    import ray
    from ray.cluster_utils import Cluster

    source = resolve_data(DEMO_DATA)
    dirs = [d for d in source.task_dirs if not args.only or d.name in args.only]
    tasks = [d.name for d in dirs]
    model = get_model("oracle")

    def settings(where: str, **more) -> CampaignSettings:
        return CampaignSettings(model=model, out_dir=out / where, repeats=args.reps, sandbox="local",
                                parallel=args.parallel, retry_backoff_s=0.0, **more)

    local_runner = _runner(dirs, source.checksums)
    try:
        local = await _measure("local", settings("local"), tasks, local_runner)
    finally:
        await local_runner.backend.aclose()

    started = time.monotonic()
    cluster = Cluster(initialize_head=True, head_node_args={
        "node_ip_address": LOOPBACK, "num_cpus": 1, "resources": {SANDBOX_RESOURCE: args.sandboxes},
        "include_dashboard": False,
    })
    try:
        cluster.add_node(node_ip_address=LOOPBACK, num_cpus=1, resources={SANDBOX_RESOURCE: args.sandboxes})
        cluster.wait_for_nodes()
        print(f"two-node cluster up in {time.monotonic() - started:.1f} s at {cluster.address}")
        async with ray_cells(settings("ray"), _runner(dirs, source.checksums), address=cluster.address) as remote:
            # The executor joined already: run the timed wrapper around its cells, locally scheduled.
            on_ray = await _measure(f"ray 2×{args.sandboxes}", settings("ray"), tasks, remote)
    finally:
        ray.shutdown()
        cluster.shutdown()
    return [local, on_ray]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--sandboxes", type=int, default=1, help="apex_sandbox per node")
    parser.add_argument("--only", action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as out:
        figures = asyncio.run(_run(args, Path(out)))
    headers = ["executor", "passed", "wall s", "cells/min", "session s (med)", "cell s (med)",
               "overhead s (med)", "overhead s (max)"]
    rows = [headers, *(f.row() for f in figures)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    for row in rows:
        print("  ".join(value.rjust(width) for value, width in zip(row, widths, strict=True)))
    local, on_ray = figures
    print(f"ray/local throughput: {local.wall_s / on_ray.wall_s:.2f}×; parallel {args.parallel}, "
          f"{args.reps} rep(s) of {local.cells // args.reps} demo tasks")


if __name__ == "__main__":
    main()
