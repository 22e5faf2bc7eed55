"""Why each cell of a finished start was left without a record, as ``campaign.json`` keeps it.

The campaign knows why a cell is empty only while it runs (its :class:`~.campaign.CellOutcome`);
``apex-voice results`` reads the directory later and must list every unscored cell with its
reason, so the reasons are written down when the start ends.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.results.campaign_files import UnscoredCell, UnscoredReason

from .plan import CellOutcome

__all__ = ["unscored_cells"]

_REASONS: dict[str, UnscoredReason] = {
    "infra_failed": "infrastructure",
    "harness_error": "harness error",
    "provider_error": "provider refused",
    "stopped": "stopped",
}


def _detail(outcome: CellOutcome, stop_reason: str | None) -> str:
    if outcome.status == "stopped":
        return stop_reason or ""
    last = outcome.error or (outcome.infra_errors[-1] if outcome.infra_errors else "")
    return f"{outcome.attempts} attempt(s): {last}" if outcome.status == "infra_failed" else last


def unscored_cells(outcomes: Sequence[CellOutcome]) -> list[UnscoredCell]:
    """One entry per outcome without a record (an unknown status reads as ``not run``)."""
    stop_reason = next((o.stop_reason for o in outcomes if o.stop_reason), None)
    return [
        UnscoredCell(task_id=o.cell.task_id, rep=o.cell.rep, reason=_REASONS.get(o.status, "not run"),
                     detail=_detail(o, stop_reason))
        for o in outcomes
        if o.record is None
    ]
