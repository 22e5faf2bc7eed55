"""Soak: many oracle sessions in real Docker sandboxes through the campaign API; nothing may leak.

    .venv/bin/python benchmarks/bench_soak.py [--sessions 200] [--parallel 16] [--parallel-sessions N]
        [--every 20] [--only ID]...        # quick check: --sessions 10 --parallel 4

Two phases, each one campaign (``run_campaign`` with the ``SandboxedCellRunner`` that
``apex-voice run --sandbox docker`` uses) of repetitions over the demo suite tasks, oracle agent on
the virtual clock: (a) ``--sessions`` sessions back to back (``--parallel 1``), (b)
``--parallel-sessions`` sessions (default 2 × ``--parallel``) with ``--parallel`` at once.

Printed per phase: sessions/min; session wall p50/p95 (``result.json`` ``wall_s``); container
start-to-ready p50/p95 (``sandbox.timings.start_to_ready_s``) and the share of warm starts; the MCP
server container's peak memory p50/max (its cgroup's peak, read just before teardown; ``docker
stats`` where the cgroup is not readable); the harness RSS (``VmRSS``) at start, every ``--every``
sessions and at the end, with the least-squares slope in MiB per 100 sessions (flat memory: a
slope near 0 once the caches are warm). After each phase every container, network and folder this
process created (its ``apexvoice.owner_pid`` label, the ``owner`` file of ``apexvoice-*`` folders)
is listed: ``LEAKS: 0``, or what was left.

Figures on the 2-core development machine, shared with other sessions (2026-12-01):

    (a) 200 back to back (10 tasks x 20), default options:
      200/200 ran, 200 passed (PTS 1); 16.9 sessions/min (200 in 709 s)
      session wall p50 2.90 s, p95 7.30 s; start-to-ready p50 85 ms, p95 1339 ms (199/200 warm)
      MCP server container peak (cgroup v1 max_usage): p50 85.5 MiB, max 85.8 MiB
      harness RSS: 183.6 MiB at start, 307.9 after 20, 313.2 after 100, 317.7 after 200;
      slope +5.77 MiB/100 sessions after the first 20 (see below), LEAKS: 0
    (b) 16 in parallel, 40 sessions (10 tasks x 4; the run before counts were made exact):
      40/40 ran, 40 passed; 15.6 sessions/min (40 in 154 s) -- 2 cores: parallelism buys nothing
      session wall p50 55.0 s, p95 76.5 s; start-to-ready p50 18.7 s, p95 50.6 s (9/40 warm:
      16 containers booting python + mcp at once on 2 cores); container peak p50 85.6, max 85.7 MiB
      harness RSS 317.7 -> 822.4 MiB with 16 sessions live, 589.9 MiB at the end; LEAKS: 0

    The back-to-back slope is the campaign keeping its results: ``run_campaign`` returns every
    cell's ``ResultRecord`` (about 30 KiB each in memory, measured with tracemalloc), i.e. about
    3 MiB per 100 sessions by design. ``--sessions 80 --skip parallel --trace-growth 25``: the
    Python heap grew 1.6 MiB over sessions 21-80, all of it in what the records hold (pydantic
    model construction 1167 KiB, the grading and metrics rows 150 KiB, the YAML and JSON values
    they quote 210 KiB); nothing of the sandbox, the session loop or the event bus grew. The
    rest of the RSS slope is the allocator keeping freed arenas (RSS rises by steps, then stays).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agents.registry import get_model
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.campaign.campaign import CampaignSettings, CellOutcome, run_campaign
from harness.campaign.sandboxed_cell import SandboxedCellRunner
from harness.tasks.dataset import resolve_data
from harness.tasks.loader import load_task
from sandbox.docker_backend import DockerBackend
from sandbox.labels import LABEL_OWNER_PID
from sandbox.session_files import PRIVATE_DIR_PREFIX

MIB = 1024 * 1024
#: Where a container's peak memory is, by cgroup layout (v1 cgroupfs, v2 cgroupfs, v2 systemd).
CGROUP_PEAKS = (
    "/sys/fs/cgroup/memory/docker/{id}/memory.max_usage_in_bytes",
    "/sys/fs/cgroup/docker/{id}/memory.peak",
    "/sys/fs/cgroup/system.slice/docker-{id}.scope/memory.peak",
)


def rss_bytes() -> int:
    """This process's resident set now (``VmRSS``; ``ru_maxrss`` would only ever grow)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/self/status has no VmRSS line")


