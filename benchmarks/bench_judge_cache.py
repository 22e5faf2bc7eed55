"""Judge cache throughput: the JSON file rewritten per verdict (before issue 20) vs the SQLite store.

For 1k and 10k verdicts, in one run:
- writes/s: one verdict at a time, as sessions add them, the cache already open (the JSON file is
  rewritten whole each time; at 10k its writes are timed for the last 1,000 of a cache prefilled
  with 9,000, the rate a campaign sees once its cache is that big);
- reads/s, warm: keys this process has already seen;
- reads/s, fresh: a new cache object (a new process) reading every key once, opening included;
- reads/s, another writer: each key read right after another instance wrote it (a live campaign
  with other processes grading: the JSON reader re-parses the whole file on every such miss);
- and the SQLite store's write throughput with 1, 2 and 4 writer processes on the same file.

    .venv/bin/python benchmarks/bench_judge_cache.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from json_cache_baseline import LockedJsonCache  # the whole-file JSON cache before issue 20

from harness.grading.judge_cache import JudgeCache

#: The JSON cache was prefilled in bulk up to this many entries below the target before timing writes.
_TIMED_JSON_WRITES = 1_000


class VerdictCache(Protocol):
    def get(self, key: str) -> bool | None: ...
    def put(self, key: str, verdict: bool) -> Any: ...


def _json_cache(path: Path) -> LockedJsonCache[bool]:
    """The judge cache as it was: the published JSON file, locked, merged and rewritten per verdict."""
    return LockedJsonCache(path, accept=lambda v: isinstance(v, bool))


def _key(n: int) -> str:
    return f"{n:032x}"


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:>10,.0f}/s" if seconds > 0 else "       inf/s"


def _timed(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _writes(make: Callable[[Path], VerdictCache], path: Path, total: int, *, prefill_json: bool) -> tuple[int, float]:
    first = 0
    if prefill_json and total > _TIMED_JSON_WRITES:
        first = total - _TIMED_JSON_WRITES
        path.write_text(json.dumps({_key(n): n % 2 == 0 for n in range(first)}, sort_keys=True))
    cache = make(path)
    cache.get("warm-up")  # opened (and any JSON imported) before the clock starts

    def write() -> None:
        for n in range(first, total):
            cache.put(_key(n), n % 2 == 0)

    return total - first, _timed(write)


def _reads(make: Callable[[Path], VerdictCache], path: Path, total: int) -> dict[str, float]:
    warm = make(path)
    for n in range(total):
        warm.get(_key(n))

    def read_warm() -> None:
        for n in range(total):
            warm.get(_key(n))

    def read_fresh() -> None:
        fresh = make(path)
        for n in range(total):
            fresh.get(_key(n))

    return {"warm": _timed(read_warm), "fresh": _timed(read_fresh)}


def _reads_behind_a_writer(make: Callable[[Path], VerdictCache], path: Path, total: int, count: int) -> float:
    """``count`` reads, each of a key another instance wrote just before, in a cache of ``total``."""
    reader, writer = make(path), make(path)
    for n in range(count):
        writer.put(_key(total + n), True)
        reader.get(_key(total + n))  # warm-up round: both have opened and imported
    elapsed = 0.0
    for n in range(count, 2 * count):
        writer.put(_key(total + n), True)
        start = time.perf_counter()
        assert reader.get(_key(total + n)) is True
        elapsed += time.perf_counter() - start
    return elapsed


def _process_writer(path: str, worker: int, count: int, start_at: Any, finished: Any) -> None:
    cache = JudgeCache(path)
    cache.get("warm-up")  # open (and create) the store before the clock starts
    start_at.wait()
    for n in range(count):
        cache.put(f"w{worker}-{n}", n % 2 == 0)
    finished.put(time.monotonic())  # the clock stops here, not after the interpreter exits


def _concurrent_writes(root: Path, processes: int, count: int) -> float:
    path = root / f"concurrent-{processes}" / "judge_cache.json"
    context = multiprocessing.get_context("spawn")
    start_at, finished = context.Barrier(processes + 1), context.Queue()
    workers = [context.Process(target=_process_writer, args=(str(path), w, count, start_at, finished))
               for w in range(processes)]
    for worker in workers:
        worker.start()
    start_at.wait()
    started = time.monotonic()
    elapsed = max(finished.get(timeout=600) for _ in workers) - started
    for worker in workers:
        worker.join()
    if any(worker.exitcode for worker in workers) or len(JudgeCache(path)) != processes * count:
        raise SystemExit(f"concurrent writers lost verdicts or failed ({[w.exitcode for w in workers]})")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k verdicts only, fewer concurrent writes.")
    args = parser.parse_args()
    sizes = (1_000,) if args.quick else (1_000, 10_000)
    kinds: dict[str, Callable[[Path], VerdictCache]] = {"json (before)": _json_cache, "sqlite": JudgeCache}
    with tempfile.TemporaryDirectory(prefix="bench-judge-cache-") as tmp:
        root = Path(tmp)
        print(f"{'cache':<14} {'verdicts':>8} {'writes':>12} {'reads warm':>12} {'reads fresh':>12} "
              f"{'reads behind a writer':>22}")
        for total in sizes:
            for name, make in kinds.items():
                path = root / f"{name.split()[0]}-{total}" / "judge_cache.json"
                path.parent.mkdir(parents=True)
                written, write_s = _writes(make, path, total, prefill_json=name.startswith("json"))
                reads = _reads(make, path, total)
                behind = 200
                behind_s = _reads_behind_a_writer(make, path, total, behind)
                print(f"{name:<14} {total:>8,} {_rate(written, write_s)} {_rate(total, reads['warm'])} "
                      f"{_rate(total, reads['fresh'])} {_rate(behind, behind_s):>22}")
        count = 500 if args.quick else 2_000
        print(f"\nsqlite store, concurrent writer processes ({count:,} verdicts each, distinct keys):")
        for processes in (1, 2, 4):
            elapsed = _concurrent_writes(root, processes, count)
            print(f"  {processes} process{'es' if processes > 1 else '  '}: {_rate(processes * count, elapsed)} "
                  f"in total ({elapsed:.2f} s)")


if __name__ == "__main__":
    main()
