"""Cost of the full-duplex session loop.

1. Virtual clock: media-seconds per CPU-second of an oracle session on each demo task (speech
   clips prepared and cached beforehand; environment in-process, so sandbox start is excluded),
   with a per-phase split of where the CPU goes.
2. Realtime clock: the harness's CPU cost per 20 ms frame while paced to wall time (no-op agent,
   so only the harness works), as a share of the 20 ms budget.

Usage: python benchmarks/bench_session.py [--data PATH] [--only ID]... [--realtime-seconds N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from harness.agents.noop_voice import NoOpVoiceAgent
from harness.agents.oracle_voice import OracleVoiceAgent
from harness.audio.espeak import user_voice
from harness.audio.frames import FRAME_MS
from harness.audio.speech_bank import open_speech_source
from harness.session.clocks import RealtimeClock
from harness.session.duplex_runner import run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.dataset import resolve_data
from harness.tasks.loader import load_task


async def _oracle_session(task_dir: Path, clock=None):
    bundle = load_task(task_dir)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    env = InProcessEnvironment(bundle.public_bundle())
    return await run_duplex_session(bundle, OracleVoiceAgent(), env, speech=speech, session_dir=None, clock=clock, privileged=True)


async def virtual_clock(task_dirs: list[Path]) -> None:
    print("virtual clock, oracle agent, in-process environment:")
    ratios = []
    total_media = total_cpu = 0.0
    for task_dir in task_dirs:
        await _oracle_session(task_dir)  # warm the clip caches (synthesis is not the loop's cost)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        result = await _oracle_session(task_dir)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        media_s = result.events.events[-1].media_time_ms / 1000
        ratios.append(media_s / cpu)
        total_media += media_s
        total_cpu += cpu
        print(
            f"  {task_dir.name:<38} media {media_s:6.1f} s  cpu {cpu:5.2f} s  wall {wall:5.2f} s  "
            f"{media_s / cpu:6.1f} media-s/CPU-s  PTS {result.pts}"
        )
    print(
        f"  overall: {total_media / total_cpu:.1f} media-seconds per CPU-second "
        f"(median task {statistics.median(ratios):.1f}x); CPU per media second {1000 * total_cpu / total_media:.1f} ms"
    )


async def realtime_clock(task_dir: Path, seconds: float) -> None:
    bundle = load_task(task_dir)
    bundle.task.time_budget_s = int(seconds)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    env = InProcessEnvironment(bundle.public_bundle())
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = await run_duplex_session(
        bundle, NoOpVoiceAgent(), env, speech=speech, session_dir=None, clock=RealtimeClock()
    )
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    frames = result.events.events[-1].media_time_ms // FRAME_MS
    per_frame_us = 1e6 * cpu / max(frames, 1)
    print("realtime clock, no-op agent (harness work only):")
    print(
        f"  {frames} frames in {wall:.1f} s wall; harness CPU {per_frame_us:.0f} us per 20 ms frame "
        f"({per_frame_us / (FRAME_MS * 10):.2f}% of one core); pacing drift {1000 * (wall - frames * FRAME_MS / 1000) / max(frames, 1):+.2f} ms/frame"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--only", action="append", default=None)
    parser.add_argument("--realtime-seconds", type=float, default=10.0)
    args = parser.parse_args()
    source = resolve_data(args.data)
    task_dirs = source.select(args.only)
    await virtual_clock(task_dirs)
    await realtime_clock(task_dirs[0], args.realtime_seconds)


if __name__ == "__main__":
    asyncio.run(main())
