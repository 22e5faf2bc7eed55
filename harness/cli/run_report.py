"""What ``apex-voice run`` shows: progress while the campaign runs, then its results.

The table of this start's cells, a failed cell's explanation lines, the summary, the figure as
``apex-voice results`` counts it (every planned cell, unscored ones failing), and what this start
did (resumed, ran, regraded). Nothing here decides anything about the campaign.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.campaign.campaign import (
    CampaignCell,
    CampaignResult,
    CampaignSettings,
    CellOutcome,
    CellRunner,
    run_campaign,
)
from harness.campaign.unscored import unscored_cells
from harness.results.denominator import PENDING
from harness.results.leaderboard import reliability
from harness.results.noise_floor import noise_floor, noise_line
from harness.results.result_record import RESULT_FILE
from harness.results.run_tree import Campaign, Run
from sandbox.backend import SandboxBackend

from .console import cli_console
from .plain_progress import PlainProgress, wants_plain_progress
from .results_table import task_table

__all__ = ["EXPLAIN_LINES", "closing_line", "denominator_line", "duration_text", "print_results", "run_with_progress", "this_start_line"]

#: Failed runs show at most this many explanation lines each under the table (``-v``: all).
EXPLAIN_LINES = 3


async def run_with_progress(
    settings: CampaignSettings, task_ids: list[str], runner: CellRunner, backend: SandboxBackend, *, quiet: bool,
    **campaign_options: Any,
) -> CampaignResult:
    cells = campaign_options.get("cells")
    total = len(cells) if cells is not None else len(set(task_ids)) * settings.repeats
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        if wants_plain_progress(sys.stdout, sys.stderr):  # a pipe or a CI log: a line per cell as it finishes
            plain = PlainProgress(total, sys.stderr)
            async with plain.beating():
                return await run_campaign(settings, task_ids, runner, on_cell=plain, on_start=plain.started,
                                          **campaign_options)
        with Progress(*columns, console=cli_console(stderr=True), transient=True, disable=quiet) as progress:
            bar = progress.add_task(f"{settings.model.key}", total=total)

            def advance(outcome: CellOutcome) -> None:
                progress.update(bar, advance=1, description=f"{settings.model.key}: {outcome.cell} {outcome.status}")

            return await run_campaign(settings, task_ids, runner, on_cell=advance, **campaign_options)
    finally:
        await backend.aclose()  # the warm spares it started for sessions that will not come


def _mark(flag: bool | None) -> str:
    return "–" if flag is None else ("[green]1[/]" if flag else "[red]0[/]")


_RESULT_HEADERS = ["task", "rep", "PTS", "GS", "PC", "RA", "WA", "AFA", "turns", "outcome"]


def print_results(result: CampaignResult, *, full: bool = False) -> None:
    console = cli_console()
    rows = [_table_row(outcome) for outcome in result.outcomes]
    console.print(task_table(_RESULT_HEADERS, rows, console.width))
    for outcome in result.outcomes:
        for line in _failure_lines(outcome, result.settings.out_dir, full=full):
            console.print(line, highlight=False, soft_wrap=True, markup=False)
    console.print(result.summary(), highlight=False, soft_wrap=True)
    console.print(denominator_line(result), highlight=False, soft_wrap=True, markup=False)
    if result.settings.repeats > 1:
        rel = reliability(_as_campaign(result), result.settings.repeats)
        console.print(f"noise floor: {noise_line(result.settings.model.key, noise_floor(rel.outcomes, rel.k))}",
                      highlight=False, soft_wrap=True, markup=False)
    console.print(this_start_line(result), highlight=False, soft_wrap=True, markup=False)


def duration_text(seconds: float) -> str:
    """``42 s``, ``1 min 12 s``, ``2 h 5 min``: a wall time as a person reads it."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def closing_line(result: CampaignResult, wall_s: float) -> str:
    """The last line of ``run``: scored cells, pass@1 as ``results`` counts it, and the wall time."""
    rel = reliability(_as_campaign(result), result.settings.repeats)
    pct = rel.pct(rel.pass1_mean)
    return (f"{result.settings.model.key}: {rel.n_scored}/{rel.n_planned} scored, pass@1 "
            f"{'–' if pct is None else f'{pct:.1f}'} %, {duration_text(wall_s)}")


