"""EVA's turn-taking metric (ServiceNow/eva, ``src/eva/metrics/experience/turn_taking.py`` at
6ff857c, ``docs/metrics/turn_taking.md``, ``docs/metrics/response_speed.md``), recomputed from audio.

EVA reads per-turn audio timestamps from its user simulator; here turns are cut from the speech
intervals: a user segment opens a new turn when the agent has started speaking since the current
turn's first user segment (agent speech before any user speech is the greeting, turn 0, which EVA
excludes). Agent segments belong to the turn in which they start. Back-channels the session marked
are not turns. A turn holds a tool call when one was made between its first user word and the
next turn's.

Per turn, as the source scores it:

- a **user-interrupted** turn (its first user segment starts while the previous turn's agent audio
  plays): ``yield_ms`` = end of the previous turn's last agent segment − this turn's first user
  start (≥ 0), scored ``max(0, 1 − yield_ms / 2000)``;
- an **assistant-interrupted** turn (an agent segment starts while a user segment of the turn
  plays): overlap = Σ pairwise intersections, scored ``0.5·max(0, 1 − overlap / 2000)``, and the
  min with the post-interrupt latency score when the agent spoke again after the user finished;
- both: the min; otherwise **latency** = first agent start − last user end, scored piecewise
  linearly: 0 at ≤ −500 ms, rising to 1 at 500 ms, 1 up to 2000 ms (4000 ms on tool turns),
  falling to 0 at 5000 ms (7000 ms).

``score`` is the mean per-turn score. Early / on-time / late use 200 ms and 4000 ms (6000 ms on
tool turns); p50/p90 take ``sorted[min(n−1, int(p·n))]`` as the source does.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from harness.metrics.timeline import Interval

from .trace import Trace

__all__ = ["EvaTurn", "eva_metrics", "eva_turns", "latency_score"]

HARD_EARLY_MS = -500.0
SWEET_LOW_MS = 500.0
SWEET_HIGH_MS, SWEET_HIGH_TOOL_MS = 2000.0, 4000.0
HARD_LATE_MS, HARD_LATE_TOOL_MS = 5000.0, 7000.0
OVERLAP_HARD_MS = 2000.0
AGENT_INTERRUPT_MAX_SCORE = 0.5
YIELD_HARD_MS = 2000.0
EARLY_MS, LATE_MS, LATE_TOOL_MS = 200.0, 4000.0, 6000.0


@dataclass
class EvaTurn:
    index: int
    user: list[Interval] = field(default_factory=list)
    agent: list[Interval] = field(default_factory=list)
    has_tool_call: bool = False


def latency_score(latency_ms: float, has_tool_call: bool = False) -> float:
    high = SWEET_HIGH_TOOL_MS if has_tool_call else SWEET_HIGH_MS
    late = HARD_LATE_TOOL_MS if has_tool_call else HARD_LATE_MS
    if latency_ms <= HARD_EARLY_MS or latency_ms >= late:
        return 0.0
    if latency_ms < SWEET_LOW_MS:
        return (latency_ms - HARD_EARLY_MS) / (SWEET_LOW_MS - HARD_EARLY_MS)
    if latency_ms <= high:
        return 1.0
    return (late - latency_ms) / (late - high)


def eva_turns(trace: Trace) -> list[EvaTurn]:
    """Turns 0..n cut from the trace (turn 0: agent speech before the user's first words)."""
    users = [u for u in trace.user if not trace.is_backchannel(u)]
    turns = [EvaTurn(0)]
    items = sorted([(u.start_ms, 0, u) for u in users] + [(a.start_ms, 1, a) for a in trace.agent],
                   key=lambda item: (item[0], item[1]))
    for _, is_agent, interval in items:
        current = turns[-1]
        if is_agent:
            current.agent.append(interval)
        elif current.index == 0 or current.agent:
            turns.append(EvaTurn(len(turns), [interval]))
        else:
            current.user.append(interval)
    for index, turn in enumerate(turns):
        if not turn.user:
            continue
        end = turns[index + 1].user[0].start_ms if index + 1 < len(turns) else trace.duration_ms + 1
        turn.has_tool_call = any(turn.user[0].start_ms <= t.start_ms < end for t in trace.tool_calls)
    return turns


def _overlap_ms(turn: EvaTurn) -> float:
    return float(sum(max(0, min(u.end_ms, a.end_ms) - max(u.start_ms, a.start_ms)) for u in turn.user for a in turn.agent))


def _post_interrupt_ms(turn: EvaTurn) -> float | None:
    user_end = turn.user[-1].end_ms
    if any(a.start_ms <= user_end < a.end_ms for a in turn.agent):
        return None
    later = [a.start_ms for a in turn.agent if a.start_ms > user_end]
    return float(min(later) - user_end) if later else None


def _evaluate(turn: EvaTurn, previous: EvaTurn) -> dict[str, Any]:
    user_interrupted = bool(previous.agent) and any(
        a.start_ms <= turn.user[0].start_ms < a.end_ms for a in previous.agent)
    agent_interrupted = any(u.start_ms < a.start_ms < u.end_ms for a in turn.agent for u in turn.user)
    evidence: dict[str, Any] = {"turn": turn.index, "has_tool_call": turn.has_tool_call,
                                "user_interrupted": user_interrupted, "agent_interrupted": agent_interrupted}
    scores: list[float] = []
    if agent_interrupted:
        overlap = _overlap_ms(turn)
        score = AGENT_INTERRUPT_MAX_SCORE * max(0.0, 1.0 - overlap / OVERLAP_HARD_MS)
        evidence.update(overlap_ms=overlap, overlap_score=score)
        post = _post_interrupt_ms(turn)
        if post is not None:
            evidence.update(post_interrupt_latency_ms=post, post_interrupt_latency_score=latency_score(post, turn.has_tool_call))
            score = min(score, evidence["post_interrupt_latency_score"])
        scores.append(score)
    if user_interrupted:
        yield_ms = max(0.0, float(previous.agent[-1].end_ms - turn.user[0].start_ms))
        evidence.update(yield_ms=yield_ms, yield_score=max(0.0, 1.0 - yield_ms / YIELD_HARD_MS))
        scores.append(evidence["yield_score"])
    latency = float(turn.agent[0].start_ms - turn.user[-1].end_ms)
    evidence["latency_ms"] = latency
    if not scores:
        scores.append(latency_score(latency, turn.has_tool_call))
        evidence["latency_score"] = scores[0]
    evidence["score"] = min(scores)
    return evidence


def _index_pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def _mean(values: list[float]) -> float | None:
    return statistics.mean(values) if values else None


def eva_metrics(trace: Trace) -> dict[str, Any]:
    """``score`` (mean per-turn score), the source's flat sub-metrics and the per-turn evidence."""
    turns = eva_turns(trace)
    per_turn = [_evaluate(t, turns[t.index - 1]) for t in turns[1:] if t.user and t.agent]
    latencies = [(e["latency_ms"], e["has_tool_call"]) for e in per_turn]
    n = len(latencies)
    early = sum(ms < EARLY_MS for ms, _ in latencies)
    late = sum(ms >= (LATE_TOOL_MS if tool else LATE_MS) for ms, tool in latencies)
    agent_turns = [e for e in per_turn if e["agent_interrupted"]]
    user_turns = [e for e in per_turn if e["user_interrupted"]]
    return {
        "score": _mean([e["score"] for e in per_turn]),
        "mean_latency_ms": _mean([ms for ms, _ in latencies]),
        "p50_latency_ms": _index_pct([ms for ms, _ in latencies], 0.5) if n else None,
        "p90_latency_ms": _index_pct([ms for ms, _ in latencies], 0.9) if n else None,
        "on_time_rate": (n - early - late) / n if n else None,
        "early_rate": early / n if n else None,
        "late_rate": late / n if n else None,
        "agent_interruption.rate": len(agent_turns) / n if n else None,
        "agent_interruption.mean_overlap_ms": _mean([e["overlap_ms"] for e in agent_turns]),
        "user_interruption.rate": len(user_turns) / n if n else None,
        "user_interruption.mean_yield_ms": _mean([e["yield_ms"] for e in user_turns]),
        "user_interruption.mean_yield_score": _mean([e["yield_score"] for e in user_turns]),
        "n_turns": n,
        "per_turn": per_turn,
    }
