"""Everything ``apex-voice results`` reports, computed once from the campaigns (and the tasks, if given).

The tables and plots only format what is here, so ``results.md``, ``results.json``, the CSVs and
the PNGs can never disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from harness import __version__
from harness.grading.judge import FieldJudge
from harness.grading.report import GATES

from .aggregates import Aggregates, aggregate
from .bootstrap import bootstrap_ci, ci_withheld, ratio_ci
from .committed_writes import reference_reading
from .compare import PairedComparison, compare
from .denominator import PENDING
from .grading_inputs import GradingInputs
from .leaderboard import Reliability, rank, reliability
from .noise_floor import NoiseFloor, PairNoise, noise_floor, pair_noise
from .run_tree import Campaign
from .slices import FieldOutcomes, correction_uptake, field_outcomes, slice_rows
from .task_facts import TaskFacts

__all__ = ["Analysis", "ModelSummary", "analyse"]


@dataclass
class ModelSummary:
    campaign: Campaign
    reliability: Reliability
    aggregates: Aggregates
    #: 95 % task-bootstrap intervals, in percent (all ``None`` when ``ci_note`` says why not).
    ci: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    ci_note: str | None = None
    uptake: dict[str, Any] | None = None
    outcomes: dict[str, list[FieldOutcomes]] | None = None
    #: Runs with refused writes after COMMITTED, and the reliability under the reference's reading.
    committed_writes_runs: int = 0
    reference_reading: Reliability | None = None

    @property
    def key(self) -> str:
        return self.campaign.key

    @property
    def noise(self) -> NoiseFloor:
        """Verdict flips, pass^j and the detectable difference of this campaign (:mod:`.noise_floor`)."""
        return noise_floor(self.reliability.outcomes, self.reliability.k)

    def model_json(self) -> dict[str, Any]:
        """The published per-model keys of ``results.json``, then ours."""
        rel, figures = self.reliability, self.aggregates.figures()
        duplex = dict(figures.pop("duplex"))
        for name in ("afa_corrected", "afa_other", "gap", "attrib_pct"):
            duplex[name] = (self.uptake or {}).get(name)
        return {
            "display_name": self.campaign.display_name,
            "reps": rel.k,
            "n": rel.n,
            "runs": figures.pop("runs"),
            "rep_pass": rel.rep_pass,
            "k_of_n": rel.k_of_n,
            "distribution": rel.distribution,
            "pass1_mean": rel.pass1_mean,
            "pass_at_k": rel.pass_at_k,
            "reliable_at_k": rel.reliable_at_k,
            **figures,
            "duplex": duplex,
            # Ours.
            "ci95": {name: list(ci) if ci else None for name, ci in self.ci.items()},
            "ci95_note": self.ci_note,
            "tasks": sorted(self.tasks),
            "incomplete_tasks": list(rel.incomplete),
            # The denominator: every planned cell counts; the unscored ones (pending included) are failures.
            "complete": rel.complete,
            "plan": "campaign.json" if rel.plan_recorded else "inferred from the runs present",
            "n_planned": rel.n_planned,
            "n_scored": rel.n_scored,
            "unscored": [cell.json() for cell in rel.unscored],
            "pass1_pct": rel.pct(rel.pass1_mean),
            "pass1_pct_scored_cells_only": rel.scored_only_pass1_pct,
            "noise_floor": self.noise.model_dump(mode="json"),
            "writes_after_committed": {
                "runs": self.committed_writes_runs,
                "pass1_mean_reference_reading": self.reference_reading.pass1_mean if self.reference_reading else None,
                "pass_at_k_reference_reading": self.reference_reading.pass_at_k if self.reference_reading else None,
            },
            "problems": self.campaign.problems,
            "agent_isolation": self.isolation(),
        }

    @property
    def tasks(self) -> set[str]:
        """Every task the campaign planned or ran (scored or not)."""
        rel = self.reliability
        return {*self.campaign.runs, *rel.outcomes, *rel.incomplete, *(cell.task_id for cell in rel.unscored)}

    def isolation(self) -> dict[str, int]:
        """Runs by where the agent's code ran (``unknown``: records written before it was recorded)."""
        counts: dict[str, int] = {}
        for run in self.campaign.all_runs():
            where = run.record.agent_isolation or "unknown"
            counts[where] = counts.get(where, 0) + 1
        return dict(sorted(counts.items()))


