"""Turn a finished duplex session into its ``result.json`` record.

Metrics are computed from the session's event stream (the same one written to ``events.jsonl``),
never from runner internals, so a replayed or published run is measured the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.agents.pricing import session_cost
from harness.agents.realtime import Usage
from harness.events import RunEvent
from harness.metrics.duplex_metrics import duplex_metrics
from harness.metrics.latency import latency_metrics
from harness.metrics.speech_agreement import speech_agreement
from harness.metrics.timeline import build_timeline
from harness.results.result_record import ResultRecord

if TYPE_CHECKING:  # the voice session loads only with a voice cell
    from harness.session.duplex_runner import DuplexSessionResult

__all__ = ["record_from_session"]


def record_from_session(
    session: DuplexSessionResult,
    *,
    rep: int,
    model: str,
    wall_s: float,
    sandbox: dict[str, Any] | None = None,
    agent_isolation: str | None = None,
) -> ResultRecord:
    """The full record of one session: published keys, metrics, and the evidence behind the grade."""
    events: Sequence[RunEvent] = session.events.events
    timeline = build_timeline(events)
    adapter = dict(session.adapter_meta)
    provider_model = adapter.get("resolved_model") or adapter.get("model")
    latency = latency_metrics(events, timeline)
    return ResultRecord(
        task_id=session.task_id,
        rep=rep,
        model=model,
        run_id=session.run_id,
        condition=session.condition,
        pts=session.pts,
        components=dict(session.grade.components),
        # Every user turn the session heard (nudges, closings and barge-ins too), as ``latency.user_turns``
        # counts them, not only the flow's scripted beats.
        turns=latency["user_turns"],
        outcome=session.outcome,
        duplex=duplex_metrics(events, timeline),
        latency=latency,
        wall_s=round(wall_s, 1),
        provider_model=str(provider_model) if provider_model else None,
        afa=session.grade.afa,
        failed_predicates=list(session.grade.failed_predicates),
        fields=list(session.grade.fields),
        reason=session.reason,
        sandbox=dict(sandbox or {}),
        agent_isolation=agent_isolation,
        adapter=adapter,
        agent_errors=list(session.agent_errors),
        explain=session.grade.explain(),
        task_version=session.events.task_version,
        tool_path=str(adapter.get("tool_path") or "bridge"),
        privileged=bool(adapter.get("privileged", False)),
        observer=adapter.get("observer"),
        acoustics=adapter.get("acoustics"),
        usage=_usage(session.usage),
        cost_usd=_cost(adapter.get("provider_model") or adapter.get("model"), session),
        speech_agreement=speech_agreement(events),
        agent_failure=session.agent_failure,
    )


def _cost(provider_model: Any, session: DuplexSessionResult) -> float | None:
    """USD from the versioned price table; ``None`` (never 0) for an unpriced model or no usage."""
    if not provider_model:
        return None
    usages = [Usage(**{k: v for k, v in row.items() if k in Usage.__slots__}) for row in session.usage]
    media_ms = session.events.events[-1].media_time_ms if session.events.events else 0
    return session_cost(str(provider_model), usages, session_minutes=media_ms / 60_000)


def _usage(responses: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Token totals over the session's responses, and the per-response rows (``None``: no usage given)."""
    if not responses:
        return None
    totals: dict[str, int] = {}
    for row in responses:
        for key, value in row.items():
            if isinstance(value, int):
                totals[key] = totals.get(key, 0) + value
    return {"responses": len(responses), "totals": totals, "per_response": responses}
