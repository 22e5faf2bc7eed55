"""The harness's CPU per live media-stream session, and how many run side by side on this machine.

Usage: python -m benchmarks.bench_media_stream [--sessions 1,2,4] [--budget-s 40]
(from the repository root)

Each step runs ``apex-voice run --model twilio+ws://…`` with N repetitions of a demo task at once
(``--parallel N``), on the wall clock, against a fake Twilio bot in this process (so its CPU is
not the harness's) that speaks an espeak greeting every 8 s of caller audio with a mark after it:
every session streams 50 μ-law frames a second each way, resamples both, answers marks, cuts
responses and runs local ASR on what played — a live call's whole load. The harness's CPU is
the CLI process and its task servers (``RUSAGE_CHILDREN``); lateness is each session's frame
lateness p99 from its ``RUN_END``. Prints the harness's CPU seconds per step, the marginal CPU
seconds per media second of one more live session (the step's difference to the previous one:
the CLI's start and the ASR model's load are paid once per run), and the worst session's p99
lateness per step (the issue's bar: 5 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from harness.audio import espeak
from harness.audio.frames import SAMPLE_RATE
from harness.audio.resample import resample_clip
from tests.conftest import DEMO_DATA
from tests.fakes.loopback import PROVIDER_VOICE
from tests.fakes.threaded import in_thread
from tests.fakes.twilio_bot import BotCall, TwilioBotFake

TASK = "demo_hvac_inspection_001"
GREETING = "Good morning. I'm ready to take down your readings for the quarterly inspection."
EVERY_FRAMES = 400  # 8 s of caller audio


def _greeting() -> np.ndarray:
    clip = asyncio.run(espeak.synthesize([GREETING], PROVIDER_VOICE))[GREETING]
    return np.clip(resample_clip(clip.pcm.astype(float), SAMPLE_RATE, 8000), -32768, 32767).astype(np.int16)


def _bot(line: np.ndarray) -> TwilioBotFake:
    fake: TwilioBotFake

    async def script(call: BotCall) -> None:
        spoken = 0
        while call.ws.close_code is None:
            frames = sum(1 for m in fake.received if m.get("event") == "media" and m["streamSid"] == call.stream_sid)
            if frames >= (spoken + 1) * EVERY_FRAMES:
                spoken += 1
                await call.media(line, chunk_ms=40)
                await call.mark(f"greeting-{spoken}")
            await asyncio.sleep(0.05)

    fake = TwilioBotFake(script)
    return fake


def _step(sessions: int, budget_s: int, bot_model: str, data: Path, out: Path) -> tuple[float, float, float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "harness.cli.main", "run", "--model", bot_model, "--data", str(data),
                    "--sandbox", "local", "--repeats", str(sessions), "--parallel", str(sessions), "--out", str(out)],
                   env={**os.environ, "APEX_VOICE_CLOCK_SPEED": "1"}, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    media_s, late = 0.0, []
    for log in out.glob("*/rep*/*/events.jsonl"):
        end = [json.loads(line) for line in log.read_text().splitlines() if '"RUN_END"' in line][-1]
        media_s += end["media_time_ms"] / 1000
        late.append(end["payload"].get("frame_lateness_p99_ms") or 0.0)
    return cpu, media_s, max(late or [0.0]), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="1,2,4", help="comma-separated session counts to run side by side")
    parser.add_argument("--budget-s", type=int, default=40, help="each session's media seconds")
    args = parser.parse_args()
    line = _greeting()
    with tempfile.TemporaryDirectory(prefix="bench-media-stream-") as tmp:
        data = Path(tmp) / "data" / TASK
        shutil.copytree(DEMO_DATA / "tasks" / TASK, data)
        spec = yaml.safe_load((data / "task.yaml").read_text())
        spec["time_budget_s"] = args.budget_s
        (data / "task.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
        fake = _bot(line)
        with in_thread(fake):
            print(f"{'sessions':>8s} {'media s':>8s} {'harness cpu s':>13s} {'marginal cpu/media s':>20s} "
                  f"{'worst p99 late ms':>17s} {'wall s':>7s}", flush=True)
            previous: tuple[float, float] | None = None
            for count in (int(n) for n in args.sessions.split(",")):
                cpu, media_s, late, wall = _step(count, args.budget_s, fake.model, data, Path(tmp) / f"out{count}")
                # A run's fixed cost (the CLI's start, the ASR model's load, the task server) is paid
                # once: what one more live session costs is the difference to the previous step.
                marginal = (cpu - previous[0]) / (media_s - previous[1]) if previous and media_s > previous[1] else None
                previous = (cpu, media_s)
                shown = f"{marginal:20.3f}" if marginal is not None else f"{'-':>20s}"
                print(f"{count:8d} {media_s:8.0f} {cpu:13.1f} {shown} {late:17.1f} {wall:7.1f}", flush=True)
        assert not fake.violations, fake.violations[:3]


if __name__ == "__main__":
    main()
