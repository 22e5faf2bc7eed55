"""τ-Voice's interaction panel (sierra-research/tau2-bench, ``src/tau2/metrics/voice_interaction_metrics.py``,
``docs/interaction-metrics.md``), recomputed from audio.

The source reads speech per 200 ms tick from its simulator; here a tick "contains speech" when a
speech interval of that channel covers any part of it. Segments are runs of speech ticks. Then, as
the source does:

- **L_R / R_R**: for each user segment that is not a back-channel and after which the agent is
  silent (the tick after it), the first agent segment starting at or after its end tick answers it
  unless a later valid user segment starts first; latency = tick gap × 0.2 s.
- **L_Y / R_Y**: a user segment starting on a tick where the agent speaks is a real interruption
  (back-channels, then vocal tics, then non-directed speech take priority; only back-channels are
  known here). The agent yields at the first tick in [start, start + 10) where it is silent;
  latency = (yield tick − start) × 0.2 s; no silent tick in the window is a ``no_yield``.
- **I_A**: agent segments starting on a tick where the user speaks, per response-eligible user turn.
- **S_BC**: a back-channel during agent speech is handled correctly when the agent does not fall
  silent within 1.0 s (5 ticks).

Rates backed by fewer than 10 events are marked ``hidden`` as the leaderboard hides them.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean
from typing import Any

from harness.metrics.timeline import Interval

from .trace import Trace

__all__ = ["TICK_MS", "tau_voice_metrics"]

TICK_MS = 200
NO_YIELD_WINDOW_TICKS = 10  # int(2.0 s / 0.2 s)
BACKCHANNEL_WINDOW_TICKS = 5  # int(1.0 s / 0.2 s)
MIN_EVENTS_SHOWN = 10


@dataclass
class _Segment:
    start: int  # first tick
    end: int  # exclusive
    other_at_start: bool
    other_at_end: bool
    backchannel: bool = False


def _ticks(intervals: list[Interval], n_ticks: int) -> list[bool]:
    speech = [False] * n_ticks
    for interval in intervals:
        for tick in range(interval.start_ms // TICK_MS, min(n_ticks, -(-interval.end_ms // TICK_MS))):
            speech[tick] = True
    return speech


def _segments(mine: list[bool], other: list[bool]) -> list[_Segment]:
    segments: list[_Segment] = []
    tick = 0
    while tick < len(mine):
        if not mine[tick]:
            tick += 1
            continue
        start = tick
        while tick < len(mine) and mine[tick]:
            tick += 1
        segments.append(_Segment(start, tick, other[start], tick < len(other) and other[tick]))
    return segments


def _drop_end_artifact(user: list[bool]) -> list[bool]:
    """The source drops a one-tick user segment at the very end (its ###STOP### artifact)."""
    if len(user) >= 2 and user[-1] and not user[-2]:
        return [*user[:-1], False]
    return user


def _transitions(users: list[_Segment], agents: list[_Segment]) -> list[float | None]:
    """One entry per response-eligible user turn: latency in s, or ``None`` for ``no_response``."""
    valid = [u for u in users if not u.backchannel and not u.other_at_end]
    outcomes: list[float | None] = []
    for index, turn in enumerate(valid):
        answer = next((a for a in agents if a.start >= turn.end), None)
        again = next((u for u in valid[index + 1 :] if u.start >= turn.end), None)
        if answer is not None and (again is None or answer.start <= again.start):
            outcomes.append((answer.start - turn.end) * TICK_MS / 1000)
        elif again is not None:
            outcomes.append(None)
    return outcomes


def _first_silent(agent: list[bool], start: int, window: int) -> int | None:
    return next((t for t in range(start, min(start + window, len(agent))) if not agent[t]), None)


def _rate(part: int, whole: int) -> dict[str, Any]:
    return {"value": part / whole if whole else None, "n": whole, "hidden": whole < MIN_EVENTS_SHOWN}


def tau_voice_metrics(trace: Trace) -> dict[str, Any]:
    """The panel's fields (seconds and fractions, as the source reports them) with their counts."""
    n_ticks = -(-trace.duration_ms // TICK_MS)
    user = _drop_end_artifact(_ticks(trace.user, n_ticks))
    agent = _ticks(trace.agent, n_ticks)
    users = _segments(user, agent)
    for segment in users:
        span = Interval(segment.start * TICK_MS, segment.end * TICK_MS)
        segment.backchannel = trace.is_backchannel(span)
    agents = _segments(agent, user)

    transitions = _transitions(users, agents)
    responded = [t for t in transitions if t is not None]
    yields: list[float] = []
    no_yield = backchannel_correct = backchannel_total = 0
    for segment in users:
        if not segment.other_at_start:
            continue
        window = BACKCHANNEL_WINDOW_TICKS if segment.backchannel else NO_YIELD_WINDOW_TICKS
        stop = _first_silent(agent, segment.start, window)
        if segment.backchannel:
            backchannel_total += 1
            backchannel_correct += stop is None
        elif stop is None:
            no_yield += 1
        else:
            # The source scores ``(yield_tick - start) * tick if yield_tick else 0.0``.
            yields.append((stop - segment.start) * TICK_MS / 1000 if stop else 0.0)
    agent_interrupts = sum(a.other_at_start for a in agents)
    response_total = len(transitions)
    return {
        "response_latency_mean": {"value": fmean(responded) if responded else None, "n": len(responded),
                                  "hidden": len(responded) < MIN_EVENTS_SHOWN, "unit": "s"},
        "yield_latency_mean": {"value": fmean(yields) if yields else None, "n": len(yields),
                               "hidden": len(yields) < MIN_EVENTS_SHOWN, "unit": "s"},
        "response_rate": _rate(len(responded), response_total),
        "yield_rate": _rate(len(yields), len(yields) + no_yield),
        "agent_interruption_rate": _rate(agent_interrupts, response_total),
        "selectivity_backchannel": _rate(backchannel_correct, backchannel_total),
        "counts": {"response_total": response_total, "yield_total": len(yields) + no_yield,
                   "backchannel_total": backchannel_total, "agent_interrupts_count": agent_interrupts,
                   "ticks": n_ticks},
    }
