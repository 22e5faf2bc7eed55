"""What a session costs through the CLI: fixed cost apart from per-media-second cost, C0 and C2.

Each measurement is one fresh ``apex-voice run`` process (the oracle, ``--sandbox local``), its
CPU taken from ``wait4`` — the harness, the forkserver and every task server it forked, all reaped
into it. For each condition the script runs a campaign of one task and one of ``--tasks`` tasks:

- process fixed cost: what the 1-task run costs beyond one session (imports, loading, the
  forkserver's cold start, the results table);
- per-session cost: the difference between the two runs over the extra sessions, and the same
  difference over their extra media seconds (the marginal rate, fixed cost excluded);
- media-s per CPU-s of the whole campaign (the figure issue 20 sets: C0 ≤ 0.36 CPU-s a session, a
  10-task C0 campaign ≤ 3.6 CPU-s; C2 ≥ 150 media-s per CPU-s).

Media seconds are each session's ``RUN_END`` media time (C0: the text session's clock). A first,
unmeasured run writes the bytecode caches, as installing the package would.

Usage: python benchmarks/bench_cli_sessions.py [--tasks N] [--repeat N] [--conditions C0,C2] [--repo DIR] [--json FILE]
       [--cold-asr]
(``--json`` also writes the figures per condition, for ``bench_speed.py``; ``--repo`` measures another
checkout of this project, e.g. an earlier commit, with this script's method; ``--cold-asr`` gives every
measured run an empty ASR content cache, as an agent whose audio was never heard before meets it —
without it, the warm-up run fills the cache and the oracle's recurring clips are looked up.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# A user's install has its bytecode cached; a shell with PYTHONDONTWRITEBYTECODE would have every run
# compile ~200 modules again (~0.3 CPU-s) and call it fixed cost.
_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _demo_tasks(repo: Path) -> list[str]:
    return sorted(p.name for p in (repo / "harness" / "demo_data" / "tasks").iterdir() if p.is_dir())


@dataclass
class Run:
    cpu_s: float
    wall_s: float
    sessions: int
    media_s: list[float]


def _run(repo: Path, condition: str, tasks: list[str], out: Path, env: dict[str, str] | None = None) -> Run:
    command = [sys.executable, "-m", "harness.cli.main", "run", "--condition", condition, "--model", "oracle",
               "--sandbox", "local", "--out", str(out)]
    for task in tasks:
        command += ["--only", task]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=_ENV | {"PYTHONPATH": str(repo)} | (env or {}))
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{stderr.decode(errors='replace')[-2000:]}")
    media = []
    for events in sorted(out.glob("*/rep*/*/events.jsonl")):
        last = json.loads(events.read_text(encoding="utf-8").splitlines()[-1])
        media.append(last["media_time_ms"] / 1000)
    return Run(usage.ru_utime + usage.ru_stime, wall, len(media), media)


def _best(repo: Path, condition: str, tasks: list[str], repeat: int, scratch: Path, *, cold_asr: bool = False) -> Run:
    runs = []
    for attempt in range(repeat):
        out = scratch / f"{condition}-{len(tasks)}-{attempt}"
        cache = scratch / f"asr-{condition}-{len(tasks)}-{attempt}"
        runs.append(_run(repo, condition, tasks, out, {"APEX_VOICE_ASR_CACHE": str(cache)} if cold_asr else None))
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    return min(runs, key=lambda r: r.cpu_s)


def _split(one: Run, many: Run) -> tuple[float, float]:
    """Per-session fixed CPU and CPU per media second, from the extra sessions of ``many``."""
    extra_cpu = many.cpu_s - one.cpu_s
    extra_sessions = many.sessions - one.sessions
    extra_media = sum(many.media_s) - sum(one.media_s)
    per_session = extra_cpu / extra_sessions
    per_media = extra_cpu / extra_media if extra_media > 0 else 0.0
    return per_session, per_media


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=None, help="tasks of the N-task campaign (default: every demo task)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--conditions", default="C0,C2")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    parser.add_argument("--cold-asr", action="store_true", help="an empty ASR content cache for every measured run")
    args = parser.parse_args()
    repo = args.repo.resolve()
    figures: dict[str, dict[str, float]] = {}
    tasks = _demo_tasks(repo)[: args.tasks]
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as scratch_dir:
        scratch = Path(scratch_dir)
        print(f"oracle through `apex-voice run --sandbox local` of {repo}, best of {args.repeat}"
              f"{', ASR cache cold' if args.cold_asr else ''}; load {os.getloadavg()[0]:.1f}")
        _run(repo, args.conditions.split(",")[-1], tasks[:1], scratch / "warm-up")  # writes the bytecode caches
        print(f"{'cond':<5}{'tasks':>6}{'CPU-s':>8}{'wall-s':>8}{'media-s':>9}{'media-s/CPU-s':>15}")
        for condition in args.conditions.split(","):
            one = _best(repo, condition, tasks[:1], args.repeat, scratch, cold_asr=args.cold_asr)
            many = _best(repo, condition, tasks, args.repeat, scratch, cold_asr=args.cold_asr)
            for run in (one, many):
                media = sum(run.media_s)
                print(f"{condition:<5}{run.sessions:>6}{run.cpu_s:>8.2f}{run.wall_s:>8.1f}{media:>9.1f}{media / run.cpu_s:>15.1f}")
            per_session, per_media = _split(one, many)
            fixed = one.cpu_s - per_session
            print(f"  {condition}: process fixed cost {fixed:.2f} CPU-s; a session {per_session:.3f} CPU-s "
                  f"({per_media * 1000:.2f} CPU-ms per media-s, {1 / per_media if per_media else float('inf'):.0f} media-s per CPU-s "
                  f"beyond the fixed cost)")
            print(f"  {condition}: a {many.sessions}-task campaign in one process: {many.cpu_s:.2f} CPU-s, "
                  f"{sum(many.media_s) / many.cpu_s:.1f} media-s per CPU-s")
            figures[condition] = {
                "fixed_cpu_s": fixed, "session_cpu_s": per_session, "campaign_sessions": many.sessions,
                "campaign_cpu_s": many.cpu_s, "campaign_media_s_per_cpu_s": sum(many.media_s) / many.cpu_s,
            }
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
