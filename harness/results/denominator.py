"""The campaign's denominator: every planned (task, repetition) cell counts, scored or not.

A cell whose agent dodged it — no ``result.json``, a harness error, infrastructure that kept
failing, a campaign stopped before it, a record with ``error`` set — is a *failure* for pass@1,
pass@k and Reliable@k, listed with its reason; otherwise an agent could raise its score by making
cells unscorable. A cell still waiting on the judge is a failure too, listed as ``pending``, until
``apex-voice regrade`` settles it: the agent writes the values the judge reads, so an agent that
could talk the judge out of a verdict would otherwise take its failing cells out of the figure
(issue 33, break 6). Either way the campaign is incomplete.

The plan is ``campaign.json``'s ``planned_cells``. A directory without one (the published runs,
manifests written before it was recorded) is read as published (reference §7.4): the tasks present
are the plan, and a task missing a repetition is left out — listed, never counted as a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .campaign_files import HARNESS_ERROR_FILE, UnscoredCell
from .run_tree import Campaign, Run

__all__ = ["PENDING", "CellValues", "Unscored", "cell_values", "has_plan"]

#: The reason listed for a cell whose grade still waits on the judge (a failure until regraded).
PENDING = "pending"

class _Plan(BaseModel):
    """The parts of ``campaign.json`` that say what was planned and why cells were left empty."""

    model_config = ConfigDict(extra="ignore")

    planned_cells: dict[str, list[int]] = Field(default_factory=dict)
    unscored_cells: list[UnscoredCell] = Field(default_factory=list)


@dataclass(frozen=True)
class Unscored:
    """A cell of the figure without a usable score: counted as a failure, or (a published run missing a
    repetition) left out with its task."""

    task_id: str
    rep: int
    reason: str
    detail: str
    counted_as: Literal["failure", "excluded"]

    def json(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "rep": self.rep, "reason": self.reason, "detail": self.detail,
                "counted_as": self.counted_as}

    def __str__(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.task_id} rep{self.rep}: {self.reason}{detail}"


@dataclass(frozen=True)
class CellValues:
    """Per task, the 0/1 value of repetitions 0..k−1 (``None``: the task is left out), and the gaps."""

    values: dict[str, list[int | None]]
    unscored: list[Unscored]
    n_planned: int
    plan_recorded: bool


def _plan(campaign: Campaign) -> _Plan:
    try:
        return _Plan.model_validate(campaign.manifest)
    except ValidationError:
        return _Plan()


def has_plan(campaign: Campaign) -> bool:
    """Whether ``campaign.json`` records planned cells (then a directory with no record still reports)."""
    return bool(_plan(campaign).planned_cells)


def _harness_error(rep_dir: Path) -> str | None:
    """The exception line of ``harness_error.txt`` (its last line), ``None`` when there is none."""
    try:
        lines = (rep_dir / HARNESS_ERROR_FILE).read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return None
    return lines[-1] if lines else ""


def _missing(campaign: Campaign, task_id: str, rep: int, recorded: dict[tuple[str, int], UnscoredCell]) -> Unscored:
    """Why a planned cell has no record: the campaign's own note first, then what the directory shows."""
    rep_dir = campaign.path / task_id / f"rep{rep}"
    if (task_id, rep) in campaign.unusable:
        return Unscored(task_id, rep, "unusable result.json", campaign.unusable[(task_id, rep)], "failure")
    note = recorded.get((task_id, rep))
    if note is not None:
        return Unscored(task_id, rep, note.reason, note.detail, "failure")
    error = _harness_error(rep_dir)
    if error is not None:
        return Unscored(task_id, rep, "harness error", error, "failure")
    return Unscored(task_id, rep, "not run", "", "failure")


def _scored(run: Run, pts: Callable[[Run], int | None]) -> tuple[int, Unscored | None]:
    record = run.record
    if record.error is not None:
        return 0, Unscored(run.task_id, run.rep, "error", record.error, "failure")
    value = pts(run)
    if value is None:
        waiting = ", ".join(record.pending_verdicts)
        return 0, Unscored(run.task_id, run.rep, PENDING, f"judge verdicts for {waiting}" if waiting else "", "failure")
    return value, None


def cell_values(campaign: Campaign, k: int, pts: Callable[[Run], int | None]) -> CellValues:
    """Every cell of repetitions 0..k−1 of the planned (or, without a plan, present) tasks."""
    plan = _plan(campaign)
    recorded = {(c.task_id, c.rep): c for c in plan.unscored_cells}
    planned = {task: set(reps) for task, reps in plan.planned_cells.items()}
    values: dict[str, list[int | None]] = {}
    unscored: list[Unscored] = []
    n_planned = 0
    for task_id in sorted(set(planned) | set(campaign.runs)):
        reps = campaign.runs.get(task_id, {})
        row: list[int | None] = []
        for rep in range(k):
            value, gap = None, None
            if rep in reps:
                value, gap = _scored(reps[rep], pts)
            elif not planned:
                gap = Unscored(task_id, rep, "missing", "no plan in campaign.json: its task is left out, as published",
                               "excluded")
            elif rep in planned.get(task_id, ()):
                value, gap = 0, _missing(campaign, task_id, rep, recorded)
            else:
                row.append(None)  # beyond what was planned for this task: k exceeds its repeats
                continue
            n_planned += 1
            row.append(value)
            if gap is not None:
                unscored.append(gap)
        values[task_id] = row
    return CellValues(values, unscored, n_planned, bool(planned))
