"""Cost of the C3 acoustic chains: degrading a demo task's whole clip set before a session.

Usage: python benchmarks/bench_acoustics.py
Per preset: wall milliseconds to degrade every pre-rendered clip of the first demo task, and the
same per second of audio. It is paid once per session, before the media clock starts.
"""

from __future__ import annotations

import asyncio
import time

from harness.audio.acoustics import PRESETS, AcousticChain
from harness.audio.speech_bank import open_speech_source
from harness.tasks.dataset import BUNDLED_DATA, resolve_data


def main() -> None:
    task_dir = resolve_data(BUNDLED_DATA).task_dirs[0]
    source = open_speech_source(task_dir, "prerendered")
    clips = asyncio.run(source.prepare(source.bank.texts))
    audio_s = sum(c.num_samples for c in clips.values()) / 24_000
    print(f"{task_dir.name}: {len(clips)} clips, {audio_s:.0f} s of user speech")
    for preset in PRESETS:
        chain = AcousticChain.from_preset(preset)
        start = time.perf_counter()
        chain.degrade_clips(clips, seed=1)
        elapsed_ms = (time.perf_counter() - start) * 1000
        print(f"{preset:10s} {elapsed_ms:7.0f} ms per session  {elapsed_ms / audio_s:6.2f} ms per audio-second")


if __name__ == "__main__":
    main()
