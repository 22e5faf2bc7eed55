"""Pooled figures of one campaign: gate pass rates, latency, tool use, floor control, cost.

Definitions follow the published analysis (reference §7.5, §7.6, §7.8): gates are pooled over
every persisted run that carries the gate (error rows and pending WAs carry none), latency
percentiles are linear over the per-run values. Stop latency is reported twice, labelled: ours
(``stop_latency_ms``, measured on the played audio, from ``result.json``) and the published
``isl_ms`` reading (barge-in records with ``agent_yielded``, samples > 10 ms), each only where the
runs carry it. A barge-in that found no floor to yield (the agent silent or playing non-speech,
``agent_yielded: None``, or its queued audio finished on its own) is no failure to yield: it is
left out of the yield column and counted beside it (``n_yield_no_opportunity``), so the column
agrees with each run's ``isl_ms.miss_rate``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.events import EVENTS_FILE, EventType, parse_event_line, payload_as
from harness.events.payloads import DuplexEvent
from harness.grading.report import GATES
from harness.metrics.duplex_metrics import had_floor_to_yield
from harness.metrics.percentiles import percentile

from .run_tree import Campaign, Run

__all__ = ["Aggregates", "YieldRecord", "aggregate", "published_yield_events"]

#: Published §7.8: barge-in record types whose ``agent_yielded`` counts.
YIELD_EVENT_TYPES = frozenset(
    {"MID_SPEECH_CORRECTION", "CANCELLATION_REVOCATION", "USER_BARGE_IN", "URGENT_INTERRUPTION", "INTENT_SWITCH"}
)
#: Published §7.8: stop-latency samples at or below this are discarded.
MIN_ISL_MS = 10.0
#: τ-voice's ``no_yield_window_sec``: a yield later than this does not count for R_Y.
NO_YIELD_WINDOW_MS = 2000.0


@dataclass
class Aggregates:
    runs: int = 0
    pending_runs: int = 0
    gate_total: dict[str, int] = field(default_factory=dict)
    gate_pass: dict[str, int] = field(default_factory=dict)
    rsl_medians: list[float] = field(default_factory=list)
    ttr_s: list[float] = field(default_factory=list)
    tool_calls: list[float] = field(default_factory=list)
    tool_ratio_by_task: dict[str, float] = field(default_factory=dict)
    overlap_ratios: list[float] = field(default_factory=list)
    #: Ours: (yield-expected events, yielded) and stop latencies measured on the audio.
    yield_events: int = 0
    yielded: int = 0
    stop_latency_ms: list[float] = field(default_factory=list)
    #: Published reading (``isl_ms``): events, yielded, samples > 10 ms; and the barge-ins without a floor to yield.
    isl_events: int = 0
    isl_yielded: int = 0
    isl_no_opportunity: int = 0
    isl_ms: list[float] = field(default_factory=list)
    #: τ-voice interaction counts: responses that started while the user spoke, of all answered turns.
    early_starts: int = 0
    answered_turns: int = 0
    yielded_in_window: int = 0
    cost_usd: float = 0.0
    cost_runs: int = 0
    cost_passes: int = 0
    afa: list[float] = field(default_factory=list)
    #: Ours: agent responses with a speech-agreement row, and those whose played words ASR of their
    #: audio did not carry (``speech_agreement.mismatched_responses``), and the runs with any.
    speech_responses: int = 0
    mismatched_responses: int = 0
    mismatched_runs: int = 0

    def gate_rate(self, gate: str) -> float | None:
        total = self.gate_total.get(gate, 0)
        return 100.0 * self.gate_pass.get(gate, 0) / total if total else None

    def figures(self) -> dict[str, Any]:
        """The published ``results.json`` per-model keys of this part, plus ours (labelled)."""
        ratios = list(self.tool_ratio_by_task.values())
        return {
            "runs": self.runs,
            "pending_runs": self.pending_runs,
            "gate_total": {g: self.gate_total.get(g, 0) for g in GATES},
            "gate_pass": {g: self.gate_pass.get(g, 0) for g in GATES},
            "gate_rates": {g: _round(self.gate_rate(g), 1) for g in GATES},
            "rsl_p50": percentile(self.rsl_medians, 0.5),
            "rsl_p95": percentile(self.rsl_medians, 0.95),
            "ttr_p50": percentile(self.ttr_s, 0.5),
            "ttr_p95": percentile(self.ttr_s, 0.95),
            "tool_calls_mean": _mean(self.tool_calls),
            "tool_ratio_mean": _mean(ratios),
            "tool_ratio_p50": percentile(ratios, 0.5),
            "tool_ratio_by_task": self.tool_ratio_by_task,
            "afa_mean": _mean(self.afa),
            "cost_usd_total": round(self.cost_usd, 4) if self.cost_runs else None,
            "cost_runs": self.cost_runs,
            "cost_per_pass_usd": round(self.cost_usd / self.cost_passes, 4) if self.cost_passes else None,
            # τ-voice's panel from our measurements, with the counts behind every rate.
            "interaction": {
                "L_R_p50_ms": percentile(self.rsl_medians, 0.5),
                "L_Y_p50_ms": percentile(self.stop_latency_ms, 0.5),
                "R_Y": self.yielded_in_window / self.yield_events if self.yield_events else None,
                "R_Y_n": self.yield_events,
                "I_A": self.early_starts / self.answered_turns if self.answered_turns else None,
                "I_A_n": self.answered_turns,
            },
            "hearing": {
                "responses": self.speech_responses,
                "mismatched_responses": self.mismatched_responses,
                "mismatched_runs": self.mismatched_runs,
            },
            "duplex": {
                "overlap_pct": _scaled(_mean(self.overlap_ratios)),
                # Published reading: isl_ms of barge-in records.
                "yield_pct": _pct(self.isl_yielded, self.isl_events),
                "stop_p50_ms": percentile(self.isl_ms, 0.5) if self.isl_events else None,
                "stop_p95_ms": percentile(self.isl_ms, 0.95) if self.isl_events else None,
                "n_barge_ins": len(self.isl_ms) if self.isl_events else None,
                "n_yield_events": self.isl_events,
                "n_yield_no_opportunity": self.isl_no_opportunity,
                # Ours: measured on the agent audio as played.
                "yield_pct_audio": _pct(self.yielded, self.yield_events),
                "n_yield_events_audio": self.yield_events,
                "stop_latency_p50_ms": percentile(self.stop_latency_ms, 0.5),
                "stop_latency_p95_ms": percentile(self.stop_latency_ms, 0.95),
                "n_stop_latency": len(self.stop_latency_ms),
            },
        }


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _scaled(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


def _pct(part: int, whole: int) -> float | None:
    return 100.0 * part / whole if whole else None


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class YieldRecord:
    """One barge-in record as the published analysis reads it (§7.8), and whether the agent had a floor to yield."""

    type: str | None
    agent_yielded: bool
    isl_ms: float | None
    opportunity: bool = True


def published_yield_events(run: Run) -> list[YieldRecord] | None:
    """Barge-in records carrying ``agent_yielded`` (published §7.8), or ``None`` when the run has none to read.

    Our ``result.json`` lists them under ``duplex.events`` (with ``isl_ms`` beside our
    ``stop_latency_ms``); otherwise — a published run — they are read from ``events.jsonl``.
    """
    duplex = run.record.duplex or {}
    listed = duplex.get("events")
    if isinstance(listed, list):
        carrying = [
            YieldRecord(e.get("type"), bool(e.get("agent_yielded")), _number(e.get("isl_ms")), _had_floor(e))
            for e in listed if isinstance(e, dict) and "isl_ms" in e and "agent_yielded" in e
        ]
        if carrying or not listed:
            return carrying or None
    session = run.session_dir or (run.rep_dir / run.record.run_id if run.record.run_id else None)
    if session is None or not (session / EVENTS_FILE).is_file():
        return None
    return list(_events_jsonl_yields(session / EVENTS_FILE))


def _events_jsonl_yields(path: Path) -> Iterator[YieldRecord]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if '"agent_yielded"' not in line:  # cheap pre-filter; the event decides
                continue
            event = parse_event_line(line)
            if event is None or event.type != EventType.DUPLEX_EVENT:
                continue
            record = payload_as(event, DuplexEvent)
            if "agent_yielded" in record.model_fields_set:
                yield YieldRecord(record.type, bool(record.agent_yielded), _number(record.isl_ms),
                                  had_floor_to_yield(event.payload))


def _had_floor(listed: dict[str, Any]) -> bool:
    """A ``duplex.events`` entry: its ``correct`` is ``None`` exactly when it was not scored (records
    written before ``agent_yielded: None`` was kept say so only there); else the delivery's own fields."""
    return had_floor_to_yield(listed) and ("correct" not in listed or listed["correct"] is not None)


