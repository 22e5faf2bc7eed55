"""Word error rate and real-time factor of the local recognizers on the demo suite's agent lines.

Usage: python benchmarks/bench_asr.py [--max-lines N] [--recognizers whisper,pocketsphinx]
Every reference-policy line of every demo task is spoken with the harness's agent voice
(``harness/audio/agent_voice.py``) and transcribed by each recognizer. Reference and hypothesis are normalised the
same way as the hearing check does (``harness/audio/spoken_words.py``: lower case, no punctuation,
numbers as words, ordinals as cardinals) before the word-level edit distance.
Real-time factor = decode seconds / audio seconds (model load reported separately).
"""

from __future__ import annotations

import argparse
import asyncio
import time

import yaml

from harness.audio.agent_asr import PocketsphinxRecognizer, Recognizer, WhisperRecognizer
from harness.audio.agent_voice import AGENT_VOICE, synthesize_agent_lines
from harness.audio.frames import SAMPLE_RATE
from harness.audio.spoken_words import normalise
from harness.metrics.percentiles import percentile
from harness.tasks.dataset import BUNDLED_DATA, resolve_data

RECOGNIZERS = {"whisper": WhisperRecognizer, "pocketsphinx": PocketsphinxRecognizer}


def word_errors(reference: list[str], hypothesis: list[str]) -> int:
    row = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        previous, row[0] = row[0], i
        for j, hyp in enumerate(hypothesis, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ref != hyp))
    return row[-1]


def agent_lines(max_lines: int | None) -> list[str]:
    lines: list[str] = []
    for task_dir in resolve_data(BUNDLED_DATA).task_dirs:
        policy = yaml.safe_load((task_dir / "reference" / "policy.yaml").read_text(encoding="utf-8"))
        texts = [turn["text"] for turn in policy["turns"] if turn.get("text")]
        lines.extend(texts[:max_lines])
    return lines


def measure(name: str, recognizer: Recognizer, clips: dict, lines: list[str]) -> None:
    start = time.perf_counter()
    recognizer.transcribe_sync(clips[lines[0]].pcm[: SAMPLE_RATE // 2])  # loads the model
    load_s = time.perf_counter() - start
    errors = words = 0
    factors = []
    worst = (0.0, "", "")
    for text in lines:
        clip = clips[text]
        start = time.perf_counter()
        heard = recognizer.transcribe_sync(clip.pcm)
        factors.append((time.perf_counter() - start) / (clip.num_samples / SAMPLE_RATE))
        reference = normalise(text)
        line_errors = word_errors(reference, normalise(heard))
        errors += line_errors
        words += len(reference)
        worst = max(worst, (line_errors / max(1, len(reference)), text, heard))
    print(
        f"{name:13s} WER {100 * errors / words:5.1f} % ({errors}/{words} words)  "
        f"RTF p50 {percentile(factors, 0.5):.3f} p95 {percentile(factors, 0.95):.3f}  load {load_s:.2f} s"
    )
    print(f"{'':13s} worst line ({100 * worst[0]:.0f} %): {worst[1]!r} -> {worst[2]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-lines", type=int, default=None, help="Lines per task (default: all).")
    parser.add_argument("--recognizers", default="whisper,pocketsphinx")
    args = parser.parse_args()
    lines = agent_lines(args.max_lines)
    clips = asyncio.run(synthesize_agent_lines(lines))
    audio_s = sum(c.num_samples for c in clips.values()) / SAMPLE_RATE
    print(f"{len(lines)} agent lines, {audio_s:.0f} s of {AGENT_VOICE} speech")
    for name in args.recognizers.split(","):
        measure(name, RECOGNIZERS[name](), clips, lines)


if __name__ == "__main__":
    main()
