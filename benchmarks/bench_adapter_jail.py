"""What the bubblewrap sandbox costs a hosted adapter's start: side by side with a bare child.

    .venv/bin/python benchmarks/bench_adapter_jail.py [--starts 10] [--adapter tests.adversarial.isolation_adapters:BridgeCaller]

Per session, ``--sandbox local`` starts the adapter's host (``python -m harness.agents.realtime_server``):
now in the sandbox (``start_adapter_process``: ``bwrap`` with its namespaces, the socket handed in),
before as a bare child of the harness with the same scrubbed environment and the same copy of the
hosting code. Prints, for each, the median and max time from spawn to the host listening (its URL
announced) and to its end once its stdin closes, then the sandbox's own cost alone (``bwrap … python -c pass`` against ``python -c pass``) and the ratios. Starts alternate
between the two ways so the machine's load falls on both alike.

Measured on the 2-core project machine (shared, busy), 10 starts each: see docs/security.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.agents.adapter_process import host_command, start_adapter_process  # noqa: E402
from harness.agents.adapter_source import adapter_source  # noqa: E402
from sandbox.adapter_jail import jail_command, jail_problem  # noqa: E402
from sandbox.child_env import child_environment, source_root  # noqa: E402
from sandbox.image_build import ADAPTER_HOST_SOURCES  # noqa: E402
from sandbox.project_sources import snapshot_paths  # noqa: E402


def _bare_tree(root: Path, target: str) -> None:
    """The pre-sandbox layout: the hosting code's copy, an empty home, the adapter's package linked
    alone (its parent stays off the path)."""
    package = adapter_source(target).path
    harness_root = source_root("harness")
    assert harness_root is not None
    snapshot_paths(harness_root, ADAPTER_HOST_SOURCES).write_to(root / "runtime")
    (root / "home").mkdir(mode=0o700)
    (root / "adapter").mkdir()
    (root / "adapter" / package.name).symlink_to(package, target_is_directory=package.is_dir())


async def _bare(target: str) -> tuple[float, float]:
    """The way before the sandbox: a bare child, the hosting code's copy on its path."""
    with tempfile.TemporaryDirectory(prefix="apexvoice-bench-") as directory:
        root = Path(directory)
        await asyncio.to_thread(_bare_tree, root, target)
        env = child_environment(home=root / "home", python_path=(root / "runtime", root / "adapter"), extra=None)
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            *host_command(target, "--host", "127.0.0.1", "--port", "0", "--exit-with-stdin"),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            cwd=root / "home", env=env, start_new_session=True)
        assert process.stdout is not None and process.stdin is not None
        json.loads(await process.stdout.readline())
        ready = time.perf_counter() - started
        process.stdin.close()
        await process.wait()
        return ready, time.perf_counter() - started


async def _jailed(target: str) -> tuple[float, float]:
    started = time.perf_counter()
    async with start_adapter_process(target) as host:
        ready = host.timings["start_to_ready_s"]
    return ready, time.perf_counter() - started


def _bare_python_s(jailed: bool, runs: int) -> float:
    with ExitStack() as stack:
        empty = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        command = [sys.executable, "-c", "pass"]
        if jailed:
            command = jail_command(command, runtime=empty, adapter=empty, home=empty)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(command, check=True, stdin=subprocess.DEVNULL)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def _line(name: str, samples: list[tuple[float, float]]) -> tuple[float, float]:
    ready = [r for r, _ in samples]
    whole = [w for _, w in samples]
    print(f"{name:>6}: ready median {statistics.median(ready) * 1000:7.1f} ms (max {max(ready) * 1000:7.1f}), "
          f"start+stop median {statistics.median(whole) * 1000:7.1f} ms")
    return statistics.median(ready), statistics.median(whole)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--adapter", default="tests.adversarial.isolation_adapters:BridgeCaller")
    args = parser.parse_args()
    problem = jail_problem()
    if problem is not None:
        raise SystemExit(f"no sandbox here: {problem}")
    samples: dict[str, list[tuple[float, float]]] = {"bare": [], "bwrap": []}
    for _ in range(args.starts):
        for name, start in (("bare", _bare), ("bwrap", _jailed)):
            samples[name].append(await start(args.adapter))
    print(f"{args.starts} starts each of {args.adapter}'s host")
    bare_ready, bare_whole = _line("bare", samples["bare"])
    jail_ready, jail_whole = _line("bwrap", samples["bwrap"])
    print(f"ratio bwrap/bare: ready {jail_ready / bare_ready:.2f}x (+{(jail_ready - bare_ready) * 1000:.1f} ms a session), "
          f"start+stop {jail_whole / bare_whole:.2f}x (+{(jail_whole - bare_whole) * 1000:.1f} ms)")
    bare_python = _bare_python_s(False, args.starts)
    jail_python = _bare_python_s(True, args.starts)
    print(f"the sandbox alone (python -c pass): bare {bare_python * 1000:.1f} ms, in bwrap {jail_python * 1000:.1f} ms "
          f"(+{(jail_python - bare_python) * 1000:.1f} ms)")


if __name__ == "__main__":
    asyncio.run(main())
