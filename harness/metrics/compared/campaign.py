"""Every variant over a campaign: per task and for the whole campaign, from each cell's session.

A row's campaign (or task) value pools its sessions: a mean weighted by each session's event
count ``n`` — the pooled mean for the sources' means, a weighted mean of per-session values for
medians and rates — except totals and counts (``(total)`` rows, unit ``turns``), which are summed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from .report import MetricRow, MetricsReport, compare, open_recording

__all__ = ["FAMILIES", "CampaignMetrics", "campaign_metrics", "pool_rows", "select_rows"]

#: ``results --metrics`` names → the variants' row prefix.
FAMILIES = {"tau-voice": "τ-Voice", "eva": "EVA", "fdb": "FDB", "ours": "ours"}


class CampaignMetrics(BaseModel):
    campaign: str
    sessions: int
    rows: list[MetricRow]
    per_task: dict[str, list[MetricRow]]
    #: Cells whose session could not be read, with the reason.
    skipped: dict[str, str]


def _summed(row: MetricRow) -> bool:
    return row.unit == "turns" or "(total)" in row.variant


def pool_rows(reports: list[MetricsReport]) -> list[MetricRow]:
    """One row per variant, pooled over ``reports`` (each session's rows in the same order)."""
    pooled: list[MetricRow] = []
    for index, first in enumerate(reports[0].rows if reports else []):
        rows = [r.rows[index] for r in reports]
        valued = [r for r in rows if r.value is not None]
        n = sum(r.n or 0 for r in rows) if any(r.n is not None for r in rows) else None
        value: float | None
        if not valued:
            value = None
        elif _summed(first):
            value = float(sum(r.value or 0.0 for r in valued))
        else:
            weights = [max(r.n or 0, 1) for r in valued]
            value = round(sum((r.value or 0.0) * w for r, w in zip(valued, weights, strict=True)) / sum(weights), 4)
        pooled.append(MetricRow(measure=first.measure, variant=first.variant, value=value, unit=first.unit, n=n,
                                note=f"{len(valued)}/{len(rows)} sessions"))
    return pooled


def campaign_metrics(campaign: Path, *, asr: bool = True,
                     progress: Callable[[str], None] | None = None) -> CampaignMetrics:
    """Every cell ``<task>/rep<k>/`` of ``campaign``, pooled per task and overall."""
    by_task: dict[str, list[MetricsReport]] = {}
    skipped: dict[str, str] = {}
    for cell in sorted(campaign.glob("*/rep*/")):
        if not any(cell.glob("*/events.jsonl")):
            continue
        label = f"{cell.parent.name}/{cell.name}"
        try:
            by_task.setdefault(cell.parent.name, []).append(compare(open_recording(cell), asr=asr))
        except (ValueError, OSError) as exc:
            skipped[label] = str(exc)
        if progress is not None:
            progress(label)
    every = [r for reports in by_task.values() for r in reports]
    return CampaignMetrics(campaign=str(campaign), sessions=len(every), rows=pool_rows(every),
                           per_task={task: pool_rows(reports) for task, reports in by_task.items()}, skipped=skipped)


def select_rows(rows: list[MetricRow], families: list[str]) -> list[MetricRow]:
    """The rows of the named families (``FAMILIES`` keys), in the report's order."""
    prefixes = tuple(FAMILIES[name] for name in families)
    return [row for row in rows if row.variant.startswith(prefixes)]
