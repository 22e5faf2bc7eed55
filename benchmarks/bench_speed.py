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

The issue's targets are absolute figures on the machine it was measured on, and the same code runs
1.3–2× faster or slower from one machine of this kind to the next (``docs/performance.md``). So
``--baseline REV`` also measures an earlier commit of this repository (a temporary git worktree,
same scripts, same virtualenv, same demo tasks) right before the current code, and gives each
throughput figure as a ratio to it beside the ratio the issue asks for: its target over its own
"today" figure, which it measured on commit ``58ff972``.

Usage: python benchmarks/bench_speed.py [--quick] [--baseline REV]
(--quick: fewer repeats, shorter live runs; --baseline 58ff972: the code as issue 20 measured it)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: Issue 20's "today" figures (commit 58ff972 on its machine) and its targets: the ratio it asks for.
ISSUE_RATIOS = {"C0 campaign CPU-s": 3.6 / 12.0, "C2 media-s/CPU-s": 150 / 85.6, "validate tasks/CPU-s": 50 / 30.5,
                "validate, no checksums": 50 / 30.5}


def _bench(script: str, out: Path, *args: str, code: Path = REPO) -> Any:
    """Run one bench script of this checkout against the code in ``code`` (this checkout by default)."""
    label = "" if code == REPO else f"   [code: {code}]"
    print(f"\n$ {script} {' '.join(args)}{label}", flush=True)
    env = {**os.environ, "PYTHONPATH": str(code)}
    subprocess.run([sys.executable, str(HERE / script), *args, "--json", str(out)], check=True, env=env)
    return json.loads(out.read_text(encoding="utf-8"))


@contextlib.contextmanager
def _worktree(rev: str, scratch: Path) -> Iterator[Path]:
    """A detached checkout of ``rev`` of this repository, removed afterwards."""
    path = scratch / f"baseline-{rev}"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(path), rev], check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat per campaign, 5 validate rounds, 8 s live")
    parser.add_argument("--baseline", metavar="REV", default=None,
                        help="also measure this commit (e.g. 58ff972) and give ratios to it")
    args = parser.parse_args()
    repeat, rounds, seconds = ("1", "5", "8") if args.quick else ("2", "20", "15")
    base: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as scratch:
        out = Path(scratch)
        with contextlib.ExitStack() as stack:
            if args.baseline is not None:
                # The baseline right before the current code, so both see the machine in the same state.
                code = stack.enter_context(_worktree(args.baseline, out))
                base = {
                    "cli": _bench("bench_cli_sessions.py", out / "base-cli.json", "--repeat", repeat, "--repo", str(code)),
                    "validate": _bench("bench_validate.py", out / "base-validate.json", "--repeats", rounds, code=code),
                }
            cli = _bench("bench_cli_sessions.py", out / "cli.json", "--repeat", repeat)
            validate = _bench("bench_validate.py", out / "validate.json", "--repeats", rounds)
        pacing = _bench("bench_realtime_pacing.py", out / "pacing.json", "--seconds", seconds)
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
        ("validate, in process, SHA256SUMS checked", f"{validate['tasks_per_cpu_s']:.1f} tasks/CPU-s", "≥ 50",
         validate["tasks_per_cpu_s"] >= 50),
        ("validate, the reference's work (no checksums)", f"{validate['unchecked_tasks_per_cpu_s']:.1f} tasks/CPU-s", "≥ 50",
         validate["unchecked_tasks_per_cpu_s"] >= 50),
        *[
            (f"jitter p99, {row['sessions']} live sessions", f"{row['jitter_p99_ms']:.2f} ms", "≤ 5 ms at 16",
             row["jitter_p99_ms"] <= 5 if row["sessions"] == 16 else None)
            for row in pacing
        ],
    ]
    print(f"\nissue 20's figures (load {os.getloadavg()[0]:.1f}):")
    print(f"{'figure':<46}{'measured':>22}  {'target':<14}met")
    for name, measured, target, *met in rows:
        verdict = "" if not met or met[0] is None else ("yes" if met[0] else "NO")
        print(f"{name:<46}{measured:>22}  {target:<14}{verdict}")
    if base is not None:
        _print_ratios(args.baseline, base, cli, validate)


def _print_ratios(rev: str, base: dict[str, Any], cli: dict[str, Any], validate: dict[str, Any]) -> None:
    """Each throughput figure against the baseline measured in this run, beside the issue's ratio."""
    figures = {
        # CPU-s: lower is better, so the ratio asked for is below 1.
        "C0 campaign CPU-s": (base["cli"]["C0"]["campaign_cpu_s"], cli["C0"]["campaign_cpu_s"], False),
        "C2 media-s/CPU-s": (base["cli"]["C2"]["campaign_media_s_per_cpu_s"], cli["C2"]["campaign_media_s_per_cpu_s"], True),
        "validate tasks/CPU-s": (base["validate"]["tasks_per_cpu_s"], validate["tasks_per_cpu_s"], True),
        "validate, no checksums": (base["validate"]["unchecked_tasks_per_cpu_s"], validate["unchecked_tasks_per_cpu_s"], True),
    }
    print(f"\nagainst {rev} measured in this run (the issue's ratio: its target over its 'today' figure):")
    print(f"{'figure':<24}{rev:>12}{'now':>10}{'ratio':>9}{'asked':>9}  met")
    for name, (then, now, higher_is_better) in figures.items():
        ratio, asked = now / then, ISSUE_RATIOS[name]
        met = ratio >= asked if higher_is_better else ratio <= asked
        print(f"{name:<24}{then:>12.2f}{now:>10.2f}{ratio:>8.2f}×{asked:>8.2f}×  {'yes' if met else 'NO'}")


if __name__ == "__main__":
    main()
