"""Peak RSS of the ``apex-voice run`` process while an agent floods what the harness keeps (issue 33).

Each scenario is one real ``apex-voice run`` of ``demo_benefits_enrollment_001`` (``--sandbox local``,
one repetition) as a user would start it; the CLI process's peak RSS (``VmHWM``) is sampled until it
exits. The agents:

- ``ws://`` (the loopback agent of ``tests/fakes/flooding_agent.py``, in this process):
  ``mcp_names`` (``mcp_call`` items named with 3 MB each), ``mcp_items`` (40-character names, fresh
  ids), ``responses`` (``response.done`` with fresh ids), ``one_sample`` (one-sample audio deltas),
  ``odd_text`` (a lone surrogate, NUL, controls and bidi overrides in an error event, transcripts
  and the close reason);
- in process (``--trust-adapter``) and hosted out of process, the adapters of
  ``tests/adversarial/hostile_adapters.py``: ``FloodsEveryPoll`` (2,000 events on every poll),
  ``FloodsResponses`` (500 fresh responses a frame), ``FloodsOneSampleDeltas`` (1,000 one-sample
  deltas a frame).

``--repo PATH`` runs the CLI of another checkout (say the commit before issue 33:
``git archive 1ffb003 | tar -x -C /tmp/before``); this worktree's hostile adapters are put on its
path ahead of it. A run passing ``--cap-mib`` (default 2,048) or ``--timeout-s`` is killed and
reported at its peak so far. Run: ``PYTHONPATH=. python benchmarks/bench_flood_cli.py [--repo PATH]``.

Measured (2-core host, shared with other work; ``before`` = 1ffb003, the commit before issue 33,
``after`` = its bounds; each a JSON line of this script, condensed):

=========================================  ==============================  ===============================
scenario                                   before: peak RSS, outcome        after: peak RSS, wall, outcome
=========================================  ==============================  ===============================
ws mcp_names (3 MB names)                  2,052 MiB, killed at the cap     141 MiB, 14 s, over_limit
                                           (59 s)                           (a name past 256 characters)
ws mcp_items (40-char names, fresh ids)    329 MiB, growing; killed at      87 MiB, 16 s, over_limit
                                           120 s                            (20,000 MCP call items)
ws responses (fresh ids)                   2,049 MiB, killed at the cap     146 MiB, 18 s, over_limit
                                           (77 s)                           (10,000 responses)
ws one_sample                              92 MiB, closed at 55 s           93 MiB, 36 s, over_limit
                                                                            (250,000 events)
ws odd_text                                no result.json, exit 1           81 MiB, 5 s, scored (closed)
in-process FloodsEveryPoll                 2,048 MiB, killed at the cap     85 MiB, 5 s, over_limit
                                           (105 s)                          (4,000 events in one frame)
in-process FloodsResponses                 2,050 MiB, killed at the cap     139 MiB, 5 s, over_limit
                                           (68 s)                           (10,000 responses)
in-process FloodsOneSampleDeltas           478 MiB, growing; killed at      84 MiB, 3 s, over_limit
                                           120 s                            (24,000 queued deltas)
hosted FloodsEveryPoll                     445 MiB, closed at 62 s          121 MiB, 88 s, over_limit
                                                                            (250,000 events)
=========================================  ==============================  ===============================
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
TASK_ID = "demo_benefits_enrollment_001"
WS_SCENARIOS = {
    "ws mcp_names": {"mode": "mcp_names"},
    "ws mcp_items": {"mode": "mcp_names", "name_chars": 40, "mcp_errors": False},
    "ws responses": {"mode": "responses"},
    "ws one_sample": {"mode": "one_sample"},
    "ws odd_text": {"mode": "odd_text"},
}
ADAPTER_SCENARIOS = {
    "in-process FloodsEveryPoll": ("FloodsEveryPoll", True),
    "in-process FloodsResponses": ("FloodsResponses", True),
    "in-process FloodsOneSampleDeltas": ("FloodsOneSampleDeltas", True),
    "hosted FloodsEveryPoll": ("FloodsEveryPoll", False),
}


def _peak_mib(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    return next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")), 0.0)


def _overlay(root: Path) -> Path:
    """A ``tests`` package holding only this worktree's hostile adapters (put ahead of ``--repo``)."""
    package = root / "overlay" / "tests"
    (package / "adversarial").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "adversarial" / "__init__.py").write_text("")
    shutil.copy(HERE / "tests" / "adversarial" / "hostile_adapters.py", package / "adversarial")
    return package.parent


