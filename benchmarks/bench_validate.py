"""Throughput of ``validate``: tasks per second for load + lint + oracle C0 + no-op C0.

Measured twice: as ``apex-voice validate`` runs on a dataset with ``SHA256SUMS`` (every file of the
package hashed, ~4 MB of audio per demo task), and without the checksum check, which is the work
the reference's validate does (it checks no checksums), so the figure compares with its own.

Usage: python benchmarks/bench_validate.py [--data PATH] [--repeats N] [--profile N] [--json FILE]
Prints per-phase figures so a regression in one phase is visible on its own; ``--profile N`` also
prints the N functions that take the most CPU (cProfile, own time) over one extra round of validate.
Aim (issue 20): at least 50 tasks per CPU-second.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import pstats
import statistics
import time
from pathlib import Path

from harness.agents.text_agents import NoOpAgent, ScriptedAgent
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
from harness.tasks.checksums import ChecksumManifest
from harness.tasks.dataset import resolve_data
from harness.tasks.lint import lint_task
from harness.tasks.loader import load_task
from harness.validate import validate_task


def _ms(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples) * 1000:.2f} ms, max {max(samples) * 1000:.2f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="Print the N hottest functions.")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = parser.parse_args()
    gc.freeze()  # as the CLI does once a verb's modules are imported (harness/cli/main.py)
    source = resolve_data(args.data)
    task_dirs = source.select(None)
    phases: dict[str, list[float]] = {"load": [], "lint": [], "oracle C0": [], "no-op C0": []}

    start_cpu, start_wall = time.process_time(), time.perf_counter()
    for _ in range(args.repeats):
        for task_dir in task_dirs:
            await validate_task(task_dir, checksums=source.checksums)
    cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start_wall
    validated = args.repeats * len(task_dirs)
    # The reference's validate checks no SHA256SUMS (``docs/reference-behaviour`` §8), so the issue's
    # side-by-side figure did this much work: the same validate without hashing the packages' files.
    start_cpu = time.process_time()
    for _ in range(args.repeats):
        for task_dir in task_dirs:
            await validate_task(task_dir, checksums=None)
    unchecked_cpu = time.process_time() - start_cpu

    # The same work phase by phase, on this thread (so a profile sees the load too).
    profiler = cProfile.Profile() if args.profile else None
    for round_no in range(args.repeats):
        if profiler is not None and round_no == args.repeats - 1:
            profiler.enable()
        for task_dir in task_dirs:
            await _one_task_by_phase(task_dir, source.checksums, phases)
    if profiler is not None:
        profiler.disable()

    print(f"data: {source.root} ({len(task_dirs)} tasks), {args.repeats} repeats")
    checked = "" if source.checksums is None else " (every file's SHA-256 checked against SHA256SUMS)"
    print(f"validate: {validated / wall:.1f} tasks/s wall, {validated / cpu:.1f} tasks/s per CPU-second{checked}")
    print(f"validate without the checksum check (the reference's work): {validated / unchecked_cpu:.1f} tasks/s per CPU-second")
    print("per phase, CPU time:")
    for name, samples in phases.items():
        print(f"  {name:<10} {_ms(samples)}")
    if args.json is not None:
        figures = {"tasks_per_cpu_s": validated / cpu, "tasks_per_wall_s": validated / wall,
                   "unchecked_tasks_per_cpu_s": validated / unchecked_cpu,
                   "phase_p50_ms": {name: statistics.median(samples) * 1000 for name, samples in phases.items()}}
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    if profiler is not None:
        print(f"hottest functions over the last round by phase ({len(task_dirs)} tasks):")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)


async def _one_task_by_phase(task_dir: Path, checksums: ChecksumManifest | None, phases: dict[str, list[float]]) -> None:
    t = time.process_time()
    bundle = load_task(task_dir, checksums=checksums)
    phases["load"].append(time.process_time() - t)
    t = time.process_time()
    lint_task(bundle)
    phases["lint"].append(time.process_time() - t)
    if bundle.policy is not None:
        t = time.process_time()
        await run_text_session(bundle, ScriptedAgent.oracle(bundle.policy), InProcessEnvironment(bundle.public_bundle()))
        phases["oracle C0"].append(time.process_time() - t)
    t = time.process_time()
    await run_text_session(bundle, NoOpAgent(), InProcessEnvironment(bundle.public_bundle()))
    phases["no-op C0"].append(time.process_time() - t)


if __name__ == "__main__":
    asyncio.run(main())