def _add_floor_control(agg: Aggregates, run: Run) -> None:
    duplex = run.record.duplex or {}
    overlap = _number(duplex.get("overlap_ratio"))
    if overlap is not None:
        agg.overlap_ratios.append(overlap)
    for event in duplex.get("events") or []:
        if not isinstance(event, dict) or event.get("expected_floor_action") != "YIELD" or event.get("correct") is None:
            continue
        agg.yield_events += 1
        if event.get("agent_yielded"):
            agg.yielded += 1
            stop = _number(event.get("stop_latency_ms"))
            if stop is not None:
                agg.stop_latency_ms.append(stop)
                agg.yielded_in_window += stop <= NO_YIELD_WINDOW_MS
    for record in published_yield_events(run) or []:
        if record.type not in YIELD_EVENT_TYPES:
            continue
        if not record.opportunity:
            agg.isl_no_opportunity += 1
            continue
        agg.isl_events += 1
        if record.agent_yielded:
            agg.isl_yielded += 1
            if record.isl_ms is not None and record.isl_ms > MIN_ISL_MS:
                agg.isl_ms.append(record.isl_ms)


def _add_hearing(agg: Aggregates, run: Run) -> None:
    agreement = run.record.speech_agreement or {}
    agg.speech_responses += int(_number(agreement.get("responses")) or 0)
    mismatched = int(_number(agreement.get("mismatched_responses")) or 0)
    agg.mismatched_responses += mismatched
    agg.mismatched_runs += mismatched > 0


