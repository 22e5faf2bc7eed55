"""Per-stage latency of the cascade voice agent over demo sessions: p50/p95 per stage.

Usage: python -m benchmarks.bench_cascade [--tasks N] [--acoustics PRESET]  (from the repository root)
Each session is a C2 session on the virtual clock with the policy-playing fake chat server on
loopback, so the LLM stage is the HTTP round trip of a local server, not a model's think time;
ASR (faster-whisper tiny.en by default, ``APEX_VOICE_ASR_MODEL`` to change) and espeak synthesis
are the real local components. Stages are wall milliseconds from the end-of-turn decision
(which itself comes ``END_OF_TURN_MS`` of media time after the user's last voiced frame):
ASR done, first LLM reply, first audio ready (tool calls in between included); TTS is its own
duration. Also prints the session wall time per media second. ``--acoustics`` degrades the user
channel (C3) first, which the cascade then has to recognize.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from harness.agents.cascade import END_OF_TURN_MS, CascadeAgent
from harness.agents.chat_agent import ChatClient, ChatEndpoint
from harness.audio.acoustics import AcousticChain
from harness.audio.espeak import user_voice
from harness.audio.speech_bank import open_speech_source
from harness.metrics.percentiles import percentile
from harness.session.duplex_runner import DuplexConfig, run_duplex_session
from harness.session.environment_port import InProcessEnvironment
from harness.tasks.dataset import BUNDLED_DATA, resolve_data
from harness.tasks.loader import load_task
from tests.fakes.fake_chat_server import API_KEY, FakeChatServer, serve_fake_chat

STAGES = ("asr_ms", "llm_ms", "tts_ms", "first_audio_ms")


async def _sessions(task_count: int, acoustics: str) -> None:
    os.environ["APEX_BENCH_CHAT_KEY"] = API_KEY
    turns: list[dict] = []
    media_ms = wall_s = 0.0
    passed = 0
    task_dirs = resolve_data(BUNDLED_DATA).task_dirs[:task_count]
    async with serve_fake_chat(FakeChatServer()) as fake:
        for task_dir in task_dirs:
            bundle = load_task(task_dir)
            fake.policy = bundle.policy
            speech = open_speech_source(task_dir, "auto", voice=user_voice(bundle.persona.get("voice_id")))
            chain = AcousticChain.parse(acoustics)
            client = ChatClient(ChatEndpoint("fake-model", fake.base_url, "APEX_BENCH_CHAT_KEY"))
            agent = CascadeAgent(client=client, clock_mode="virtual")
            started = time.perf_counter()
            result = await run_duplex_session(bundle, agent, InProcessEnvironment(bundle.public_bundle()), DuplexConfig(speech=speech,
                                              session_dir=None, condition="C2" if chain.is_clean else "C3",
                                              acoustics=None if chain.is_clean else chain))
            wall_s += time.perf_counter() - started
            media_ms += result.events.events[-1].media_time_ms
            passed += result.pts
            turns.extend(agent.metadata()["turn_latencies_ms"])
            print(f"{task_dir.name}: PTS {result.pts}, {len(agent.latencies)} responses", flush=True)
    print(f"\nacoustics {acoustics}: {len(task_dirs)} sessions, {passed} passed, {len(turns)} responses; "
          f"end of turn {END_OF_TURN_MS} ms of media silence after the last voiced frame")
    for stage in STAGES:
        values = [t[stage] for t in turns if t[stage] is not None]
        print(f"{stage:15s} p50 {percentile(values, 0.5):8.1f} ms  p95 {percentile(values, 0.95):8.1f} ms  (n={len(values)})")
    print(f"wall time per media second: {wall_s / (media_ms / 1000):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="Demo tasks to run (default 3).")
    parser.add_argument("--acoustics", default="clean", help="C3 chain for the user channel (default clean).")
    args = parser.parse_args()
    asyncio.run(_sessions(args.tasks, args.acoustics))


if __name__ == "__main__":
    main()
