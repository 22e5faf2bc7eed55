"""Taxonomy slices and correction uptake (reference §7.8, §7.9): tables that need the task packages.

Each cell of repetitions 0..k−1 contributes its field outcomes, on the leaderboard's denominator: a
planned cell without a usable score is a failure here too. A run of ours carries them in ``result.json`` (our one WA
rule: ``fields`` rows and ``components``); a published run carries none, so its final workspace is
re-graded with the published analysis rule (:mod:`harness.grading.analysis_afa`) and the judge
cache — exactly how the published tables were made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from harness.grading.analysis_afa import analysis_scores
from harness.grading.judge import FieldJudge
from harness.tasks.models import AutonomyLevel, KnowledgeBurden, RiskTier, ToolBurden
from mcp_servers.records import ArtifactSnapshot

from .denominator import cell_values
from .run_tree import Campaign, Run
from .task_facts import TaskFacts

__all__ = ["AXES", "FieldOutcomes", "correction_uptake", "field_outcomes", "slice_rows"]

# Published §7.9: axes with a fixed label order (the others sort by group size, then label).
_FIXED = {
    "autonomy": [m.value for m in AutonomyLevel],
    "kburden": [m.value for m in KnowledgeBurden],
    "tburden": [m.value for m in ToolBurden],
    "difficulty": ["9 fields", "10 fields", "11-13 fields"],
    "risk": [m.value for m in RiskTier],
}
AXES: dict[str, str] = {
    "archetype": "Archetype",
    "industry": "Industry",
    "approve": "Approval gating",
    "artifact": "Primary artifact",
    "autonomy": "Autonomy level",
    "kburden": "Knowledge burden",
    "tburden": "Tool burden",
    "uprofile": "User profile",
    "difficulty": "Required facts",
    "risk": "Risk tier",
}


def _label(axis: str, row: dict[str, Any]) -> str | None:
    if axis == "approve":
        return "APPROVE-gated" if "APPROVE" in (row.get("delegation_patterns") or []) else "not APPROVE-gated"
    if axis == "difficulty":
        count = int(row.get("required_fact_count") or 0)
        return "9 fields" if count <= 9 else ("10 fields" if count == 10 else "11-13 fields")
    key = {"archetype": "archetype", "industry": "industry", "artifact": "primary_artifact", "autonomy": "autonomy_level",
           "kburden": "knowledge_burden", "tburden": "tool_burden", "uprofile": "user_profile", "risk": "risk_tier"}[axis]
    value = row.get(key)
    return None if value is None else str(value)


@dataclass
class FieldOutcomes:
    """One run's required-field verdicts and its artifact-level success, under the rule that graded it."""

    success: bool
    wa_failed: bool
    afa_passed: int
    afa_total: int
    #: Required fields (``"<artifact>.<field>"``) that are wrong, missing or stale.
    bad_required: set[str] = field(default_factory=set)


def _ours(run: Run) -> FieldOutcomes:
    record = run.record
    counted = [row for row in record.fields if row.counted and not row.pending]
    bad = {row.key for row in record.fields if row.required and (row.failed or not row.present or row.stale)}
    return FieldOutcomes(
        success=run.pts == 1,
        wa_failed=record.components.get("WA") is False,
        afa_passed=sum(row.score >= 1.0 for row in counted),
        afa_total=len(counted),
        bad_required=bad,
    )


def _artifact(artifact_id: str, entry: dict[str, Any]) -> ArtifactSnapshot:
    """One ``final_workspace.json`` entry. The published runs' tooling writes some without
    ``artifact_type`` (or ``lifecycle``): the gold's artifact type is the grading context then, and
    a missing lifecycle is unknown, which the WA gate fails, as the reference does."""
    return ArtifactSnapshot.model_validate({"artifact_type": "", "lifecycle": "", "artifact_id": artifact_id, **entry})


async def _published(run: Run, facts: TaskFacts, judge: FieldJudge | None) -> FieldOutcomes | None:
    session = run.session_dir
    if session is None:
        return None
    raw = json.loads((session / "workspace" / "final_workspace.json").read_text(encoding="utf-8"))
    workspace = {aid: _artifact(aid, art) for aid, art in raw.items()}
    scores = await analysis_scores(facts.gold, workspace, judge)
    wa = all(score.wa_ok for score in scores)
    gates = run.record.components
    return FieldOutcomes(
        success=bool(gates.get("GS") and gates.get("PC") and gates.get("RA") and wa),
        wa_failed=not wa,
        afa_passed=sum(s.passed for s in scores),
        afa_total=sum(s.total for s in scores),
        bad_required={f"{s.artifact_id}.{name}" for s in scores for name in s.missed_required},
    )


