"""`apex-voice results` time for 1,800 synthetic sessions (5 models × 120 tasks × 3 repetitions).

The runs tree is written in our result.json layout with per-run latency and duplex blocks (so the
floor-control pass reads every record), then `results` runs in-process three ways: tables only
without task packages, with plots, and the same tree read again (warm page cache). Aim: ≤ 10 s.

    .venv/bin/python benchmarks/bench_results.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

from typer.testing import CliRunner

from harness.cli.main import app
from harness.grading.report import FieldRow
from harness.results.result_record import ResultRecord

MODELS = ("gpt-realtime", "grok-voice", "gemini-live", "gpt-live-1", "step-audio3")
TASKS, REPS = 120, 3


def build_tree(root: Path) -> int:
    rng = random.Random(7)
    sessions = 0
    for m, key in enumerate(MODELS):
        for t in range(TASKS):
            task = f"apexv1_{t:03d}"
            for rep in range(REPS):
                passed = rng.random() < 0.1 + 0.05 * m
                fields = [FieldRow(artifact="a", field=f"f{i}", grader="exact", tier="deterministic",
                                   score=float(passed or rng.random() < 0.8), required=True, present=True)
                          for i in range(10)]
                ResultRecord(
                    task_id=task, rep=rep, model=key, run_id=f"{t:03d}{rep}", pts=int(passed),
                    components={"GS": True, "PC": rng.random() < 0.9, "RA": True, "WA": passed},
                    outcome="SUCCESS" if passed else "FAILURE", fields=fields, afa=0.9,
                    latency={"response_start_latency_ms": {"median": rng.uniform(200, 1500), "n": 8},
                             "time_to_resolution_ms": rng.uniform(1e5, 3e5), "tool_calls": rng.randint(5, 20)},
                    duplex={"n_events": 1, "overlap_ratio": rng.uniform(0, 0.05), "events": [{
                        "type": "MID_SPEECH_CORRECTION", "expected_floor_action": "YIELD", "agent_yielded": True,
                        "stop_latency_ms": rng.uniform(20, 400), "isl_ms": rng.uniform(20, 400), "correct": True}]},
                ).write(root / key / task / f"rep{rep}")
                sessions += 1
    return sessions


def timed(args: list[str]) -> float:
    started = time.perf_counter()
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    elapsed = time.perf_counter() - started
    if result.exit_code != 0:
        raise SystemExit(f"results failed: {result.output}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="write the tree here and keep it")
    options = parser.parse_args()
    root = options.keep or Path(tempfile.mkdtemp(prefix="bench-results-"))
    try:
        started = time.perf_counter()
        sessions = build_tree(root / "runs")
        print(f"built {sessions} sessions in {time.perf_counter() - started:.1f} s")
        base = ["results", "--runs-root", str(root / "runs"), "--out", str(root / "out")]
        tables = timed([*base, "--no-plots"])
        with_plots = timed(base)
        warm = timed([*base, "--no-plots"])
        print(f"results, tables only:  {tables:.2f} s  ({sessions / tables:.0f} sessions/s)")
        print(f"results, with plots:   {with_plots:.2f} s")
        print(f"results, tables again: {warm:.2f} s")
        print(f"aim ≤ 10 s: {'met' if max(tables, with_plots) <= 10 else 'NOT met'} "
              f"(ratio to aim {max(tables, with_plots) / 10:.2f})")
    finally:
        if options.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
