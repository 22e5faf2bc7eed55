"""Full-Duplex-Bench v1 and v1.5 timing (DanielLin94144/Full-Duplex-Bench, ``v1_v1.5/evaluation/``),
recomputed from audio.

**v1.5** (``get_timing.py``): Silero VAD on each channel at 16 kHz with silero-vad's default
``get_speech_timestamps`` parameters (threshold 0.5, min speech 250 ms, min silence 100 ms, pad
30 ms); user segments whose gap is ≤ 0.6 s and model segments whose gap is ≤ 0.5 s are merged (the
constants; the comments beside them say 300 ms and 50 ms). Stop latency intervals are the overlaps
``[max(starts), min(ends)]`` of a user and a model segment (the shortest kept per end time);
response intervals run from a user segment's end to the next model start strictly after it (the
latest user end kept per model start). The source writes the intervals; their mean length is the
figure reported here. Silero is the v6 ONNX model that faster-whisper ships, run on onnxruntime
(no torch, no network).

**v1** (``eval_smooth_turn_taking.py``, ``eval_user_interruption.py``): the model's words with ASR
word timestamps (the source: parakeet-tdt / CrisperWhisper; here faster-whisper ``tiny.en``, the
model the project ships, with ``word_timestamps``, decoding speech only). Per user turn: no words, or words spanning
< 1 s that number ≤ 3, is no take-over (TOR 0); otherwise TOR 1 and latency = first word start −
user end, a negative latency counted as 0. For a smooth turn the words considered start between
the user turn's start and the next user turn; for an interruption (the user turn starts while
the agent speaks) only words after the interruption's end count, as the source crops there.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

import numpy as np

from .trace import Trace

__all__ = ["agent_words", "fdb_v1", "fdb_v15", "merge_gaps", "silero_segments"]

SR = 16_000
USER_MERGE_GAP_S = 0.6
MODEL_MERGE_GAP_S = 0.5
TURN_DURATION_S = 1.0
TURN_WORDS = 3

Span = tuple[float, float]


def silero_segments(audio_16k: np.ndarray) -> list[Span]:
    """Speech spans (s) by Silero VAD with silero-vad's own defaults."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    options = VadOptions(threshold=0.5, min_speech_duration_ms=250, min_silence_duration_ms=100, speech_pad_ms=30)
    return [(t["start"] / SR, t["end"] / SR) for t in get_speech_timestamps(audio_16k, options, sampling_rate=SR)]


def merge_gaps(spans: Sequence[Span], gap_s: float) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start - merged[-1][1] <= gap_s:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _overlaps(user: list[Span], model: list[Span]) -> list[Span]:
    raw: list[Span] = []
    i = j = 0
    while i < len(user) and j < len(model):
        start, end = max(user[i][0], model[j][0]), min(user[i][1], model[j][1])
        if end > start:
            raw.append((start, end))
        if user[i][1] < model[j][1]:
            i += 1
        else:
            j += 1
    shortest: dict[int, Span] = {}
    for start, end in raw:
        key = round(end * 1000)
        if key not in shortest or end - start < shortest[key][1] - shortest[key][0]:
            shortest[key] = (start, end)
    return sorted(shortest.values(), key=lambda span: span[1])


def _response_gaps(user: list[Span], model: list[Span]) -> list[Span]:
    latest: dict[int, Span] = {}
    for _, user_end in user:
        following = next((start for start, _ in model if start > user_end), None)
        if following is None:
            continue
        key = round(following * 1000)
        if key not in latest or user_end > latest[key][0]:
            latest[key] = (user_end, following)
    return [latest[key] for key in sorted(latest)]


def _mean_length(spans: list[Span]) -> float | None:
    return fmean(end - start for start, end in spans) if spans else None


def fdb_v15(trace: Trace) -> dict[str, Any]:
    """Stop and response latency (s): means of the source's intervals, and the intervals."""
    user = merge_gaps(silero_segments(trace.pcm_16k("user")), USER_MERGE_GAP_S)
    model = merge_gaps(silero_segments(trace.pcm_16k("agent")), MODEL_MERGE_GAP_S)
    stops, responses = _overlaps(user, model), _response_gaps(user, model)
    return {
        "stop_latency_mean": _mean_length(stops), "n_stop": len(stops),
        "response_latency_mean": _mean_length(responses), "n_response": len(responses),
        "latency_stop_list": [[round(s, 3), round(e, 3)] for s, e in stops],
        "latency_resp_list": [[round(s, 3), round(e, 3)] for s, e in responses],
        "user_segments": len(user), "model_segments": len(model),
    }


def _take_over(words: list[Span], user_end_s: float) -> tuple[int, float | None]:
    if not words:
        return 0, None
    duration = words[-1][1] - words[0][0]
    if duration < TURN_DURATION_S and len(words) <= TURN_WORDS:
        return 0, None
    return 1, max(0.0, words[0][0] - user_end_s)


def fdb_v1(trace: Trace, words: list[Span]) -> dict[str, Any]:
    """Take-over rate and latency (s) for smooth turns and for user interruptions, from ``words``
    (the agent's word spans in seconds)."""
    turns = [u for u in trace.user if not trace.is_backchannel(u)]
    kinds: dict[str, list[tuple[int, float | None]]] = {"smooth": [], "interruption": []}
    for index, turn in enumerate(turns):
        interrupted = any(a.start_ms <= turn.start_ms < a.end_ms for a in trace.agent)
        window_start = (turn.end_ms if interrupted else turn.start_ms) / 1000
        window_end = turns[index + 1].start_ms / 1000 if index + 1 < len(turns) else float("inf")
        chosen = [w for w in words if window_start <= w[0] < window_end]
        kinds["interruption" if interrupted else "smooth"].append(_take_over(chosen, turn.end_ms / 1000))
    result: dict[str, Any] = {}
    for kind, outcomes in kinds.items():
        latencies = [latency for tor, latency in outcomes if tor and latency is not None]
        result[f"{kind}_tor"] = fmean(tor for tor, _ in outcomes) if outcomes else None
        result[f"{kind}_latency_mean"] = fmean(latencies) if latencies else None
        result[f"n_{kind}"] = len(outcomes)
    result["n_words"] = len(words)
    return result


def agent_words(trace: Trace) -> list[Span]:
    """The agent channel's words (s) by faster-whisper ``tiny.en`` with word timestamps, speech only."""
    from harness.audio.agent_asr import WhisperRecognizer

    return WhisperRecognizer().words_sync(trace.pcm_16k("agent"))