def _unscored(task: TaskFacts) -> FieldOutcomes:
    """A planned cell without a usable score, read as an empty workspace: it fails, every required field missed."""
    return FieldOutcomes(success=False, wa_failed=True, afa_passed=0, afa_total=len(task.required_fields),
                         bad_required=set(task.required_fields))


async def field_outcomes(
    campaign: Campaign, facts: dict[str, TaskFacts], judge: FieldJudge | None, k: int
) -> dict[str, list[FieldOutcomes]]:
    """Per task of ``facts``: the field outcomes of each cell of repetitions 0..k−1, on the campaign's
    denominator (:mod:`.denominator`): a cell without a usable score (not run, an error, a grade still
    pending) counts as a failure, as it does on the leaderboard; a published run missing a repetition,
    or one without a final workspace, is left out as published."""
    cells = cell_values(campaign, k, lambda run: run.pts)
    unscored = {(cell.task_id, cell.rep) for cell in cells.unscored if cell.counted_as == "failure"}
    outcomes: dict[str, list[FieldOutcomes]] = {}
    for task_id, values in sorted(cells.values.items()):
        task = facts.get(task_id)
        if task is None:
            continue
        for rep, value in enumerate(values):
            if value is None:
                continue
            run = campaign.runs.get(task_id, {}).get(rep)
            if run is None or (task_id, rep) in unscored:
                outcome: FieldOutcomes | None = _unscored(task)
            else:
                outcome = _ours(run) if run.record.fields else await _published(run, task, judge)
            if outcome is not None:
                outcomes.setdefault(task_id, []).append(outcome)
    return outcomes


def slice_rows(
    facts: dict[str, TaskFacts], per_model: dict[str, dict[str, list[FieldOutcomes]]]
) -> dict[str, list[dict[str, Any]]]:
    """Published §7.9 rows per axis: ``{label, n, <model>: {success, afa}}``."""
    slices: dict[str, list[dict[str, Any]]] = {}
    for axis in AXES:
        groups: dict[str, list[str]] = {}
        for task_id, task in facts.items():
            label = _label(axis, task.row)
            if label is not None:
                groups.setdefault(label, []).append(task_id)
        fixed = _FIXED.get(axis)
        labels = [lb for lb in fixed if lb in groups] if fixed else sorted(groups, key=lambda lb: (-len(groups[lb]), lb))
        rows = []
        for label in labels:
            row: dict[str, Any] = {"label": label, "n": len(groups[label])}
            for model, outcomes in per_model.items():
                present = [outcomes[t] for t in groups[label] if outcomes.get(t)]
                passed = sum(o.afa_passed for runs in present for o in runs)
                total = sum(o.afa_total for runs in present for o in runs)
                row[model] = {
                    "success": sum(sum(o.success for o in runs) / len(runs) for runs in present) / len(present)
                    if present else None,
                    "afa": passed / total if total else None,
                }
            rows.append(row)
        slices[axis] = rows
    return slices


def correction_uptake(facts: dict[str, TaskFacts], outcomes: dict[str, list[FieldOutcomes]]) -> dict[str, Any]:
    """Published §7.8: AFA on corrected vs other required fields, the gap, and attributed WA failures."""
    bad_c = total_c = bad_o = total_o = wa_failures = attributed = 0
    for task_id, runs in outcomes.items():
        task = facts[task_id]
        corrected = task.corrected_fields
        if not corrected:
            continue
        others = task.required_fields - corrected
        for run in runs:
            total_c += len(corrected)
            total_o += len(others)
            bad_c += len(run.bad_required & corrected)
            bad_o += len(run.bad_required & others)
            if run.wa_failed:
                wa_failures += 1
                attributed += bool(run.bad_required & corrected)
    afa_c = 100.0 * (1 - bad_c / total_c) if total_c else None
    afa_o = 100.0 * (1 - bad_o / total_o) if total_o else None
    return {
        "afa_corrected": afa_c,
        "afa_other": afa_o,
        "gap": afa_o - afa_c if afa_c is not None and afa_o is not None else None,
        "attrib_pct": 100.0 * attributed / wa_failures if wa_failures else None,
        "n_corrected_fields": total_c,
        "n_wa_failures": wa_failures,
    }
