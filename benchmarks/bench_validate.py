"""Throughput of ``validate``: tasks per second for load + lint + oracle C0 + no-op C0.

Usage: python benchmarks/bench_validate.py [--data PATH] [--repeats N]
Prints per-phase figures so a regression in one phase is visible on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from harness.agents.text_agents import NoOpAgent, ScriptedAgent
from harness.session.environment_port import InProcessEnvironment
from harness.session.text_runner import run_text_session
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
    args = parser.parse_args()
    source = resolve_data(args.data)
    task_dirs = source.select(None)
    phases: dict[str, list[float]] = {"load": [], "lint": [], "oracle C0": [], "no-op C0": []}

    start_cpu, start_wall = time.process_time(), time.perf_counter()
    for _ in range(args.repeats):
        for task_dir in task_dirs:
            await validate_task(task_dir, checksums=source.checksums)
    cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start_wall
    validated = args.repeats * len(task_dirs)

    for _ in range(args.repeats):
        for task_dir in task_dirs:
            t = time.perf_counter()
            bundle = load_task(task_dir, checksums=source.checksums)
            phases["load"].append(time.perf_counter() - t)
            t = time.perf_counter()
            lint_task(bundle)
            phases["lint"].append(time.perf_counter() - t)
            t = time.perf_counter()
            await run_text_session(bundle, ScriptedAgent.oracle(bundle.policy), InProcessEnvironment(bundle.public_bundle()))
            phases["oracle C0"].append(time.perf_counter() - t)
            t = time.perf_counter()
            await run_text_session(bundle, NoOpAgent(), InProcessEnvironment(bundle.public_bundle()))
            phases["no-op C0"].append(time.perf_counter() - t)

    print(f"data: {source.root} ({len(task_dirs)} tasks), {args.repeats} repeats")
    print(f"validate: {validated / wall:.1f} tasks/s wall, {validated / cpu:.1f} tasks/s per CPU-second")
    for name, samples in phases.items():
        print(f"  {name:<10} {_ms(samples)}")


if __name__ == "__main__":
    asyncio.run(main())
