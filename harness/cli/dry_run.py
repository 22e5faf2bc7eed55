"""``apex-voice run --dry-run``: what a run would do, and roughly how long and how much, doing none of it.

The cells come from the campaign's own resume logic (:func:`~harness.campaign.campaign.preview_campaign`,
read-only): each is resumed (its record is reused) or to run. The wall time of a cell to run is,
in order of evidence: the mean wall time of the task's records already in the campaign directory;
on the realtime clock, the task's time budget (a session ends when its media time reaches it, so
this is an upper bound); on the virtual clock or in a text condition, seconds (media time runs as
fast as the CPU; sandbox start-up dominates). Sessions run ``--parallel`` at a time. The cost,
for a model the price table prices: the mean recorded cost of the campaign's cells, else for a
per-minute price the bound from the time budget; a token-priced model without a recorded cell
has no estimate (``--max-cost`` bounds what it spends).
"""

from __future__ import annotations

import math
from statistics import mean
from typing import Literal

import typer
from pydantic import BaseModel

from harness.agents.pricing import PRICES, MinutePrices
from harness.campaign.campaign import preview_campaign
from harness.campaign.resume import CampaignMismatchError
from harness.conditions import get_condition
from harness.counted import counted
from harness.results.result_record import ResultRecord

from .campaign_request import PreparedCampaign
from .run_report import duration_text

__all__ = ["DryRun", "PlannedCell", "dry_run", "dry_run_lines", "print_dry_run"]


class PlannedCell(BaseModel):
    task_id: str
    rep: int
    action: Literal["resume", "run"]
    #: Why a cell with a ``result.json`` runs again (its file is unusable), when it does.
    note: str | None = None


class DryRun(BaseModel):
    """``run --dry-run --json``: one object."""

    model: str
    out: str
    sandbox: str
    sandbox_because: str
    clock: Literal["realtime", "virtual", "text"]
    parallel: int
    cells: list[PlannedCell]
    to_run: int
    resumed: int
    #: Estimated wall time of the cells to run, in seconds; an upper bound when ``wall_time_bound``.
    wall_time_s: float
    wall_time_bound: bool
    wall_time_basis: str
    #: ``None``: the model is not priced, or nothing is known yet to estimate from.
    cost_usd: float | None = None
    cost_bound: bool = False
    cost_basis: str | None = None


def dry_run(prepared: PreparedCampaign) -> DryRun:
    """The plan of ``prepared`` (raises ``CampaignMismatchError`` where the run would)."""
    settings = prepared.settings
    preview = preview_campaign(settings, prepared.task_ids, task_pins=prepared.options.get("task_pins"),
                               cells=prepared.options.get("cells"))
    cells = [PlannedCell(task_id=c.task_id, rep=c.rep, action="resume" if r.record is not None else "run",
                         note=r.problem) for c, r in preview]
    records = [r.record for _, r in preview if r.record is not None]
    to_run = [c for c in cells if c.action == "run"]
    clock = _clock(prepared)
    walls: dict[str, list[float]] = {}
    for record in records:
        if record.wall_s > 0:
            walls.setdefault(record.task_id, []).append(record.wall_s)
    per_cell = [mean(walls[c.task_id]) if c.task_id in walls else
                float(prepared.time_budget_s.get(c.task_id, 0)) if clock == "realtime" else 0.0 for c in to_run]
    measured = sum(c.task_id in walls for c in to_run)
    bound = clock == "realtime" and measured < len(to_run)
    parallel = max(1, min(settings.parallel, settings.model.max_concurrent_sessions or settings.parallel))
    wall = math.ceil(len(to_run) / parallel) * (sum(per_cell) / len(per_cell)) if per_cell else 0.0
    basis = {"realtime": "realtime clock: a session lasts its media time, at most its task's time budget",
             "virtual": "virtual clock: media time runs as fast as the CPU",
             "text": "text condition: no media time"}[clock]
    if measured:
        basis += f"; {counted(measured, 'cell')} from this campaign's recorded wall times"
    cost, cost_bound, cost_basis = _cost(prepared, records, len(to_run), sum(per_cell), bound)
    return DryRun(model=settings.model.key, out=str(settings.out_dir), sandbox=prepared.backend.name,
                  sandbox_because=prepared.backend.chosen_because, clock=clock, parallel=parallel, cells=cells,
                  to_run=len(to_run), resumed=len(cells) - len(to_run), wall_time_s=round(wall, 1),
                  wall_time_bound=bound, wall_time_basis=basis, cost_usd=cost, cost_bound=cost_bound,
                  cost_basis=cost_basis)


def _clock(prepared: PreparedCampaign) -> Literal["realtime", "virtual", "text"]:
    """The clock the sessions would run on: a model in its own container runs on the realtime clock."""
    if get_condition(prepared.runner.condition).session == "text":
        return "text"
    if prepared.settings.model.clock == "realtime" or prepared.runner.runs_in_container:
        return "realtime"
    return "virtual"


def _cost(
    prepared: PreparedCampaign, records: list[ResultRecord], cells: int, seconds: float, time_bound: bool
) -> tuple[float | None, bool, str | None]:
    """The estimated cost of ``cells`` lasting ``seconds`` in all, whether it is an upper bound, and its basis."""
    prices = PRICES.get(prepared.settings.model.provider_model or "")
    if prices is None:
        return None, False, None
    costs = [r.cost_usd for r in records if r.cost_usd is not None]
    if costs:
        return round(mean(costs) * cells, 2), False, f"mean recorded cost of {counted(len(costs), 'cell')}"
    if isinstance(prices, MinutePrices):
        return (round(prices.per_minute * seconds / 60, 2), time_bound,
                f"{prices.per_minute} USD a minute of session")
    return None, False, "token-priced: no estimate before a cell has run (bound it with --max-cost)"


def dry_run_lines(plan: DryRun) -> list[str]:
    """The plan as a person reads it: one line per cell, then the sandbox, time and cost."""
    lines = [f"{c.task_id} rep{c.rep}: {'resumed' if c.action == 'resume' else 'to run'}"
             + (f" ({c.note})" if c.note else "") for c in plan.cells]
    lines.append(f"{plan.model}: {plan.to_run} to run, {plan.resumed} resumed -> {plan.out}")
    lines.append(f"sandbox: {plan.sandbox} ({plan.sandbox_because})")
    if plan.to_run and plan.wall_time_s < 1:
        estimate = "seconds"
    else:
        estimate = f"{'at most ' if plan.wall_time_bound else ''}{duration_text(plan.wall_time_s)}"
    lines.append(f"estimated wall time: {estimate} ({plan.wall_time_basis}; {plan.parallel} at a time)")
    if plan.cost_usd is not None:
        lines.append(f"estimated cost: {'at most ' if plan.cost_bound else ''}{plan.cost_usd:.2f} USD "
                     f"({plan.cost_basis})")
    elif plan.cost_basis is not None:
        lines.append(f"estimated cost: unknown ({plan.cost_basis})")
    lines.append("dry run: nothing started, nothing written")
    return lines


def print_dry_run(prepared: PreparedCampaign, *, as_json: bool) -> None:
    """Print the plan (``--json``: one object on stdout); a campaign the run would refuse exits 2."""
    try:
        plan = dry_run(prepared)
    except CampaignMismatchError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(plan.model_dump_json(indent=2) if as_json else "\n".join(dry_run_lines(plan)))
