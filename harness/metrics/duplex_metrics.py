"""Floor control in one session: did the agent yield when the user barged in, and how fast.

Computed from the runner's ``DUPLEX_EVENT`` *delivery* records (the ones carrying
``expected_floor_action``; firing records are ignored). A record whose plan reached the agent while
it was not speaking — silent (``agent_speaking_at_onset: false``) or playing audio that is not
speech (``yield_opportunity: false``, ``no_opportunity`` says which) — is listed and counted as
``n_no_opportunity``, but not scored: there was no floor to yield, and silence proves no yield. A
record whose agent simply ran out of queued audio within the window (``floor_outcome: finished``)
made no floor decision either: listed, counted as ``n_finished``, not scored. For a ``YIELD`` plan
the agent is right when it yielded in time; for ``CONTINUE`` (a back-channel) when it did not.

OCCR and IRA need the ``task_critical`` / ``retained_overlap`` judgements the reference defines
but never produces; they are ``None`` unless records carry them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.events import EventType, RunEvent

from .percentiles import median, percentile, percentile_by_index, rounded
from .timeline import Timeline, build_timeline

__all__ = ["CORRECTION_LIKE_TYPES", "delivery_records", "duplex_metrics", "had_floor_to_yield"]

#: Duplex event types whose content must survive the overlap (OCCR / IRA population).
CORRECTION_LIKE_TYPES = frozenset(
    {"MID_SPEECH_CORRECTION", "DELAYED_CORRECTION", "CANCELLATION_REVOCATION", "INTENT_SWITCH", "CONCURRENT_CRITICAL_INFO"}
)


def delivery_records(events: Sequence[RunEvent]) -> list[dict[str, Any]]:
    """Payloads of the ``DUPLEX_EVENT`` records written when a duplex plan was delivered."""
    return [
        e.payload for e in events if e.type == EventType.DUPLEX_EVENT and "expected_floor_action" in e.payload
    ]


def had_floor_to_yield(record: Mapping[str, Any]) -> bool:
    """Whether a delivery met the agent holding the floor, so that yielding or not was its decision.

    Not when it met silence or non-speech (``yield_opportunity: false``, ``agent_yielded: None``), nor
    when the agent's queued audio simply ran out (``floor_outcome: finished``). The one definition of
    a scored delivery: the per-run metrics and the pooled published yield column both use it.
    """
    if record.get("yield_opportunity") is False or _finished(record) or record.get("no_opportunity"):
        return False
    if "agent_yielded" in record and record["agent_yielded"] is None:
        return False
    return record.get("agent_speaking_at_onset", True) is not False



def _finished(record: Mapping[str, Any]) -> bool:
    """Its queued audio ran out within the window: it neither yielded nor kept the floor."""
    return record.get("floor_outcome") == "finished"


def _yielded(record: dict[str, Any]) -> bool:
    return bool(record.get("agent_yielded"))


def _correct(record: dict[str, Any]) -> bool:
    return _yielded(record) == (record["expected_floor_action"] == "YIELD")


def _ratio(part: int, whole: int) -> float | None:
    return rounded(part / whole) if whole else None


def _stop_samples(yield_expected: list[dict[str, Any]], key: str) -> list[float]:
    return [float(r[key]) for r in yield_expected if _yielded(r) and r.get(key) is not None]


def _stop_latency(yield_expected: list[dict[str, Any]], no_opportunity: int) -> dict[str, Any]:
    """Ours: stop latency measured on the played audio, linear percentiles (as the analysis uses).

    ``n_no_opportunity``: barge-ins that met no speech to stop (beside ``n_expected``, never in it).
    """
    samples = _stop_samples(yield_expected, "stop_latency_ms")
    missed = sum(not _yielded(r) for r in yield_expected)
    return {
        "median": rounded(median(samples)),
        "p90": rounded(percentile(samples, 0.90)),
        "p95": rounded(percentile(samples, 0.95)),
        "miss_rate": _ratio(missed, len(yield_expected)),
        "n": len(samples),
        "n_expected": len(yield_expected),
        "n_no_opportunity": no_opportunity,
    }


def _isl(yield_expected: list[dict[str, Any]]) -> dict[str, Any]:
    """The published ``isl_ms`` block, with the published index rule for p90/p95 (§7.7)."""
    samples = _stop_samples(yield_expected, "isl_ms") or _stop_samples(yield_expected, "stop_latency_ms")
    if not yield_expected:
        return {}
    return {
        "median": rounded(median(samples)),
        "p90": rounded(percentile_by_index(samples, 0.90)),
        "p95": rounded(percentile_by_index(samples, 0.95)),
        "miss_rate": _ratio(sum(not _yielded(r) for r in yield_expected), len(yield_expected)),
        "n": len(samples),
    }


def _per_event(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "event_id": record.get("event_id"),
        "type": record.get("type"),
        "expected_floor_action": record["expected_floor_action"],
        "agent_speaking_at_onset": record.get("agent_speaking_at_onset", True),
        # ``None`` (no floor to yield) stays ``None``: it is no failure to yield (issue 34).
        "agent_yielded": None if record.get("agent_yielded") is None and not had_floor_to_yield(record)
        else _yielded(record),
        "stop_latency_ms": record.get("stop_latency_ms"),
        "isl_ms": record.get("isl_ms", record.get("stop_latency_ms")),
        "overlap_ms": record.get("overlap_ms"),
        "correct": _correct(record) if had_floor_to_yield(record) else None,
        **({"no_opportunity": record["no_opportunity"]} if record.get("no_opportunity") else {}),
        **({"floor_outcome": record["floor_outcome"]} if record.get("floor_outcome") else {}),
    }


def _critical_uptake(records: list[dict[str, Any]]) -> tuple[float | None, float | None]:
    """(OCCR, IRA) over task-critical correction-like records; ``None`` when none is marked."""
    critical = [r for r in records if r.get("type") in CORRECTION_LIKE_TYPES and r.get("task_critical")]
    retained = [r for r in critical if r.get("retained_overlap")]
    return _ratio(len(retained), len(critical)), _ratio(sum(_yielded(r) for r in retained), len(critical))


def duplex_metrics(events: Sequence[RunEvent], timeline: Timeline | None = None) -> dict[str, Any]:
    """The ``duplex`` object of ``result.json``."""
    timeline = timeline or build_timeline(events)
    records = delivery_records(events)
    scored = [r for r in records if had_floor_to_yield(r)]
    yield_expected = [r for r in scored if r["expected_floor_action"] == "YIELD"]
    no_yield_opportunity = sum(
        not had_floor_to_yield(r) and not _finished(r) and r["expected_floor_action"] == "YIELD" for r in records
    )
    continue_expected = [r for r in scored if r["expected_floor_action"] == "CONTINUE"]
    occr, ira = _critical_uptake(scored)
    return {
        "n_events": len(records),
        "n_scored": len(scored),
        "n_no_opportunity": sum(not had_floor_to_yield(r) and not _finished(r) for r in records),
        "n_finished": sum(_finished(r) for r in records),
        "events": [_per_event(r) for r in records],
        "fda": _ratio(sum(_correct(r) for r in scored), len(scored)),
        "stop_latency_ms": _stop_latency(yield_expected, no_yield_opportunity),
        "isl_ms": _isl(yield_expected),
        "fyr": _ratio(sum(_yielded(r) for r in continue_expected), len(continue_expected)),
        "n_yield_expected": len(yield_expected),
        "n_continue_expected": len(continue_expected),
        "occr": occr,
        "ira": ira,
        "overlap_ms": timeline.overlap_ms,
        "overlap_ratio": timeline.overlap_ratio,
    }
