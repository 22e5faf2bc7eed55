"""The fuzzers of tests/security with a longer budget: calls per second, and any failure found.

Usage: python benchmarks/bench_fuzz.py [--loader N] [--runtime N] [--seed S]
Runs the same properties as ``tests/security/test_loader_fuzz.py`` and
``tests/security/test_tool_runtime_fuzz.py`` (which CI runs with a small fixed budget), randomized
unless ``--seed`` is given, and prints examples, wall time and calls per second for each. A failing
example is printed by Hypothesis and makes the script exit 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from tests.package_editing import editable_copy  # noqa: E402
from tests.security.test_loader_fuzz import PACKAGE, check_load, mutated_files  # noqa: E402
from tests.security.test_tool_runtime_fuzz import call_sequences, check_calls, demo_bundles  # noqa: E402


class _Busy:
    """Seconds spent inside the code under test (the rest is Hypothesis generating inputs)."""

    seconds = 0.0

    @classmethod
    def timed(cls, fn: Callable[..., Any], *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args)
        finally:
            cls.seconds += time.perf_counter() - started


def _timed(name: str, examples: int, run: Callable[[], None], outcomes: Counter[str], unit: str) -> bool:
    _Busy.seconds = 0.0
    started = time.perf_counter()
    ok = True
    try:
        run()
    except Exception as exc:  # the failure Hypothesis found (it has printed the example)
        print(f"{name}: FAILED: {type(exc).__name__}: {exc}")
        ok = False
    wall = time.perf_counter() - started
    calls = sum(outcomes.values())
    print(
        f"{name}: {examples} examples, {calls} {unit} in {wall:.1f} s = {calls / wall:.0f} {unit}/s with generation, "
        f"{calls / max(_Busy.seconds, 1e-9):.0f} {unit}/s in the code under test ({_Busy.seconds:.1f} s)"
    )
    for outcome, count in outcomes.most_common(6):
        print(f"    {count:6d}  {outcome[:110]!a}")
    return ok


def _loader(examples: int, seed_value: int | None) -> bool:
    outcomes: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="apexvoice-bench-fuzz-") as tmp:
        task_dir = editable_copy(PACKAGE, Path(tmp))

        @settings(max_examples=examples, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(changed=mutated_files())
        def prop(changed: dict[str, bytes]) -> None:
            message = _Busy.timed(check_load, task_dir, changed)
            outcomes[message.split(": ", 2)[-1][:60] if message != "loaded" else "loaded"] += 1

        run = seed(seed_value)(prop) if seed_value is not None else prop
        return _timed("loader", examples, run, outcomes, "loads")


def _runtime(examples: int, seed_value: int | None) -> bool:
    outcomes: Counter[str] = Counter()
    bundles = demo_bundles()

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(sequence=call_sequences(bundles))
    def prop(sequence) -> None:
        for record in _Busy.timed(check_calls, *sequence):
            outcomes["ok" if record.ok else (record.error or "")[:50]] += 1

    run = seed(seed_value)(prop) if seed_value is not None else prop
    return _timed("tool runtime", examples, run, outcomes, "calls")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loader", type=int, default=2000, help="loader examples (CI runs 60)")
    parser.add_argument("--runtime", type=int, default=2000, help="tool-call sequences (CI runs 100)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    results = [_loader(args.loader, args.seed), _runtime(args.runtime, args.seed)]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
