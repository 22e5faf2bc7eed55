"""Responsiveness and effort of one session: response-start latency, time to resolution, tool use.

Response-start latency (RSL) is measured for every agent response that answers a user turn: the
onset of the response's audio minus the end of the user utterance it follows. A response that
starts while that utterance is still playing is an *early start*: counted, and reported as 0 in the
samples, as published. Back-channels are not turns and are never answered. Responses after a tool
result without a new user turn are not samples (the agent is continuing, not answering).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.events import EventType, RunEvent, payload_as
from harness.events.payloads import ToolCall

from .percentiles import median, percentile, rounded
from .timeline import Timeline, UserUtterance, build_timeline, session_end_ms

__all__ = ["RETRIEVAL_TOOL_PREFIXES", "ResponseLatency", "latency_metrics", "response_start_latency"]

#: Tool names starting with one of these are retrieval calls (knowledge-base search).
RETRIEVAL_TOOL_PREFIXES = ("kb_search", "search")


@dataclass(frozen=True)
class ResponseLatency:
    """RSL samples in ms (early starts clamped to 0) and how many responses started early."""

    samples: list[int]
    early_starts: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "median": rounded(median(self.samples)),
            "p50": rounded(percentile(self.samples, 0.5)),
            "p95": rounded(percentile(self.samples, 0.95)),
            "n": len(self.samples),
            "early_starts": self.early_starts,
            "samples": list(self.samples),
        }


def response_start_latency(timeline: Timeline) -> ResponseLatency:
    """One sample per agent response that is the first to start after a user turn began."""
    turns: list[UserUtterance] = [u for u in timeline.user_utterances if "backchannel" not in u.flags]
    samples: list[int] = []
    early = 0
    next_turn = 0
    answered: set[int] = set()
    for response in timeline.agent_responses:  # sorted by onset
        while next_turn < len(turns) and turns[next_turn].interval.start_ms <= response.start_ms:
            next_turn += 1
        preceding = next_turn - 1
        if preceding < 0 or preceding in answered:
            continue
        answered.add(preceding)
        latency = response.start_ms - turns[preceding].interval.end_ms
        if latency < 0:
            early += 1
        samples.append(max(0, latency))
    return ResponseLatency(samples, early)


def latency_metrics(events: Sequence[RunEvent], timeline: Timeline | None = None) -> dict[str, Any]:
    """The ``latency`` object of ``result.json``."""
    timeline = timeline or build_timeline(events)
    first_agent = _first_time(events, EventType.AGENT_AUDIO_START)
    first_user = _first_time(events, EventType.USER_AUDIO_START)
    has_end = any(e.type == EventType.RUN_END for e in events)
    tools = [payload_as(e, ToolCall).tool for e in events if e.type == EventType.TOOL_CALL]
    return {
        "response_start_latency_ms": response_start_latency(timeline).to_dict(),
        "first_agent_audio_ms": first_agent,
        "time_to_resolution_ms": session_end_ms(events) - first_user if has_end and first_user is not None else None,
        "user_speaking_ms": timeline.user_speaking_ms,
        "agent_speaking_ms": timeline.agent_speaking_ms,
        "silence_ratio": timeline.silence_ratio,
        "overlap_ratio": timeline.overlap_ratio,
        "tool_calls": len(tools),
        "retrieval_calls": sum(name.startswith(RETRIEVAL_TOOL_PREFIXES) for name in tools),
        "user_turns": sum(e.type == EventType.USER_AUDIO_START for e in events),
    }


def _first_time(events: Sequence[RunEvent], type: EventType) -> int | None:
    return next((e.media_time_ms for e in events if e.type == type), None)
