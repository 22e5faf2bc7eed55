"""Latency that knows about tools, per user turn (ours; issue 35 item 4).

A user turn is a user speech segment that is not a back-channel; its window runs from the
segment's end to the next turn's start (or the end of the recording). Per turn:

- ``first_word_ms``: first agent speech onset after the user's end, minus that end (``None``
  when the agent stayed silent through the window);
- ``tool_open_ms``: how long tool calls were open inside the window (their union);
- ``dead_air_in_tool_ms``: of that, how long the agent was silent — the caller hears nothing
  while the agent waits on its tool;
- ``speech_before_tool_ms``: agent speech between the user's end and the turn's first tool call
  (a preamble such as "let me check");
- ``filler_only``: the turn made a tool call and every word the agent said in it came before the
  last tool result: it talked while waiting and never answered.

Per session: medians of first-word latency split by tool / plain turns, total dead air in tools,
the share of tool turns with pre-tool speech, and filler-only turns.
"""

from __future__ import annotations

from typing import Any

from harness.metrics.percentiles import median, rounded
from harness.metrics.timeline import Interval, intersection_ms, merge_intervals

from .trace import Trace

__all__ = ["tool_turns", "tool_latency_summary"]


def _clip(intervals: list[Interval], start: int, end: int) -> list[Interval]:
    return merge_intervals(Interval(max(i.start_ms, start), min(i.end_ms, end)) for i in intervals
                           if i.end_ms > start and i.start_ms < end)


def tool_turns(trace: Trace) -> list[dict[str, Any]]:
    """One record per user turn."""
    turns = [u for u in trace.user if not trace.is_backchannel(u)]
    agent = merge_intervals(trace.agent)
    records = []
    for index, turn in enumerate(turns):
        start = turn.end_ms
        end = turns[index + 1].start_ms if index + 1 < len(turns) else trace.duration_ms
        calls = [c for c in trace.tool_calls if start <= c.start_ms < end]
        spoken = _clip(agent, start, end)
        first = next((a.start_ms for a in agent if a.start_ms >= start), None)
        open_spans = _clip([Interval(c.start_ms, max(c.end_ms, c.start_ms)) for c in calls], start, end)
        tool_open = sum(i.length_ms for i in open_spans)
        before_tool = _clip(spoken, start, calls[0].start_ms) if calls else []
        last_result = max((c.end_ms for c in calls), default=None)
        records.append({
            "user_end_ms": start,
            "tool_calls": len(calls),
            "first_word_ms": first - start if first is not None and first < end else None,
            "tool_open_ms": tool_open,
            "dead_air_in_tool_ms": tool_open - intersection_ms(open_spans, spoken),
            "speech_before_tool_ms": sum(i.length_ms for i in before_tool),
            "filler_only": bool(calls) and bool(spoken) and last_result is not None
            and all(i.end_ms <= last_result for i in spoken),
        })
    return records


def tool_latency_summary(trace: Trace) -> dict[str, Any]:
    turns = tool_turns(trace)
    tool = [t for t in turns if t["tool_calls"]]
    plain = [t for t in turns if not t["tool_calls"]]

    def first_words(rows: list[dict[str, Any]]) -> list[float]:
        return [float(t["first_word_ms"]) for t in rows if t["first_word_ms"] is not None]

    return {
        "turns": len(turns),
        "tool_turns": len(tool),
        "first_word_median_ms_tool_turns": rounded(median(first_words(tool))),
        "first_word_median_ms_plain_turns": rounded(median(first_words(plain))),
        "dead_air_in_tool_ms": sum(t["dead_air_in_tool_ms"] for t in tool),
        "speech_before_tool_rate": rounded(sum(t["speech_before_tool_ms"] > 0 for t in tool) / len(tool)) if tool else None,
        "filler_only_turns": sum(t["filler_only"] for t in tool),
        "per_turn": turns,
    }
