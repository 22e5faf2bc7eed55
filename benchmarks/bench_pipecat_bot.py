"""The example Pipecat bot over the demo suite through ``apex-voice run``, C2, at wall time (the bot
is real-time): pass count, wall and CPU, for the policy and silent brains.

Usage: python -m benchmarks.bench_pipecat_bot [--brain policy|silent] [--tasks N] [--only TASK] [--out DIR] [--container]
(from the repository root; needs ``examples/pipecat-bot/setup.sh`` run, or for ``--container`` a
Docker engine and apex-voice's images.)

Each task gets its own bot and brain (the brain plays that task's reference policy, or says
nothing), and its own ``apex-voice run`` process. By default the bot is a process on the host
(``twilio+ws://``) and CPU is read per process from ``/proc``: the harness's (the CLI and its task
server) and the bot's, user plus system seconds. With ``--container`` the bot is the example's image
with its brain inside (``twilio+container:IMAGE --sandbox docker``, one hardened container per
session, as a user's would run); its CPU and peak memory are read from the engine's stats, polled
each second (the last second of a session may go uncounted). Prints one row per task, then the
totals and CPU per media second (under ``--container`` the task server runs in its own container
too, so the harness's CPU is the CLI's alone).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.tasks.dataset import BUNDLED_DATA, resolve_data
from harness.tasks.loader import load_task
from tests.fakes.pipecat_bot_image import build_pipecat_bot_image
from tests.fakes.pipecat_process import pipecat_bot

_TICKS = os.sysconf("SC_CLK_TCK")


def _process_cpu_s(pid: int) -> float:
    """User + system seconds of a live process (and its reaped children), from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / _TICKS


class ContainerMeter:
    """CPU seconds and peak memory of the containers of one image, polled from the engine each second."""

    def __init__(self, client, image: str) -> None:
        self._client, self._image = client, image
        self.cpu_ns: dict[str, int] = {}
        self.peak_bytes = 0
        self._stop = threading.Event()

    def _poll(self) -> None:
        while not self._stop.wait(1.0):
            for container in self._client.containers.list(filters={"ancestor": self._image}):
                try:
                    stats = self._client.api.stats(container.id, stream=False, one_shot=True)
                except Exception:  # gone between the list and the read
                    continue
                self.cpu_ns[container.id] = max(self.cpu_ns.get(container.id, 0),
                                                stats["cpu_stats"]["cpu_usage"]["total_usage"])
                memory = stats.get("memory_stats", {})
                self.peak_bytes = max(self.peak_bytes, memory.get("max_usage", memory.get("usage", 0)))

    @contextmanager
    def running(self) -> Iterator[ContainerMeter]:
        thread = threading.Thread(target=self._poll, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()


def _run_cli(model: str, task_dir: Path, out: Path, *options: str, env: dict[str, str] | None = None) -> float:
    """One ``apex-voice run`` at wall time, in its own process; its wall seconds."""
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "harness.cli.main", "run", "--model", model, "--data", str(task_dir),
                    "--repeats", "1", "--out", str(out), *options],
                   env={**os.environ, **(env or {}), "APEX_VOICE_CLOCK_SPEED": "1"},
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.monotonic() - start


