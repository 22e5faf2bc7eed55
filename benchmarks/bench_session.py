"""Cost of the full-duplex session loop.

1. Virtual clock: media-seconds per CPU-second (``time.process_time``) of an oracle session on
   each demo task, best of ``--repeat`` sessions (the VM is shared and noisy; the best run is the
   one least disturbed). Speech clips are prepared and cached by a first session; the environment
   is in-process, so sandbox start is excluded. ``--profile TOP`` prints where one session's CPU
   goes instead.
2. Realtime clock: the harness's CPU cost per 20 ms frame while paced to wall time (no-op agent,
   so only the harness works), as a share of the 20 ms budget.

Measured (issue 8), ``--only demo_offsite_coordination_001`` (113.9 media-s per session), old /
main / branch interleaved, ten rounds of ``--repeat`` 5 or 7 on the 2-core shared VM (load 1–7;
the old tree run with this script on ``PYTHONPATH``): the best session of all rounds, then the
spread of the rounds' bests:

    before the loop rewrite (2a045be)   214 media-s/CPU-s  (rounds 135–214; 93 µs CPU per frame)
    main after it (3636d30)             174 media-s/CPU-s  (rounds 121–174; 115 µs per frame)
    perf branch                         301 media-s/CPU-s  (rounds 192–301; 66 µs per frame)

Within a round the branch was 1.1–1.7× the old loop (median 1.5×) and 1.6–2.0× main (median 1.7×).

The branch's gain: the VADs' 24k→16k resampler reuses one plan of strided windows per frame shape
(a frame is one matrix product: ≈9 µs, was ≈35 µs), VAD rounding in place, silence checks with
``count_nonzero``, deferred jobs settled only when one is due, playback reports built only for an
adapter that reads them. What is left per frame (≈66 µs): three VADs (≈20 µs), the virtual clock's
yield to the event loop (≈11 % of a session), event emission with payload validation (within noise).

Issue 20, all ten demo tasks, ``--repeat 3``, main / branch interleaved at load ≈ 1 (total media
over total CPU of each task's best session): main 185 and 168, branch 235 and 242 media-s/CPU-s;
one offsite session under callgrind, 4.61 → 3.46 G instructions (−25 %). Same outputs to the bit
(``tests/test_session_golden.py``). The gain: resamplers fed the same frame after the same history
share one product (the oracle's and the recording's VADs on the user channel, the floor's and the
speech check's on the agent channel), the speech check reuses its work arrays and sums without
``np.mean``'s dispatch, an agent call that never suspends skips arming a timeout, the recorder holds
the time budget from the start, a heard slice's old part reuses the previous window's acts.

Usage: python benchmarks/bench_session.py [--data PATH] [--only ID]... [--repeat N] [--profile TOP]
       [--realtime-seconds N]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import pstats
import statistics
import time
from pathlib import Path

from harness.agents.noop_voice import NoOpVoiceAgent
from harness.agents.oracle_voice import OracleVoiceAgent
from harness.audio.espeak import user_voice
from harness.audio.frames import FRAME_MS
from harness.audio.speech_bank import open_speech_source
from harness.session.clocks import RealtimeClock
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.dataset import resolve_data
from harness.tasks.loader import load_task


async def _oracle_session(task_dir: Path, clock=None):
    bundle = load_task(task_dir)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    env = InProcessEnvironment(bundle.public_bundle())
    return await run_duplex_session(bundle, OracleVoiceAgent(), env, DuplexConfig(speech=speech, session_dir=None, clock=clock, privileged=True))


async def measure(task_dir: Path, repeats: int) -> list[tuple[float, float, float]]:
    """(media s, CPU s, wall s) of ``repeats`` oracle sessions, after one that warms the clip caches."""
    await _oracle_session(task_dir)  # synthesis and first imports are not the loop's cost
    runs = []
    for _ in range(repeats):
        gc.collect()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        result = await _oracle_session(task_dir)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        runs.append((result.events.events[-1].media_time_ms / 1000, cpu, wall))
    return runs


async def virtual_clock(task_dirs: list[Path], repeats: int) -> None:
    print(f"virtual clock, oracle agent, in-process environment, best of {repeats}:")
    for task_dir in task_dirs:
        runs = await measure(task_dir, repeats)
        ratios = sorted(media / cpu for media, cpu, _ in runs)
        media, cpu, wall = min(runs, key=lambda run: run[1] / run[0])
        print(
            f"  {task_dir.name:<38} media {media:6.1f} s  cpu {cpu:5.2f} s  wall {wall:5.2f} s  "
            f"best {ratios[-1]:6.1f}  median {statistics.median(ratios):6.1f}  worst {ratios[0]:6.1f} media-s/CPU-s"
        )


async def profile(task_dir: Path, top: int) -> None:
    """Where one oracle session's CPU goes: the ``top`` functions by own time."""
    await _oracle_session(task_dir)
    profiler = cProfile.Profile()
    profiler.enable()
    await _oracle_session(task_dir)
    profiler.disable()
    print(f"profile of one oracle session on {task_dir.name} (own time):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


async def realtime_clock(task_dir: Path, seconds: float) -> None:
    bundle = load_task(task_dir)
    bundle.task.time_budget_s = int(seconds)
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    env = InProcessEnvironment(bundle.public_bundle())
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = await run_duplex_session(
        bundle, NoOpVoiceAgent(), env, DuplexConfig(speech=speech, session_dir=None, clock=RealtimeClock())
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
    parser.add_argument("--repeat", type=int, default=5, help="sessions per task; the best is the figure (noisy VM)")
    parser.add_argument("--realtime-seconds", type=float, default=10.0, help="0 skips the realtime part")
    parser.add_argument("--profile", type=int, default=0, metavar="TOP", help="profile one session instead")
    args = parser.parse_args()
    task_dirs = resolve_data(args.data).select(args.only)
    if args.profile:
        await profile(task_dirs[0], args.profile)
        return
    await virtual_clock(task_dirs, args.repeat)
    if args.realtime_seconds > 0:
        await realtime_clock(task_dirs[0], args.realtime_seconds)


if __name__ == "__main__":
    asyncio.run(main())