def _add_latency(agg: Aggregates, run: Run) -> None:
    latency = run.record.latency or {}
    rsl = latency.get("response_start_latency_ms")
    median = _number(rsl.get("median")) if isinstance(rsl, dict) else None
    if median is not None:
        agg.rsl_medians.append(median)
    if isinstance(rsl, dict):
        agg.answered_turns += int(_number(rsl.get("n")) or 0)
        agg.early_starts += int(_number(rsl.get("early_starts")) or 0)
    ttr = _number(latency.get("time_to_resolution_ms"))
    if ttr is not None:
        agg.ttr_s.append(ttr / 1000.0)
    calls = _number(latency.get("tool_calls"))
    if calls is not None:
        agg.tool_calls.append(calls)


def aggregate(campaign: Campaign, oracle_tool_calls: dict[str, int] | None = None) -> Aggregates:
    """Pool every persisted run of ``campaign``; tool ratios need the tasks' oracle call counts."""
    agg = Aggregates()
    for task_id, reps in sorted(campaign.runs.items()):
        task_calls = []
        for run in reps.values():
            agg.runs += 1
            record = run.record
            agg.pending_runs += record.pending
            for gate in GATES:
                if gate in record.components:
                    agg.gate_total[gate] = agg.gate_total.get(gate, 0) + 1
                    agg.gate_pass[gate] = agg.gate_pass.get(gate, 0) + bool(record.components[gate])
            _add_latency(agg, run)
            _add_floor_control(agg, run)
            _add_hearing(agg, run)
            calls = _number((record.latency or {}).get("tool_calls"))
            if calls is not None:
                task_calls.append(calls)
            if record.afa is not None:
                agg.afa.append(record.afa)
            if record.cost_usd is not None:
                agg.cost_usd += record.cost_usd
                agg.cost_runs += 1
                agg.cost_passes += run.pts == 1
        oracle = (oracle_tool_calls or {}).get(task_id)
        if oracle and task_calls:
            agg.tool_ratio_by_task[task_id] = (sum(task_calls) / len(task_calls)) / oracle
    return agg
