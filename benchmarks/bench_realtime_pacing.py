"""Realtime-clock cost and pacing of N concurrent sessions on this machine.

Each session runs a demo task on the realtime clock against a scripted agent (it answers every
user utterance with 1.5 s of speech after 600 ms of silence), with the environment in-process.
Printed per N: harness CPU per frame and per live session (share of one core), and frame-pacing
jitter — p50/p99 of |wall gap between consecutive frames − 20 ms| as the agent received them.
Both are taken in the steady state only: from the moment every session streams to the first
session's last frame, so neither set-up (task load, clips) nor a neighbour's end-of-session
grading is in them. The whole run's worst gap is printed beside them: those stalls are real, but
they are set-up and grading work, not per-frame cost.

Measured (issue 8, 2-core shared VM, load 1.5–1.7), 1 / 8 / 16 sessions, perf branch:
    CPU per live session   3.4 / 1.8 / 1.2 % of a core    (floor: an idle 20 ms wake is charged ≈1.1 %)
    jitter p99             9.0 / 19.5 / 19.7 ms           (max 30 / 36 / 111 ms)
main (3636d30) in the same harness at load 5–7: 2.3 / 1.4 / 1.0 %, p99 11.6 / 19.9 / 26.4 ms. The
branch's per-frame savings (≈50 µs of CPU per frame on the virtual clock) do not show here: a
wake-up is charged ≈200 µs on this VM whatever the work, and the run-to-run spread is larger than
the difference. The p99 at 8+ sessions is a frame slipping by up to one period on the shared
loop (gaps of 0–40 ms); the cyclic GC (gen-1 pauses ≤ 3.4 ms) is not the cause.

After user clips are read off the loop (a starting session used to read and verify them on it,
stalling its neighbours' frames), idle machine (load 0.3), 1 / 8 / 16 sessions, 15 s each:
    CPU per live session   3.6 / 1.6 / 1.3 % of a core    (floor: an idle 20 ms wake ≈1.4 %)
    jitter p99             1.95 / 1.13 / 17.0 ms          (max 3.7 / 3.6 / 149 ms)
At 16 the late frames are still set-up: each starting session runs ~0.1 s of synchronous steps
(seen with asyncio's slow-callback log) while the earlier ones already stream.

Usage: python benchmarks/bench_realtime_pacing.py [--sessions 1 8 16] [--seconds 20] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.agents.realtime import ResponseDone, TranscriptDelta  # noqa: E402
from harness.audio.espeak import user_voice  # noqa: E402
from harness.audio.frames import FRAME_MS  # noqa: E402
from harness.audio.speech_bank import open_speech_source  # noqa: E402
from harness.session.duplex_runner import DuplexConfig, run_duplex_session  # noqa: E402
from harness.session.environment_port import InProcessEnvironment  # noqa: E402
from harness.tasks.dataset import resolve_data  # noqa: E402
from harness.tasks.loader import load_task  # noqa: E402
from tests.scripted_voice_agent import ScriptedVoiceAgent, say  # noqa: E402

#: The answer's audio, synthesized once: making the tone takes ≈7 ms, which on a shared loop would
#: stall every other session's frames (a cost of this test agent, not of the harness).
_ANSWER_AUDIO = say(1500)


class PacedAgent(ScriptedVoiceAgent):
    clock_mode = "realtime"

    def __init__(self) -> None:
        self.arrivals: list[int] = []
        #: Process CPU at this session's first and (so far) last frame.
        self.cpu_at_first_frame: float | None = None
        self.cpu_at_last_frame = 0.0
        super().__init__(self._answer)

    async def send_audio(self, frame) -> None:
        self.cpu_at_last_frame = time.process_time()
        if self.cpu_at_first_frame is None:
            self.cpu_at_first_frame = self.cpu_at_last_frame
        self.arrivals.append(time.monotonic_ns())
        await super().send_audio(frame)

    @staticmethod
    def _answer(heard):
        if heard.user_voiced_ms >= 400 and heard.user_silence_ms == 600:
            heard.user_voiced_ms = 0
            # With a transcript, as providers give one (no local ASR in the measurement).
            return [TranscriptDelta("Thanks, noted."), _ANSWER_AUDIO, ResponseDone()]
        return []


async def one_session(task_dir: Path, seconds: int) -> PacedAgent:
    bundle = await asyncio.to_thread(load_task, task_dir)  # off the loop: other sessions are streaming
    bundle.task.time_budget_s = seconds
    speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    agent = PacedAgent()
    await run_duplex_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech, session_dir=None))
    return agent


async def run(n: int, task_dirs: list[Path], seconds: int) -> dict[str, float]:
    wall0 = time.perf_counter()
    agents = await asyncio.gather(*(one_session(task_dirs[i % len(task_dirs)], seconds) for i in range(n)))
    wall = time.perf_counter() - wall0
    # CPU and frames from the moment every session is streaming to the first one's last frame:
    # set-up (task load, clip preparation) and grading at the end are not per-frame work.
    last_to_start = max(agents, key=lambda a: a.arrivals[0])
    first_to_end = min(agents, key=lambda a: a.arrivals[-1])
    steady_from_ns, steady_until_ns = last_to_start.arrivals[0], first_to_end.arrivals[-1]
    cpu = first_to_end.cpu_at_last_frame - (last_to_start.cpu_at_first_frame or 0.0)
    frames = sum(sum(steady_from_ns <= t <= steady_until_ns for t in a.arrivals) for a in agents)
    steady = [np.array([t for t in a.arrivals if steady_from_ns <= t <= steady_until_ns]) for a in agents]
    jitter = np.concatenate([np.abs(np.diff(arrivals) / 1e6 - FRAME_MS) for arrivals in steady])
    worst_gap = max(np.diff(a.arrivals).max() / 1e6 for a in agents)
    per_frame_us = 1e6 * cpu / frames
    print(
        f"  {n:>2} sessions: {frames} frames in {wall:5.1f} s wall; harness CPU {per_frame_us:5.0f} us/frame = "
        f"{per_frame_us / (FRAME_MS * 10):.2f}% of a core per live session; "
        f"pacing jitter p50 {np.percentile(jitter, 50):.2f} ms, p99 {np.percentile(jitter, 99):.2f} ms, "
        f"max {jitter.max():.1f} ms; whole run's worst frame gap {worst_gap:.0f} ms (load {os.getloadavg()[0]:.1f})"
    )
    return {"sessions": n, "cpu_us_per_frame": per_frame_us, "jitter_p50_ms": float(np.percentile(jitter, 50)),
            "jitter_p99_ms": float(np.percentile(jitter, 99)), "jitter_max_ms": float(jitter.max()),
            "worst_gap_ms": float(worst_gap)}


async def wake_floor(wakes: int = 200) -> None:
    """What the OS charges a loop that only sleeps one frame at a time: the floor under every figure.

    On a tick-accounted VM a process woken by a timer is often charged a whole tick, so this can
    be ten times the real cost of a wake-up; per-session CPU below it cannot be told apart.
    """
    cpu0 = time.process_time()
    for _ in range(wakes):
        await asyncio.sleep(FRAME_MS / 1000)
    per_wake_us = 1e6 * (time.process_time() - cpu0) / wakes
    print(f"  floor: an idle loop sleeping {FRAME_MS} ms is charged {per_wake_us:.0f} us per wake "
          f"({per_wake_us / (FRAME_MS * 10):.2f}% of a core)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 8, 16])
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = parser.parse_args()
    task_dirs = resolve_data(None).select(None)
    print(f"realtime clock, scripted agent, {args.seconds} s per session (setup excluded from pacing):")
    await wake_floor()
    figures = [await run(n, task_dirs, args.seconds) for n in args.sessions]
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