def this_start_line(result: CampaignResult) -> str:
    """What this start did: cells resumed from the directory, sessions run, records regraded."""
    counts = Counter(outcome.status for outcome in result.outcomes)
    ran = sum(counts[status] for status in ("ran", "infra_failed", "harness_error", "provider_error"))
    text = f"{result.settings.model.key}: resumed {counts['loaded'] + counts['regraded']}, ran {ran}"
    if counts["regraded"]:
        text += f", regraded {counts['regraded']}"
    if counts["stopped"]:
        text += f", not run {counts['stopped']}"
    return text


def _as_campaign(result: CampaignResult) -> Campaign:
    """This start's cells as ``results`` reads a campaign: its plan, its records and why cells are empty."""
    planned: dict[str, list[int]] = {}
    campaign = Campaign(key=result.settings.model.key, display_name=result.settings.model.display_name,
                        path=result.settings.out_dir)
    for outcome in result.outcomes:
        cell = outcome.cell
        planned.setdefault(cell.task_id, []).append(cell.rep)
        if outcome.record is not None:
            run = Run(cell.task_id, cell.rep, outcome.record, cell.rep_dir(result.settings.out_dir))
            campaign.runs.setdefault(cell.task_id, {})[cell.rep] = run
    campaign.manifest = {"planned_cells": planned,
                         "unscored_cells": [c.model_dump() for c in unscored_cells(result.outcomes)]}
    return campaign


def denominator_line(result: CampaignResult) -> str:
    """This start's figure as ``apex-voice results`` counts it: every planned cell, unscored ones failing."""
    rel = reliability(_as_campaign(result), result.settings.repeats)
    pct = rel.pct(rel.pass1_mean)
    text = (f"{result.settings.model.key}: pass@1 {'–' if pct is None else f'{pct:.1f}'} % over {rel.n_planned} "
            f"planned cells ({rel.n_scored} scored)")
    if rel.complete:
        return f"{text}: complete"
    pending = sum(cell.reason == PENDING for cell in rel.unscored)
    scored_only = rel.scored_only_pass1_pct
    return (f"{text}: INCOMPLETE, {len(rel.unscored)} unscored counted as failures ({pending} pending the judge "
            f"until `apex-voice regrade`); scored cells only: pass@1 {'–' if scored_only is None else f'{scored_only:.1f}'} %")


#: The outcome column of a cell left without a record (it counts as a failure).
_EMPTY_LABELS = {"harness_error": "[red]HARNESS ERROR[/]", "stopped": "[yellow]NOT RUN[/]",
                 "provider_error": "[red]PROVIDER REFUSED[/]"}


def _table_row(outcome: CellOutcome) -> list[str]:
    cell, row = outcome.cell, outcome.record
    if row is None:
        label = _EMPTY_LABELS.get(outcome.status, "[yellow]INFRA ERROR[/]")
        return [cell.task_id, str(cell.rep), "[red]0[/]", "–", "–", "–", "–", "–", "–", label]
    gates = [_mark(row.components.get(gate)) for gate in ("GS", "PC", "RA", "WA")]
    afa = "–" if row.afa is None else f"{row.afa:.2f}"
    outcome_text = "[red]ERROR[/]" if row.error else (row.outcome or "")
    if row.agent_failure:
        outcome_text += f" (agent: {row.agent_failure.get('kind', '?')})"
    if row.pending:
        outcome_text = "[yellow]PENDING JUDGE[/]"
    return [cell.task_id, str(cell.rep), _mark(None if row.pending else row.pts == 1), *gates, afa,
            str(row.turns or 0), outcome_text]


def _failure_lines(outcome: CellOutcome, out_dir: Path, *, full: bool = False) -> list[str]:
    """A failed cell's explanation: its first lines, and where the rest are (``full``: all of it)."""
    cell: CampaignCell = outcome.cell
    row = outcome.record
    if row is None:
        if outcome.status == "stopped":
            return []
        last = outcome.error or (outcome.infra_errors[-1] if outcome.infra_errors else "no result")
        return [f"{cell}: left empty after {outcome.attempts} attempt(s): {last}"]
    if row.passed:
        return []
    lines = (row.explain if full else row.explain[:EXPLAIN_LINES]) or [row.error or f"{row.outcome} ({row.reason})"]
    more = len(row.explain) - len(lines) if row.explain else 0
    cut = [f"    … {more} more lines in {cell.rep_dir(out_dir) / RESULT_FILE} (-v shows them)"] if more > 0 else []
    return [f"{cell}: {lines[0]}", *(f"    {line}" for line in lines[1:]), *cut]
