"""The example Pipecat bot over the demo suite through ``apex-voice run --model twilio+ws://…``, C2,
at wall time (the bot is real-time): pass count, wall and CPU, for the policy and silent brains.

Usage: python -m benchmarks.bench_pipecat_bot [--brain policy|silent] [--tasks N] [--out DIR]
(from the repository root; needs ``examples/pipecat-bot/setup.sh`` run.)

Each task gets its own bot process and brain (the brain plays that task's reference policy, or
says nothing), and its own ``apex-voice run`` process, so CPU is read per process from
``/proc``: the harness's (the CLI and its task server) and the bot's, user plus system seconds.
Prints one row per task, then the totals and CPU per media second.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.tasks.dataset import BUNDLED_DATA, resolve_data
from harness.tasks.loader import load_task
from tests.fakes.pipecat_process import pipecat_bot

_TICKS = os.sysconf("SC_CLK_TCK")


def _process_cpu_s(pid: int) -> float:
    """User + system seconds of a live process (and its reaped children), from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / _TICKS


def _run_task(task_dir: Path, brain: str, out: Path) -> dict[str, object]:
    bundle = load_task(task_dir)
    with pipecat_bot(bundle.policy, mode=brain, log_dir=out) as bot:
        bot_cpu_before = _process_cpu_s(bot.process.pid)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        env = {**os.environ, "APEX_VOICE_CLOCK_SPEED": "1"}
        subprocess.run([sys.executable, "-m", "harness.cli.main", "run", "--model", bot.model, "--data", str(task_dir),
                        "--sandbox", "local", "--repeats", "1", "--out", str(out / bundle.task_id)],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        bot_cpu = _process_cpu_s(bot.process.pid) - bot_cpu_before
    (row,) = [json.loads(p.read_text()) for p in (out / bundle.task_id).glob("*/rep0/result.json")]
    log = next((out / bundle.task_id).glob("*/rep0/*/events.jsonl"))
    end = [json.loads(line) for line in log.read_text().splitlines() if '"RUN_END"' in line][-1]
    return {"task": bundle.task_id, "pts": row["pts"], "outcome": row.get("outcome"), "reason": end["payload"]["reason"],
            "media_s": end["media_time_ms"] / 1000, "wall_s": wall,
            "harness_cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "bot_cpu_s": bot_cpu, "lateness_p99_ms": end["payload"].get("frame_lateness_p99_ms")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--brain", choices=("policy", "silent"), default="policy")
    parser.add_argument("--tasks", type=int, default=0, help="the first N demo tasks (0: all)")
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temporary directory)")
    args = parser.parse_args()
    tasks = sorted(resolve_data(BUNDLED_DATA).task_dirs)
    tasks = tasks[: args.tasks] if args.tasks else tasks
    with tempfile.TemporaryDirectory(prefix="bench-pipecat-") as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        rows = []
        print(f"{'task':40s} {'pts':>4s} {'reason':>14s} {'media s':>8s} {'wall s':>7s} {'harness cpu s':>13s} "
              f"{'bot cpu s':>9s} {'late p99 ms':>11s}", flush=True)
        for task_dir in tasks:
            row = _run_task(task_dir, args.brain, out)
            rows.append(row)
            print(f"{row['task']:40s} {row['pts']:>4} {row['reason']:>14s} {row['media_s']:8.1f} {row['wall_s']:7.1f} "
                  f"{row['harness_cpu_s']:13.1f} {row['bot_cpu_s']:9.1f} {row['lateness_p99_ms'] or 0:11.1f}", flush=True)
    media = sum(float(r["media_s"]) for r in rows) or 1.0
    harness = sum(float(r["harness_cpu_s"]) for r in rows)
    bot = sum(float(r["bot_cpu_s"]) for r in rows)
    passed = sum(1 for r in rows if r["pts"] == 1)
    print(f"brain {args.brain}: {passed}/{len(rows)} passed; media {media:.0f} s, wall {sum(float(r['wall_s']) for r in rows):.0f} s; "
          f"harness CPU {harness:.0f} s ({harness / media:.3f} s per media s), bot CPU {bot:.0f} s ({bot / media:.3f} s per media s)")


if __name__ == "__main__":
    main()