@dataclass
class Analysis:
    k: int
    models: list[ModelSummary]
    facts: dict[str, TaskFacts] | None
    slices: dict[str, list[dict[str, Any]]] | None = None
    comparison: PairedComparison | None = None
    #: The compared pair's noise: its detectable difference and whether the difference is inside it.
    pair_noise: PairNoise | None = None
    #: ``results --metrics``: per model key, the other benchmarks' turn-taking rows pooled over its sessions.
    compared_metrics: dict[str, list[dict[str, Any]]] | None = None
    notes: list[str] = field(default_factory=list)
    #: Model keys in campaign order (``models`` is in ranked order), as published ``results.json`` lists them.
    campaign_order: list[str] = field(default_factory=list)
    generated_at: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))

    @property
    def n_tasks(self) -> int:
        """The tasks the campaigns cover (not the task packages given: ``--data`` may hold more)."""
        return len({t for m in self.models for t in m.tasks})

    @property
    def same_tasks(self) -> bool:
        """Whether every campaign covers the same task set."""
        return len({frozenset(m.tasks) for m in self.models}) <= 1

    @property
    def conditions(self) -> list[str]:
        return sorted({m.campaign.condition for m in self.models})

    @property
    def complete(self) -> bool:
        return all(m.reliability.complete for m in self.models)

    def _campaign_index(self, summary: ModelSummary) -> int:
        return self.campaign_order.index(summary.key) if summary.key in self.campaign_order else len(self.campaign_order)

    def results_json(self) -> dict[str, Any]:
        return {
            "apex_voice_version": __version__,
            "generated_at": self.generated_at,
            "reps": self.k,
            "n_tasks": self.n_tasks,
            "complete": self.complete,
            "models": {m.key: m.model_json() for m in sorted(self.models, key=self._campaign_index)},
            "slices": self.slices,
            "compare": self.comparison.model_dump(mode="json") if self.comparison else None,
            "compare_noise": self.pair_noise.model_dump(mode="json") if self.pair_noise else None,
            **({"compared_metrics": self.compared_metrics} if self.compared_metrics is not None else {}),
            "notes": self.notes,
        }


