"""Grade saved sessions again: newer graders, a judge that is back, pending verdicts filled.

A session is re-graded from ``<rep_dir>/<run_id>/grading_inputs.json`` (its final environment and
the facts the environment does not hold) against the task's gold, and its ``result.json`` is
rewritten atomically with the new grade. Nothing is re-run; the metrics of the session stay.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

from pydantic import BaseModel, Field, computed_field

from harness.grading.context import GradingContext
from harness.grading.gates import grade
from harness.grading.judge import FieldJudge
from harness.tasks.models import GoldSpec

from .grading_inputs import GRADING_INPUTS_FILE, GradingInputs
from .result_record import RESULT_FILE, ResultFileError, ResultRecord

__all__ = ["RegradeChange", "find_rep_dirs", "pending_regrader", "regrade_record", "regrade_rep_dir"]

#: Outcomes that follow the grade (the runner writes ``PENDING`` while judge verdicts are pending).
GRADED_OUTCOMES = ("SUCCESS", "FAILURE", "PENDING")

#: ``gold_for(task_id)`` — the gold of a task, or ``None`` when the task package is not at hand.
GoldLookup = Callable[[str], GoldSpec | None]


class RegradeChange(BaseModel):
    """One session before and after (the ``--json`` line); ``problem`` says why it was not re-graded."""

    rep_dir: Path
    task_id: str | None = None
    rep: int | None = None
    run_id: str | None = None
    pts_before: int | None = None
    pts_after: int | None = None
    wa_before: bool | None = None
    wa_after: bool | None = None
    pending_before: int = 0
    pending_after: int = 0
    problem: str | None = None
    record: ResultRecord | None = Field(default=None, exclude=True)

    @computed_field  # type: ignore[prop-decorator]  # mypy refuses decorators over @property: pydantic's documented form
    @property
    def changed(self) -> bool:
        return self.problem is None and (
            (self.pts_before, self.wa_before, self.pending_before) != (self.pts_after, self.wa_after, self.pending_after)
        )


def find_rep_dirs(root: Path) -> Iterator[Path]:
    """Every directory holding a ``result.json`` at or below ``root`` (a rep, a campaign, a runs tree)."""
    root = Path(root)
    if (root / RESULT_FILE).exists():
        yield root
        return
    for pattern in (f"*/rep*/{RESULT_FILE}", f"*/*/rep*/{RESULT_FILE}"):
        found = sorted(root.glob(pattern))
        if found:
            yield from (path.parent for path in found)
            return


async def regrade_record(record: ResultRecord, inputs: GradingInputs, gold: GoldSpec, judge: FieldJudge | None) -> ResultRecord:
    """``record`` with the grade of ``inputs`` under the current graders (and ``judge``)."""
    report = await grade(gold, GradingContext(
        snapshot=inputs.snapshot,
        observed_act_keys=set(inputs.observed_act_keys),
        gold_doc_ids=list(inputs.gold_doc_ids),
        judge=judge,
    ))
    outcome = record.outcome
    if outcome in GRADED_OUTCOMES:  # a simulator fallback stays one
        outcome = "PENDING" if report.pts is None else ("SUCCESS" if report.pts else "FAILURE")
    data = record.model_dump(mode="json")
    data.update(
        pts=report.pts,
        components=report.components,
        outcome=outcome,
        afa=report.afa,
        failed_predicates=[p.model_dump(mode="json") for p in report.failed_predicates],
        fields=[row.model_dump(mode="json") for row in report.fields],
        pending_verdicts=report.pending_fields,
        explain=report.explain(),
    )
    return ResultRecord.model_validate(data)


async def regrade_rep_dir(rep_dir: Path, gold_for: GoldLookup, judge: FieldJudge | None, *, write: bool = True) -> RegradeChange:
    """Re-grade the session of one ``<task>/rep<k>`` directory; problems are reported, never raised."""
    change = RegradeChange(rep_dir=rep_dir)
    try:
        record = ResultRecord.load(rep_dir)
    except ResultFileError as exc:
        change.problem = exc.problem
        return change
    if record is None:
        change.problem = "no result.json"
        return change
    change.task_id, change.rep, change.run_id = record.task_id, record.rep, record.run_id
    change.pts_before, change.wa_before = record.pts, record.components.get("WA")
    change.pending_before = len(record.pending_verdicts)
    if record.error is not None or record.run_id is None:
        change.problem = "an error row has no session to grade"
        return change
    gold = gold_for(record.task_id)
    if gold is None:
        change.problem = f"task {record.task_id!r} is not in the task data (--data)"
        return change
    try:
        inputs = GradingInputs.read(rep_dir / record.run_id)
    except (OSError, ValueError) as exc:
        change.problem = f"{record.run_id}/{GRADING_INPUTS_FILE} unusable: {type(exc).__name__}: {exc}"
        return change
    new = await regrade_record(record, inputs, gold, judge)
    change.pts_after, change.wa_after = new.pts, new.components.get("WA")
    change.pending_after = len(new.pending_verdicts)
    change.record = new
    if write and new != record:
        new.write(rep_dir)
    return change


def pending_regrader(
    gold_for: GoldLookup, judge: FieldJudge | None
) -> Callable[[object, Path, ResultRecord], Awaitable[ResultRecord]]:
    """A campaign's :data:`~harness.campaign.campaign.PendingRegrader`: fill a loaded record's pending verdicts.

    Returns the record itself (unchanged, not rewritten) when it cannot be re-graded or nothing changed.
    """

    async def regrade(cell: object, rep_dir: Path, record: ResultRecord) -> ResultRecord:
        change = await regrade_rep_dir(rep_dir, gold_for, judge, write=False)
        if change.record is None or change.record == record:
            return record
        return change.record

    return regrade
