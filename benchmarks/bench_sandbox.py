"""Sandbox figures per backend: start-to-ready, tool-call round trip, snapshot, teardown, throughput.

    .venv/bin/python benchmarks/bench_sandbox.py [--backends local,docker] [--sessions 6] [--calls 50]

Prints p50/p95 in milliseconds and sessions per minute at 1 and 4 in parallel (each session: start,
list tools, one call, snapshot, teardown). Aims: ready p50 < 1 s, round trip p50 < 5 ms.

``ready`` is ``backend.start()`` to a usable environment with the warm pool (a spare server booted
while the previous session ran, then the task uploaded); ``--session-gap`` seconds pass between
sessions, standing in for the session itself. ``ready_cold`` is the same with no pool (the server
boots inside ``start()``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness.session.mcp_environment import McpEnvironment
from harness.tasks.loader import load_task
from sandbox.backend import SandboxBackend

FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "reference-fixtures" / "toy_form_001"
DEMO = (
    Path(__file__).resolve().parents[1] / "harness" / "demo_data" / "tasks" / "demo_benefits_enrollment_001"
)


def _local(pool_size: int) -> SandboxBackend:
    from sandbox.local import LocalBackend

    return LocalBackend(pool_size=pool_size)


def _docker(pool_size: int) -> SandboxBackend:
    from sandbox.docker_backend import DockerBackend, DockerSandboxConfig

    return DockerBackend(DockerSandboxConfig(pool_size=pool_size))


#: backend name -> factory taking the warm pool size
BACKENDS: dict[str, Callable[[int], SandboxBackend]] = {"local": _local, "docker": _docker}

FIGURES = ("ready", "ready_cold", "round_trip", "snapshot", "teardown")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


async def _one_session(
    backend: SandboxBackend, public_dir: Path, calls: int, figures: dict[str, list[float]], ready_key: str
) -> None:
    t0 = time.perf_counter()
    async with backend.start(public_dir, "bench", task_id="bench") as sandbox:
        figures[ready_key].append(time.perf_counter() - t0)
        async with McpEnvironment(sandbox) as env:
            tools = await env.list_tools()
            name = tools[0]["name"]
            for i in range(calls):
                t = time.perf_counter()
                await env.call_tool(name, {}, i)
                figures["round_trip"].append(time.perf_counter() - t)
            t = time.perf_counter()
            await env.snapshot()
            figures["snapshot"].append(time.perf_counter() - t)
        t_down = time.perf_counter()
    figures["teardown"].append(time.perf_counter() - t_down)


async def _throughput(backend: SandboxBackend, public_dir: Path, parallel: int, sessions: int) -> float:
    gate = asyncio.Semaphore(parallel)
    scratch: dict[str, list[float]] = {k: [] for k in FIGURES}

    async def run() -> None:
        async with gate:
            await _one_session(backend, public_dir, 1, scratch, "ready")

    t0 = time.perf_counter()
    await asyncio.gather(*(run() for _ in range(sessions)))
    return sessions / (time.perf_counter() - t0) * 60


async def _measure(name: str, public_dir: Path, sessions: int, calls: int, gap_s: float) -> None:
    figures: dict[str, list[float]] = {k: [] for k in FIGURES}
    cold = BACKENDS[name](0)
    for _ in range(sessions):
        await _one_session(cold, public_dir, calls, figures, "ready_cold")
    warm = BACKENDS[name](1)
    try:
        await _one_session(warm, public_dir, 0, {k: [] for k in FIGURES}, "ready")  # fills the pool
        for _ in range(sessions):
            await asyncio.sleep(gap_s)
            await _one_session(warm, public_dir, calls, figures, "ready")
        print(f"\n[{name}]")
        for key, values in figures.items():
            print(
                f"  {key:<11} p50 {_pct(values, 0.5):8.1f} ms   p95 {_pct(values, 0.95):8.1f} ms"
                f"   mean {statistics.fmean(values) * 1000:8.1f} ms   n={len(values)}"
            )
        for parallel in (1, 4):
            rate = await _throughput(warm, public_dir, parallel, max(4, sessions))
            print(f"  sessions/minute at {parallel} in parallel (warm pool of 1, back to back): {rate:6.1f}")
    finally:
        await warm.aclose()


async def main(backends: list[str], sessions: int, calls: int, gap_s: float) -> None:
    task_dir = FIXTURE if FIXTURE.is_dir() else DEMO
    with tempfile.TemporaryDirectory() as tmp:
        public_dir = Path(tmp) / "public"
        load_task(task_dir).public_bundle().write(public_dir)
        print(
            f"task {task_dir.name}, {sessions} sessions x {calls} calls per backend, {gap_s} s between sessions"
        )
        for name in backends:
            await _measure(name, public_dir, sessions, calls, gap_s)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="local,docker")
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--session-gap", type=float, default=4.0, help="seconds between warm sessions")
    args = parser.parse_args()
    asyncio.run(main(args.backends.split(","), args.sessions, args.calls, args.session_gap))