def _intervals(rel: Reliability, campaign: Campaign) -> dict[str, tuple[float, float] | None]:
    if ci_withheld(rel.n) is not None:
        return dict.fromkeys(("pass1_pct", "pass_at_k_pct", "reliable_at_k_pct", *(f"{g}_pct" for g in GATES)))
    outcomes = np.array(list(rel.outcomes.values()), dtype=float).reshape(-1, rel.k)

    def pct(stat: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        return lambda rows: 100.0 * stat(rows)

    ci: dict[str, tuple[float, float] | None] = {
        "pass1_pct": bootstrap_ci(outcomes, pct(lambda r: r.mean(axis=(1, 2)))),
        "pass_at_k_pct": bootstrap_ci(outcomes, pct(lambda r: r.max(axis=2).mean(axis=1))),
        "reliable_at_k_pct": bootstrap_ci(outcomes, pct(lambda r: r.min(axis=2).mean(axis=1))),
    }
    for gate in GATES:
        passes, totals = [], []
        for reps in campaign.runs.values():
            graded = [run.record.components[gate] for run in reps.values() if gate in run.record.components]
            passes.append(sum(map(bool, graded)))
            totals.append(len(graded))
        found = ratio_ci(np.array(passes, dtype=float), np.array(totals, dtype=float))
        ci[f"{gate}_pct"] = (100.0 * found[0], 100.0 * found[1]) if found else None
    return ci


async def _reference_reading(summary: ModelSummary, facts: dict[str, TaskFacts], judge: FieldJudge | None, k: int) -> None:
    """Issue 15 item 2: pass rates again, with writes after COMMITTED accepted as the reference does."""
    reread: dict[tuple[str, int], int | None] = {}
    for run in summary.campaign.all_runs():
        task = facts.get(run.task_id)
        if task is None or run.pts is None or not run.record.run_id:
            continue
        try:
            inputs = GradingInputs.read(run.rep_dir / run.record.run_id)
        except (OSError, ValueError):
            continue
        reading = await reference_reading(inputs, task.gold, judge)
        if reading.writes:
            summary.committed_writes_runs += 1
            reread[(run.task_id, run.rep)] = reading.pts
    if reread:
        summary.reference_reading = reliability(
            summary.campaign, k, lambda run: reread.get((run.task_id, run.rep), run.pts)
        )


def incomplete_note(summary: ModelSummary) -> str:
    """The line that marks a campaign INCOMPLETE wherever its figures are printed."""
    rel = summary.reliability
    failures = sum(cell.counted_as == "failure" for cell in rel.unscored)
    pending = sum(cell.reason == PENDING for cell in rel.unscored)
    excluded = len(rel.unscored) - failures
    parts = [f"{failures} counted as failures"] if failures else []
    if pending:
        parts[-1] += f", {pending} of them pending the judge"
    if excluded:
        parts.append(f"{excluded} left out with their tasks (missing from a published run)")
    return (f"INCOMPLETE: {summary.campaign.display_name}: {len(rel.unscored)} of {rel.n_planned} planned cells "
            f"unscored ({', '.join(parts)}); see \"Completeness\".")


async def analyse(
    campaigns: list[Campaign],
    k: int,
    *,
    facts: dict[str, TaskFacts] | None = None,
    judge: FieldJudge | None = None,
    compare_keys: tuple[str, str] | None = None,
) -> Analysis:
    """Compute every table; ``facts`` (from ``--data``) enables tool ratios, slices and correction uptake."""
    oracle = {t: f.oracle_tool_calls for t, f in (facts or {}).items()} if facts else None
    summaries = {}
    for campaign in campaigns:
        rel = reliability(campaign, k)
        agg = aggregate(campaign, oracle)
        summaries[campaign.key] = ModelSummary(campaign, rel, agg, _intervals(rel, campaign), ci_note=ci_withheld(rel.n))
    ranked = rank({key: s.reliability for key, s in summaries.items()},
                  {key: s.ci.get("pass1_pct") for key, s in summaries.items()})
    analysis = Analysis(k=k, models=[summaries[key] for key in ranked], facts=facts,
                        campaign_order=[c.key for c in campaigns])
    if facts:
        for summary in analysis.models:
            summary.outcomes = await field_outcomes(summary.campaign, facts, judge, k)
            summary.uptake = correction_uptake(facts, summary.outcomes)
            await _reference_reading(summary, facts, judge, k)
        analysis.slices = slice_rows(facts, {m.key: m.outcomes or {} for m in analysis.models})
    else:
        analysis.notes.append(
            "No task packages given (--data): tool ratios, taxonomy slices and correction uptake are left out."
        )
    if compare_keys is not None:
        a, b = compare_keys
        analysis.comparison = compare(a, summaries[a].reliability, b, summaries[b].reliability)
        analysis.pair_noise = pair_noise(summaries[a].reliability.outcomes, summaries[b].reliability.outcomes, k, a, b)
    analysis.notes.extend(incomplete_note(m) for m in analysis.models if not m.reliability.complete)
    analysis.notes.extend(
        f"IN-PROCESS AGENT: {m.campaign.display_name}: {m.isolation()['in-process']} run(s) ran an out-of-tree adapter "
        "inside the harness (--trust-adapter): its code could read the task files and harness memory, so nothing "
        "protects these figures from it."
        for m in analysis.models if m.isolation().get("in-process")
    )
    pending = sum(m.reliability.pending_runs for m in analysis.models)
    if pending:
        analysis.notes.append(
            f"{pending} run(s) wait on pending judge verdicts: counted as failures (listed as pending) until "
            "`apex-voice regrade` settles them."
        )
    return analysis