async def _cli(repo: Path, path: str, model: str, out: Path, extra: list[str], cap_mib: float,
               timeout_s: float) -> tuple[float, float, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "harness.cli.main", "run", "--model", model, "--sandbox", "local", "--only", TASK_ID,
        "--repeats", "1", "--out", str(out), *extra,
        cwd=repo, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": path})
    started, peak, stopped = time.perf_counter(), 0.0, ""
    waiting = asyncio.ensure_future(process.wait())
    while not waiting.done():
        peak = max(peak, _peak_mib(process.pid))
        if peak > cap_mib or time.perf_counter() - started > timeout_s:
            stopped = f"killed at {'the cap' if peak > cap_mib else 'the timeout'}"
            process.kill()
            break
        await asyncio.wait([waiting], timeout=0.05)
    await waiting
    wall = time.perf_counter() - started
    return peak, wall, stopped or _outcome(out, process.returncode)


def _outcome(out: Path, returncode: int | None) -> str:
    results = list(out.glob(f"{TASK_ID}/rep*/result.json"))
    if not results:
        return f"no result.json (rc {returncode})"
    record = json.loads(results[0].read_text(encoding="utf-8"))
    if record.get("error"):
        return f"unscored: {str(record['error'])[:60]}"
    failure = record.get("agent_failure")
    if failure:
        return f"scored, {failure['kind']}: {failure['detail'][:70]}"
    return f"scored, {record.get('outcome')}"


async def _run(names: list[str], repo: Path, cap_mib: float, timeout_s: float) -> None:
    from tests.fakes.flooding_agent import FloodingAgent, FloodPlan

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        path = f"{_overlay(root)}:{repo}"
        for index, name in enumerate(names):
            out = root / f"run{index}"
            if name in WS_SCENARIOS:
                async with FloodingAgent(FloodPlan(**WS_SCENARIOS[name])) as agent:  # type: ignore[arg-type]
                    peak, wall, outcome = await _cli(repo, path, agent.url, out, [], cap_mib, timeout_s)
            else:
                adapter, trusted = ADAPTER_SCENARIOS[name]
                peak, wall, outcome = await _cli(repo, path, f"tests.adversarial.hostile_adapters:{adapter}", out,
                                                 ["--trust-adapter"] if trusted else [], cap_mib, timeout_s)
            print(json.dumps({"scenario": name, "peak_rss_mib": round(peak), "wall_s": round(wall, 1),
                              "outcome": outcome}, ensure_ascii=False), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help=f"of {[*WS_SCENARIOS, *ADAPTER_SCENARIOS]} (default: all)")
    parser.add_argument("--repo", type=Path, default=HERE, help="the checkout whose CLI runs (default: this one)")
    parser.add_argument("--cap-mib", type=float, default=2048.0, help="kill a run whose peak RSS passes this")
    parser.add_argument("--timeout-s", type=float, default=120.0, help="kill a run that takes longer")
    args = parser.parse_args()
    names = args.scenarios or [*WS_SCENARIOS, *ADAPTER_SCENARIOS]
    unknown = [n for n in names if n not in WS_SCENARIOS and n not in ADAPTER_SCENARIOS]
    if unknown:
        parser.error(f"unknown scenarios {unknown}")
    asyncio.run(_run(names, args.repo.resolve(), args.cap_mib, args.timeout_s))


if __name__ == "__main__":
    main()