def container_peak_bytes(client: Any, container_id: str) -> tuple[int | None, str]:
    """The container's peak memory so far and where it was read (cgroup file, else docker stats)."""
    for pattern in CGROUP_PEAKS:
        path = Path(pattern.format(id=container_id))
        try:
            return int(path.read_text().strip()), "cgroup peak"
        except (OSError, ValueError):
            continue
    stats = client.containers.get(container_id).stats(stream=False).get("memory_stats", {})
    return stats.get("max_usage") or stats.get("usage"), "docker stats"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else math.nan


def slope_per_100(points: list[tuple[int, int]]) -> float:
    """Least-squares RSS growth in MiB per 100 sessions."""
    if len(points) < 2:
        return math.nan
    xs, ys = [p[0] for p in points], [p[1] / MIB for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return 100 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else math.nan


@dataclass
class MeasuringRunner(SandboxedCellRunner):
    """The campaign's own cell runner, reading the server container's peak memory before teardown."""

    container_peaks: list[int] = field(default_factory=list)
    peak_source: str = ""

    async def run_session(self, cell, bundle, env, session_dir, run_id, sandbox_env):  # type: ignore[no-untyped-def]
        session = await super().run_session(cell, bundle, env, session_dir, run_id, sandbox_env)
        client = self.backend.client  # type: ignore[attr-defined]
        peak, self.peak_source = await asyncio.to_thread(
            container_peak_bytes, client, sandbox_env.metadata["container_id"]
        )
        if peak:
            self.container_peaks.append(peak)
        return session


def leftovers(client: Any, pid: int) -> list[str]:
    """Containers, networks and ``apexvoice-*`` folders created by process ``pid`` that still exist."""
    label = {"label": f"{LABEL_OWNER_PID}={pid}"}
    found = [f"container {c.name}" for c in client.containers.list(all=True, filters=label, ignore_removed=True)]
    found += [f"network {n.name}" for n in client.networks.list(filters=label)]
    for folder in Path(tempfile.gettempdir()).glob(f"{PRIVATE_DIR_PREFIX}*"):
        try:
            owner = json.loads((folder / "owner").read_text())
        except (OSError, ValueError):
            continue
        if str(owner.get("pid")) == str(pid):
            found.append(f"folder {folder}")
    return found


def task_split(sessions: int, n_tasks: int) -> tuple[int, int]:
    """``(tasks, repeats)`` with ``tasks × repeats == sessions`` exactly, using as many tasks as divide it."""
    tasks = max(d for d in range(1, min(sessions, n_tasks) + 1) if sessions % d == 0)
    return tasks, sessions // tasks


def print_growth(before: tracemalloc.Snapshot, top: int) -> None:
    """The allocation sites that grew most since ``before`` (what a rising RSS slope is made of)."""
    diff = tracemalloc.take_snapshot().compare_to(before, "lineno")
    print(f"  largest growth since the first RSS sample (tracemalloc, top {top}):")
    for stat in diff[:top]:
        print(f"    {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  {stat.traceback[0]}")


async def soak(
    name: str,
    task_dirs: list[Path],
    sessions: int,
    parallel: int,
    every: int,
    out_root: Path,
    trace_top: int = 0,
) -> None:
    spec = get_model("oracle")
    n_tasks, repeats = task_split(sessions, len(task_dirs))
    tasks = task_dirs[:n_tasks]
    bundles = [load_task(d) for d in tasks]
    speech = {
        b.task_id: open_speech_source(
            b.task_dir, "auto", voice=user_voice(b.persona.get("voice_id")), task_id=b.task_id
        )
        for b in bundles
    }
    backend = DockerBackend()
    await asyncio.to_thread(backend.prepare)
    runner = MeasuringRunner(
        model=spec,
        backend=backend,
        task_dirs={b.task_id: b.task_dir for b in bundles},
        speech=lambda bundle: speech[bundle.task_id],
    )
    settings = CampaignSettings(
        model=spec, out_dir=out_root / name, repeats=repeats, sandbox="docker", parallel=parallel
    )
    rss: list[tuple[int, int]] = [(0, rss_bytes())]
    settled: list[CellOutcome] = []
    traced: list[tracemalloc.Snapshot] = []
    if trace_top:
        tracemalloc.start()
    print(
        f"\n[{name}] {len(tasks) * repeats} sessions ({len(tasks)} tasks x {repeats}), {parallel} in parallel"
    )
    print(f"  harness RSS at start: {rss[0][1] / MIB:.1f} MiB")

    def on_cell(outcome: CellOutcome) -> None:
        settled.append(outcome)
        if len(settled) % every == 0:
            rss.append((len(settled), rss_bytes()))
            print(f"  after {len(settled):4d} sessions: RSS {rss[-1][1] / MIB:.1f} MiB", flush=True)
            if trace_top and not traced:
                traced.append(tracemalloc.take_snapshot())

    t0 = time.perf_counter()
    try:
        result = await run_campaign(settings, [b.task_id for b in bundles], runner, on_cell=on_cell)
    finally:
        await backend.aclose()
    elapsed = time.perf_counter() - t0
    if rss[-1][0] != len(settled):
        rss.append((len(settled), rss_bytes()))
    rows = result.rows
    walls = [r.wall_s for r in rows]
    ready = [
        r.sandbox["timings"]["start_to_ready_s"]
        for r in rows
        if "start_to_ready_s" in r.sandbox.get("timings", {})
    ]
    warm = sum(bool(r.sandbox.get("warm")) for r in rows)
    peaks = [p / MIB for p in runner.container_peaks]
    statuses = {s: sum(o.status == s for o in result.outcomes) for s in {o.status for o in result.outcomes}}
    print(f"  outcomes {statuses}; {result.passed}/{len(result.outcomes)} passed (PTS 1)")
    print(f"  sessions/min: {len(rows) / elapsed * 60:.1f} ({len(rows)} in {elapsed:.0f} s)")
    print(f"  session wall: p50 {pct(walls, 0.5):.2f} s  p95 {pct(walls, 0.95):.2f} s")
    print(
        f"  container start-to-ready: p50 {pct(ready, 0.5) * 1000:.0f} ms  p95 {pct(ready, 0.95) * 1000:.0f} ms"
        f"  ({warm}/{len(rows)} warm)"
    )
    if peaks:
        print(
            f"  MCP server container memory ({runner.peak_source}): p50 {pct(peaks, 0.5):.1f} MiB  max {max(peaks):.1f} MiB"
        )
    print(
        f"  harness RSS: start {rss[0][1] / MIB:.1f} MiB, end {rss[-1][1] / MIB:.1f} MiB; slope "
        f"{slope_per_100(rss[1:]):+.2f} MiB/100 sessions after the first {every} (all points {slope_per_100(rss):+.2f})"
    )
    if traced:
        print_growth(traced[0], trace_top)
        tracemalloc.stop()
    left = await asyncio.to_thread(leftovers, backend.client, os.getpid())
    print("  LEAKS: 0" if not left else f"  LEAKS: {len(left)}\n    " + "\n    ".join(left))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200, help="back-to-back sessions (phase a)")
    parser.add_argument("--parallel", type=int, default=16, help="sessions at once (phase b)")
    parser.add_argument(
        "--parallel-sessions", type=int, default=None, help="sessions in phase b (default 2 x --parallel)"
    )
    parser.add_argument(
        "--every", type=int, default=20, help="sample the harness RSS every this many sessions"
    )
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--only", action="append", default=None)
    parser.add_argument("--skip", choices=("back-to-back", "parallel"), default=None)
    parser.add_argument(
        "--trace-growth",
        type=int,
        default=0,
        metavar="TOP",
        help="trace allocations (slower) and print the TOP sites that grew after the first RSS sample",
    )
    args = parser.parse_args()
    task_dirs = resolve_data(args.data).select(args.only)
    with tempfile.TemporaryDirectory(prefix="soak-runs-") as out_root:
        if args.skip != "back-to-back":
            await soak(
                "back-to-back", task_dirs, args.sessions, 1, args.every, Path(out_root), args.trace_growth
            )
        if args.skip != "parallel":
            n = args.parallel_sessions or 2 * args.parallel
            await soak(
                "parallel",
                task_dirs,
                n,
                args.parallel,
                max(1, min(args.every, n // 4)),
                Path(out_root),
                args.trace_growth,
            )


if __name__ == "__main__":
    asyncio.run(main())
