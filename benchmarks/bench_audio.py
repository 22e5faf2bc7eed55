"""Cost of the audio layer: synthesis, VAD, resampling, recording and clip I/O.

Usage: python benchmarks/bench_audio.py [--frames N]
Synthesis is reported per audio-second, cold (fresh process per clip, empty cache) and cached;
the per-frame figures are what one 20 ms tick of a session pays per channel.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.audio.audio_files import read_pcm16, write_pcm16
from harness.audio.espeak import synthesize
from harness.audio.frames import FRAME_SAMPLES, SAMPLE_RATE
from harness.audio.resample import StreamingResampler
from harness.audio.stereo_recorder import StereoRecorder
from harness.audio.vad import FrameVad

TEXTS = [
    "My employee ID is E one zero four two.",
    "Actually, sorry, the total was two hundred dollars, not two forty.",
    "Yes, please go ahead and submit it.",
    "Hi, I've got one of your dishwashers that's stopped draining. Is it still under warranty?",
    "No, that's everything \u2014 thanks so much for your help!",
    "Sorry \u2014 could you go on?",
]


def _per_frame_us(step, frames: list[np.ndarray]) -> float:
    start = time.perf_counter()
    for frame in frames:
        step(frame)
    return (time.perf_counter() - start) / len(frames) * 1e6


async def _synthesis(cache_dir: Path) -> tuple[float, float, np.ndarray]:
    start = time.perf_counter()
    cold = await synthesize(TEXTS, "en-us+f2", cache_dir=cache_dir)
    cold_s = time.perf_counter() - start
    start = time.perf_counter()
    await synthesize(TEXTS, "en-us+f2", cache_dir=cache_dir)
    cached_s = time.perf_counter() - start
    audio_s = sum(c.num_samples for c in cold.values()) / SAMPLE_RATE
    return cold_s * 1000 / audio_s, cached_s * 1000 / audio_s, np.concatenate([c.pcm for c in cold.values()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cold_ms, cached_ms, speech = asyncio.run(_synthesis(Path(scratch) / "tts"))
        print(f"espeak synthesis: cold {cold_ms:.1f} ms, cached {cached_ms:.2f} ms per audio-second")

        looped = np.resize(speech, args.frames * FRAME_SAMPLES)
        frames = [looped[i * FRAME_SAMPLES : (i + 1) * FRAME_SAMPLES] for i in range(args.frames)]
        silent = [np.zeros(FRAME_SAMPLES, dtype=np.int16)] * args.frames
        print(f"VAD (speech): {_per_frame_us(FrameVad().update, frames):.1f} µs per frame")
        print(f"VAD (silence): {_per_frame_us(FrameVad().update, silent):.1f} µs per frame")
        print(f"resampler 24k->16k: {_per_frame_us(StreamingResampler(24_000, 16_000).process, frames):.1f} µs per frame")
        recorder = StereoRecorder(initial_seconds=1.0)
        print(f"stereo recorder: {_per_frame_us(lambda f: recorder.append(f, f), frames):.2f} µs per frame")

        audio_s = len(looped) / SAMPLE_RATE
        path = Path(scratch) / "clip.flac"
        start = time.perf_counter()
        write_pcm16(path, looped)
        written = time.perf_counter()
        read_pcm16(path)
        done = time.perf_counter()
        print(
            f"FLAC: write {(written - start) * 1000 / audio_s:.2f} ms, "
            f"read {(done - written) * 1000 / audio_s:.2f} ms per audio-second"
        )


if __name__ == "__main__":
    main()
