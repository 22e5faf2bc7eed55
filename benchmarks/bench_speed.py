"""Issue 20's speed figures in one run, each beside its target.

Runs, one after another in fresh processes (so none inherits another's warm caches or load):

- ``bench_cli_sessions.py``: the oracle through ``apex-voice run --sandbox local``, C0 and C2, a
  1-task and an N-task campaign each — the process's fixed cost apart from a session's cost, and
  media-s per CPU-s of the whole campaign;
- ``bench_validate.py``: ``validate`` in process, tasks per CPU-second;
- ``bench_realtime_pacing.py``: frame-pacing jitter p99 of 1, 8 and 16 live sessions.

Each prints its own detail as it goes; the table at the end gathers the headline figures. CPU
figures are CPU time (the harness and every process it reaped), so a busy neighbour slows the
wall clock more than them; jitter is wall-clock, so run this on a quiet machine.

Usage: python benchmarks/bench_speed.py [--quick]   (--quick: fewer repeats, shorter live runs)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _bench(script: str, out: Path, *args: str) -> object:
    print(f"\n$ {script} {' '.join(args)}", flush=True)
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    subprocess.run([sys.executable, str(HERE / script), *args, "--json", str(out)], check=True, env=env)
    return json.loads(out.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat per campaign, 5 validate rounds, 8 s live")
    args = parser.parse_args()
    repeat, rounds, seconds = ("1", "5", "8") if args.quick else ("2", "20", "15")
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as scratch:
        out = Path(scratch)
        cli = _bench("bench_cli_sessions.py", out / "cli.json", "--repeat", repeat)
        validate = _bench("bench_validate.py", out / "validate.json", "--repeats", rounds)
        pacing = _bench("bench_realtime_pacing.py", out / "pacing.json", "--seconds", seconds)
    assert isinstance(cli, dict) and isinstance(validate, dict) and isinstance(pacing, list)
    c0, c2 = cli["C0"], cli["C2"]
    rows = [
        ("C0 process fixed cost", f"{c0['fixed_cpu_s']:.2f} CPU-s", ""),
        ("C0 a session", f"{c0['session_cpu_s']:.3f} CPU-s", "≤ 0.36 CPU-s", c0["session_cpu_s"] <= 0.36),
        (f"C0 {c0['campaign_sessions']}-task campaign, one process", f"{c0['campaign_cpu_s']:.2f} CPU-s", "≤ 3.6 CPU-s",
         c0["campaign_cpu_s"] <= 3.6),
        ("C2 process fixed cost", f"{c2['fixed_cpu_s']:.2f} CPU-s", ""),
        ("C2 a session", f"{c2['session_cpu_s']:.3f} CPU-s", ""),
        (f"C2 {c2['campaign_sessions']}-task campaign, one process", f"{c2['campaign_media_s_per_cpu_s']:.1f} media-s/CPU-s",
         "≥ 150", c2["campaign_media_s_per_cpu_s"] >= 150),
        ("validate, in process", f"{validate['tasks_per_cpu_s']:.1f} tasks/CPU-s", "≥ 50", validate["tasks_per_cpu_s"] >= 50),
        *[
            (f"jitter p99, {row['sessions']} live sessions", f"{row['jitter_p99_ms']:.2f} ms", "≤ 5 ms at 16",
             row["jitter_p99_ms"] <= 5 if row["sessions"] == 16 else None)
            for row in pacing
        ],
    ]
    print(f"\nissue 20's figures (load {os.getloadavg()[0]:.1f}):")
    print(f"{'figure':<40}{'measured':>24}  {'target':<14}met")
    for name, measured, target, *met in rows:
        verdict = "" if not met or met[0] is None else ("yes" if met[0] else "NO")
        print(f"{name:<40}{measured:>24}  {target:<14}{verdict}")


if __name__ == "__main__":
    main()
