"""What a flooding websocket agent costs the harness: peak RSS, wall time and media-s per CPU-s.

Each scenario runs in a fresh process (so its peak RSS is its own): one real duplex session on
the realtime clock — the harness's OpenAI-Realtime client (the one ``ws://`` and ``container:``
agents get), the runner, the event log on disk — on a copy of the benefits demo task cut to a
20 s budget, against an in-process loopback agent (``tests/fakes/flooding_agent.py``) that opens
its session and then floods:

- ``huge_frame``: one text frame announcing 3 GiB, then 256 MiB of its payload as fast as read;
- ``audio``: 200 ms audio deltas as fast as the socket takes them (25 min of media on offer);
- ``transcript``: 1,500 transcript deltas of 1 KiB, then ``response.done``.

CPU-s is the whole process (the flooding server included). Run:
``PYTHONPATH=. python benchmarks/bench_agent_flood.py``.

Measured (2-core host shared with other jobs, this branch; the issue measured main before it at
2.7 GB RSS for the frame, 1.8 GB for the audio flood, and a frozen loop for the transcripts):

=============  =========  =======  ================  ============================================
scenario       peak RSS   wall     media-s / CPU-s   outcome
=============  =========  =======  ================  ============================================
huge_frame     144 MiB    0.1 s    — (at media 0)    refused at its header after 8 MiB had been
                                                     read; ``AdapterError`` ``over_limit`` (a
                                                     ``ProviderError`` until the boundary maps a
                                                     ``ws://`` agent's to its failure)
audio          162 MiB    0.3 s    0.22              ``AgentFailure`` ``over_limit`` at 120 s
                                                     queued (1,396 deltas of 200 ms sent)
transcript     167 MiB    118.8 s  0.18              ran to its 20 s budget: 100 s of the wall
                                                     are the runner's transcript observation
                                                     (``_observe_streaming`` re-reads the whole
                                                     text per delta), not in this change's files
=============  =========  =======  ================  ============================================
"""

from __future__ import annotations

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

SCENARIOS = ("huge_frame", "audio", "transcript")
BUDGET_S = 20
TRANSCRIPT_DELTAS = 1_500


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
    from harness.session.duplex_runner import run_duplex_session
    from harness.session.environment_port import InProcessEnvironment
    from harness.tasks.loader import load_task
    from tests.fakes.flooding_agent import FloodingAgent, FloodPlan

    plan = FloodPlan(mode, transcript_deltas=TRANSCRIPT_DELTAS)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as scratch:
        task_dir = _short_task(Path(scratch))
        bundle = load_task(task_dir)
        speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
        env = InProcessEnvironment(bundle.public_bundle())
        async with FloodingAgent(plan) as agent:
            adapter = OpenAIRealtimeAdapter(endpoint=agent.url, model="", require_key=False)
            wall, cpu = time.perf_counter(), _cpu_s()
            try:
                result = await run_duplex_session(bundle, adapter, env, speech=speech, session_dir=Path(scratch) / "run")
                outcome = f"ended: {result.reason}"
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
    if len(sys.argv) > 1:
        print(json.dumps(asyncio.run(_scenario(sys.argv[1]))), flush=True)
        return
    for mode in SCENARIOS:
        done = subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True, check=False)
        lines = done.stdout.strip().splitlines()
        print(lines[-1] if lines else f"{mode}: failed (rc {done.returncode}): {done.stderr.strip()[-400:]}", flush=True)


if __name__ == "__main__":
    main()