def _run_task(task_dir: Path, brain: str, out: Path, image: str | None, client, memory: str) -> dict[str, object]:
    bundle = load_task(task_dir)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    bot_peak_mib = None
    if image is not None:
        env = {"BRAIN_MODE": brain, "BRAIN_POLICY": bundle.policy.model_dump_json() if bundle.policy else "{}"}
        with ContainerMeter(client, image).running() as meter:
            wall = _run_cli(f"twilio+container:{image}", task_dir, out / bundle.task_id, "--sandbox", "docker",
                            "--agent-memory", memory, "--adapter-env", "BRAIN_MODE", "--adapter-env", "BRAIN_POLICY",
                            env=env)
        bot_cpu = sum(meter.cpu_ns.values()) / 1e9
        bot_peak_mib = meter.peak_bytes / 2**20
    else:
        with pipecat_bot(bundle.policy, mode=brain, log_dir=out) as bot:
            bot_cpu_before = _process_cpu_s(bot.process.pid)
            wall = _run_cli(bot.model, task_dir, out / bundle.task_id, "--sandbox", "local")
            bot_cpu = _process_cpu_s(bot.process.pid) - bot_cpu_before
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    (row,) = [json.loads(p.read_text()) for p in (out / bundle.task_id).glob("*/rep0/result.json")]
    log = next((out / bundle.task_id).glob("*/rep0/*/events.jsonl"))
    end = [json.loads(line) for line in log.read_text().splitlines() if '"RUN_END"' in line][-1]
    return {"task": bundle.task_id, "pts": row["pts"], "outcome": row.get("outcome"), "reason": end["payload"]["reason"],
            "media_s": end["media_time_ms"] / 1000, "wall_s": wall,
            "harness_cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "bot_cpu_s": bot_cpu, "bot_peak_mib": bot_peak_mib, "lateness_p99_ms": end["payload"].get("frame_lateness_p99_ms")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--brain", choices=("policy", "silent"), default="policy")
    parser.add_argument("--tasks", type=int, default=0, help="the first N demo tasks (0: all)")
    parser.add_argument("--only", action="append", default=[], metavar="TASK", help="this demo task (repeatable)")
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temporary directory)")
    parser.add_argument("--container", action="store_true",
                        help="run the bot as the example's image, one container per session (--sandbox docker)")
    parser.add_argument("--agent-memory", default="1g", help="--container: the bot container's memory limit (default 1g)")
    args = parser.parse_args()
    client = image = None
    if args.container:
        import docker

        client = docker.from_env(use_context=False)
        image = build_pipecat_bot_image(client)
    tasks = sorted(resolve_data(BUNDLED_DATA).task_dirs)
    tasks = [t for t in tasks if t.name in args.only] if args.only else tasks
    tasks = tasks[: args.tasks] if args.tasks else tasks
    with tempfile.TemporaryDirectory(prefix="bench-pipecat-") as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        rows = []
        print(f"{'task':40s} {'pts':>4s} {'reason':>14s} {'media s':>8s} {'wall s':>7s} {'harness cpu s':>13s} "
              f"{'bot cpu s':>9s} {'late p99 ms':>11s}" + (f" {'bot MiB':>7s}" if args.container else ""), flush=True)
        for task_dir in tasks:
            row = _run_task(task_dir, args.brain, out, image, client, args.agent_memory)
            rows.append(row)
            print(f"{row['task']:40s} {row['pts']:>4} {row['reason']:>14s} {row['media_s']:8.1f} {row['wall_s']:7.1f} "
                  f"{row['harness_cpu_s']:13.1f} {row['bot_cpu_s']:9.1f} {row['lateness_p99_ms'] or 0:11.1f}"
                  + (f" {row['bot_peak_mib']:7.0f}" if args.container else ""), flush=True)
    media = sum(float(r["media_s"]) for r in rows) or 1.0
    harness = sum(float(r["harness_cpu_s"]) for r in rows)
    bot = sum(float(r["bot_cpu_s"]) for r in rows)
    passed = sum(1 for r in rows if r["pts"] == 1)
    print(f"brain {args.brain}: {passed}/{len(rows)} passed; media {media:.0f} s, wall {sum(float(r['wall_s']) for r in rows):.0f} s; "
          f"harness CPU {harness:.0f} s ({harness / media:.3f} s per media s), bot CPU {bot:.0f} s ({bot / media:.3f} s per media s)"
          + (f"; bot container peak memory {max(float(r['bot_peak_mib']) for r in rows):.0f} MiB" if args.container else ""))


if __name__ == "__main__":
    main()
