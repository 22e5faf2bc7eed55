"""Ours (docs/duplex.md, docs/results.md): response-start latency and stop latency.

On one of our sessions the figures are computed from its events by the functions that wrote
``result.json`` (so they equal it). On any recording they are computed from the audio with the
same rules: RSL = agent segment onset − end of the user segment it is the first to follow (early
starts as 0); a non-back-channel user onset inside an agent segment expects a yield, and the agent
yielded when that segment ends within ``max_stop_latency_ms`` (default 1500) of the onset — audio
cannot tell a yield from speech that simply ran out, which our runs tell apart.
"""

from __future__ import annotations

from typing import Any

from harness.metrics.duplex_metrics import duplex_metrics
from harness.metrics.latency import latency_metrics, response_start_latency
from harness.metrics.percentiles import median, percentile, rounded
from harness.metrics.timeline import Timeline, UserUtterance

from .trace import Trace

__all__ = ["DEFAULT_MAX_STOP_LATENCY_MS", "ours_from_audio", "ours_from_events"]

DEFAULT_MAX_STOP_LATENCY_MS = 1500


def _summary(rsl: dict[str, Any], stop: dict[str, Any], overlap_ratio: float | None) -> dict[str, Any]:
    return {
        "rsl_median_ms": rsl["median"], "rsl_p95_ms": rsl["p95"], "rsl_n": rsl["n"], "early_starts": rsl["early_starts"],
        "stop_latency_median_ms": stop.get("median"), "stop_latency_n": stop.get("n", 0),
        "yield_rate": None if stop.get("miss_rate") is None else rounded(1 - stop["miss_rate"]),
        "yield_expected": stop.get("n_expected", 0), "overlap_ratio": overlap_ratio,
    }


def ours_from_events(trace: Trace) -> dict[str, Any]:
    """What ``result.json`` holds, recomputed from the session's events."""
    if trace.events is None:
        raise ValueError("ours_from_events needs a session's events")
    latency = latency_metrics(trace.events)
    duplex = duplex_metrics(trace.events)
    return _summary(latency["response_start_latency_ms"], duplex["stop_latency_ms"], duplex["overlap_ratio"])


def ours_from_audio(trace: Trace, max_stop_latency_ms: int = DEFAULT_MAX_STOP_LATENCY_MS) -> dict[str, Any]:
    utterances = [UserUtterance(u, frozenset({"backchannel"}) if trace.is_backchannel(u) else frozenset()) for u in trace.user]
    timeline = Timeline(utterances, list(trace.agent), trace.duration_ms)
    rsl = response_start_latency(timeline).to_dict()
    stops: list[float] = []
    expected = 0
    for utterance in utterances:
        if utterance.flags:
            continue
        onset = utterance.interval.start_ms
        speaking = next((a for a in trace.agent if a.start_ms <= onset < a.end_ms), None)
        if speaking is None:
            continue
        expected += 1
        if speaking.end_ms - onset <= max_stop_latency_ms:
            stops.append(float(speaking.end_ms - onset))
    stop = {"median": rounded(median(stops)), "p95": rounded(percentile(stops, 0.95)), "n": len(stops),
            "n_expected": expected, "miss_rate": rounded((expected - len(stops)) / expected) if expected else None}
    return _summary(rsl, stop, timeline.overlap_ratio)
