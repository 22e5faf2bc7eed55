"""What a flooding websocket agent costs the harness: peak RSS, wall time and media-s per CPU-s.

Each scenario runs in a fresh process (so its peak RSS is its own): one real duplex session on
the realtime clock — the harness's OpenAI-Realtime client (the one ``ws://`` and ``container:``
agents get), the runner, the event log on disk — on a copy of the benefits demo task cut to a
20 s budget, against an in-process loopback agent (``tests/fakes/flooding_agent.py``) that opens
its session and then floods:

- ``huge_frame``: one text frame announcing 3 GiB, then 256 MiB of its payload as fast as read;
- ``audio``: 200 ms audio deltas as fast as the socket takes them (25 min of media on offer);
- ``transcript``: 1,500 transcript deltas of 1 KiB in one item, then ``response.done``;
- ``transcript_items``: 900 deltas of 1 KiB, each its own item (under every bound but the session's).

The session runs with the ``remote_agent`` blame a ``ws://`` agent gets. CPU-s is the whole process
(the flooding server included). Run: ``PYTHONPATH=. python benchmarks/bench_agent_flood.py``.

Measured (2-core host, main after issue 19; the issue measured main before it at 2.7 GB RSS for the
frame, 1.8 GB for the audio flood, and 1 s of media in 80 s of wall for 1,500 transcript deltas):

================  =========  =======  ================  =========================================
scenario          peak RSS   wall     media-s / CPU-s   outcome
================  =========  =======  ================  =========================================
huge_frame        144 MiB    0.1 s    — (at media 0)    refused at its header after 8 MiB read:
                                                        the agent's failure, ``over_limit``
audio             167 MiB    0.3 s    — (at media 0)    ``over_limit`` at 120 s queued (1,366
                                                        deltas of 200 ms sent)
transcript        143 MiB    0.1 s    — (at media 0)    ``over_limit``: the item passed 32,000
                                                        characters
transcript_items  153 MiB    20.1 s   14.9              ran its 20 s budget in 20.1 s of wall:
                                                        the loop kept pace (before: 118.8 s)
================  =========  =======  ================  =========================================
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

SCENARIOS = ("huge_frame", "audio", "transcript", "transcript_items")
BUDGET_S = 20
TRANSCRIPT_DELTAS = 1_500
#: 900 items of 1 KiB: under the session's transcript bound, so the session runs to its budget.
ITEM_DELTAS = 900


def _peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _short_task(root: Path) -> Path:
    from tests.conftest import DEMO_DATA

    target = root / "demo_benefits_enrollment_001"
    shutil.copytree(DEMO_DATA / "tasks" / target.name, target)
    task_yaml = target / "task.yaml"
    task = yaml.safe_load(task_yaml.read_text(encoding="utf-8"))
    task["time_budget_s"] = BUDGET_S
    task_yaml.write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    return target


async def _scenario(mode: str) -> dict[str, object]:
    from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
    from harness.audio.espeak import user_voice
    from harness.audio.speech_bank import open_speech_source
    from harness.session.duplex_runner import DuplexConfig, run_duplex_session
    from harness.session.environment_port import InProcessEnvironment
    from harness.tasks.loader import load_task
    from tests.fakes.flooding_agent import FloodingAgent, FloodPlan

    items = mode == "transcript_items"  # the same flood, one item per delta: under every bound but the session's
    plan = FloodPlan("transcript" if items else mode,  # type: ignore[arg-type]
                     transcript_deltas=ITEM_DELTAS if items else TRANSCRIPT_DELTAS, item_per_delta=items)
    with tempfile.TemporaryDirectory() as scratch:
        task_dir = _short_task(Path(scratch))
        bundle = load_task(task_dir)
        speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
        env = InProcessEnvironment(bundle.public_bundle())
        async with FloodingAgent(plan) as agent:
            adapter = OpenAIRealtimeAdapter(endpoint=agent.url, model="", require_key=False)
            wall, cpu = time.perf_counter(), _cpu_s()
            try:
                # A ws:// agent: what it floods is its own failure (the boundary's remote_agent blame).
                result = await run_duplex_session(bundle, adapter, env, DuplexConfig(speech=speech, session_dir=Path(scratch) / "run",
                                                  agent_kind="remote_agent"))
                failure = result.agent_failure
                outcome = f"ended: {result.reason}" + (f" ({failure['kind']}: {failure['detail'][:60]})" if failure else "")
            except Exception as exc:  # the session's own outcome is the figure here
                outcome = f"{type(exc).__name__}: {str(exc)[:90]}"
            wall, cpu = time.perf_counter() - wall, _cpu_s() - cpu
            media_ms = _events_media_ms(Path(scratch) / "run" / "events.jsonl")
            sent = agent.sent
    return {"scenario": mode, "peak_rss_mib": round(_peak_rss_mib()), "wall_s": round(wall, 1),
            "media_s_per_cpu_s": round(media_ms / 1000 / cpu, 2) if cpu else None, "sent": sent, "outcome": outcome}


def _events_media_ms(path: Path) -> int:
    """Media time the session reached (its last event's), whether it ended or raised."""
    last = 0
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            last = max(last, json.loads(line).get("media_time_ms", 0))
    return last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", choices=SCENARIOS,
                        help="run this one scenario in this process (default: each in a fresh process)")
    args = parser.parse_args()
    if args.scenario is not None:
        print(json.dumps(asyncio.run(_scenario(args.scenario))), flush=True)
        return
    for mode in SCENARIOS:
        done = subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True, check=False)
        lines = done.stdout.strip().splitlines()
        print(lines[-1] if lines else f"{mode}: failed (rc {done.returncode}): {done.stderr.strip()[-400:]}", flush=True)


if __name__ == "__main__":
    main()
