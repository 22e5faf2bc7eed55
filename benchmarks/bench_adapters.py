"""Cost of the realtime provider adapters, against the OpenAI protocol fake in its own process.

1. Adapter CPU per 20 ms frame: user frames sent as fast as the socket takes them (base64 + JSON +
   websocket; for Gemini also the 24→16 kHz polyphase resampler), and agent audio received
   (JSON + base64 + normalization), per 20 ms of audio and as a share of the frame's 20 ms.
2. N concurrent C2 sessions (the duplex runner on the realtime clock, in-process environment, the
   fake playing the task's reference policy): pacing jitter of the frame loop (how late each frame
   starts after its deadline: p50/p99/max) and the harness's CPU per session (share of one core).

The fakes run in subprocesses so their CPU is not counted. Usage:
    python benchmarks/bench_adapters.py [--sessions 16] [--seconds 30] [--frames 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from harness.agents.providers.gemini_live import GeminiLiveAdapter
from harness.agents.providers.openai_realtime import OpenAIRealtimeAdapter
from harness.agents.realtime import SessionConfig
from harness.audio.espeak import user_voice
from harness.audio.frames import FRAME_MS, FRAME_SAMPLES, AudioFrame
from harness.audio.speech_bank import open_speech_source
from harness.metrics.percentiles import percentile
from harness.session.clocks import RealtimeClock
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.loader import load_task

REPO = Path(__file__).resolve().parents[1]
TASK = REPO / "harness" / "demo_data" / "tasks" / "demo_offsite_coordination_001"


class _Fake:
    """A protocol fake in a child process (its CPU is not the harness's)."""

    def __init__(self, task_dir: Path | None, module: str = "tests.fakes.openai_realtime_fake") -> None:
        args = [sys.executable, "-m", module, *([str(task_dir)] if task_dir else [])]
        self.process = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, text=True)
        self.url = self.process.stdout.readline().strip()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


async def _send_cost(adapter, frames: int) -> float:
    """CPU µs per user frame sent (encoding, resampling where the provider wants it, the socket)."""
    await adapter.connect(SessionConfig(instructions="", tools=[]))
    pcm = (np.sin(np.arange(FRAME_SAMPLES) / 7) * 3000).astype(np.int16)
    cpu0 = time.process_time()
    for index in range(frames):
        await adapter.send_audio(AudioFrame(pcm, index * FRAME_MS))
    return (time.process_time() - cpu0) / frames * 1e6


async def adapter_cpu(frames: int) -> None:
    openai_fake, gemini_fake = _Fake(None), _Fake(None, "tests.fakes.gemini_live_fake")
    try:
        openai = OpenAIRealtimeAdapter(endpoint=openai_fake.url, model="", require_key=False)
        send_openai = await _send_cost(openai, frames)
        chunk = (np.sin(np.arange(4800) / 5) * 3000).astype("<i2").tobytes()  # 200 ms, as the fake sends
        message = json.dumps({"type": "response.output_audio.delta", "event_id": "e", "response_id": "r", "item_id": "i",
                              "output_index": 0, "content_index": 0, "delta": base64.b64encode(chunk).decode()})
        cpu0 = time.process_time()
        for _ in range(frames // 10):
            await openai._on_message(json.loads(message))
            openai.poll_events()
        receive_us = (time.process_time() - cpu0) / (frames // 10) / 10 * 1e6
        await openai.close()
        gemini = GeminiLiveAdapter(endpoint=gemini_fake.url, require_key=False)
        send_gemini = await _send_cost(gemini, frames)
        await gemini.close()
    finally:
        openai_fake.stop()
        gemini_fake.stop()
    print("adapter CPU per 20 ms frame:")
    print(f"  OpenAI Realtime: send user frame     {send_openai:7.1f} µs  ({send_openai / 200:.2f}% of the frame)")
    print(f"  OpenAI Realtime: receive agent audio {receive_us:7.1f} µs  ({receive_us / 200:.2f}% of the frame, per 20 ms of audio)")
    print(f"  Gemini Live:     send user frame     {send_gemini:7.1f} µs  ({send_gemini / 200:.2f}% of the frame; 24→16 kHz polyphase included)")


class _JitterClock(RealtimeClock):
    """The realtime clock, recording how late each frame starts after its deadline.

    The clock starts before the session connects, so the first frames catch up on the set-up
    time; lateness is recorded from the first frame on time.
    """

    def __init__(self) -> None:
        super().__init__()
        self.late_ms: list[float] = []
        self._on_time = False

    async def advance(self) -> None:
        await super().advance()
        deadline_ns = self._wall_start_ns + self.media_ms * 1_000_000
        late = (time.monotonic_ns() - deadline_ns) / 1e6
        self._on_time = self._on_time or late < FRAME_MS
        if self._on_time:
            self.late_ms.append(late)


async def _session(url: str, seconds: int, clock: _JitterClock):
    bundle = load_task(TASK)
    bundle.task.time_budget_s = seconds
    speech = open_speech_source(TASK, "auto", voice=user_voice(bundle.persona.get("voice_id")), task_id=bundle.task_id)
    adapter = OpenAIRealtimeAdapter(endpoint=url, model="", require_key=False)
    return await run_duplex_session(
        bundle, adapter, InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech, session_dir=None, clock=clock)
    )


async def concurrent_sessions(sessions: int, seconds: int) -> None:
    fake = _Fake(TASK)
    try:
        await _session(fake.url, 2, _JitterClock())  # warm the speech caches
        clocks = [_JitterClock() for _ in range(sessions)]
        cpu0, wall0 = time.process_time(), time.perf_counter()
        results = await asyncio.gather(*(_session(fake.url, seconds, clock) for clock in clocks))
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        fake.stop()
    late = sorted(x for clock in clocks for x in clock.late_ms)
    calls = sum(1 for r in results for e in r.events.events if e.type == "TOOL_CALL")
    print(f"{sessions} concurrent realtime sessions x {seconds} s media (reference policy via the fake):")
    print(f"  wall {wall:.1f} s for {seconds} s of media ({wall / seconds:.2f}x real time); {calls} tool calls made")
    print(f"  frame lateness after deadline: p50 {percentile(late, 0.5):.2f} ms  p99 {percentile(late, 0.99):.2f} ms  max {late[-1]:.2f} ms")
    print(f"  harness CPU: {cpu:.1f} s total, {100 * cpu / sessions / wall:.1f}% of a core per session")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=3000)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=30)
    args = parser.parse_args()
    asyncio.run(adapter_cpu(args.frames))
    asyncio.run(concurrent_sessions(args.sessions, args.seconds))


if __name__ == "__main__":
    main()
