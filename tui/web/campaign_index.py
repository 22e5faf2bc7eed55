"""The campaign page's data: one row per (task, repetition) cell, and where each cell's session is.

Campaigns are read with the results' own readers (``harness/results/run_tree.py`` for the records,
``denominator.py`` for the planned cells and why each empty one is empty), so the viewer lists the
same cells, with the same reasons, as ``apex-voice results``. Only ``result.json`` files are read
here: a session's events and audio are read when its page is built.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from harness.events import EVENTS_FILE
from harness.results.denominator import Unscored, cell_values
from harness.results.identity import keep_apart
from harness.results.result_record import RESULT_FILE, ResultRecord
from harness.results.run_tree import Campaign, Run, find_campaigns, is_campaign, load_campaign

from ..sources.replay import find_events_file
from ..state.session_view import GATES

__all__ = ["CampaignIndex", "CampaignSummary", "CellRow", "SessionSource", "ViewerInputError", "Site", "read_site"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class ViewerInputError(ValueError):
    """A directory that is neither a campaign, a directory of campaigns, a rep nor a session."""


class CellRow(BaseModel):
    """One row of the campaign page."""

    #: The session page's id; ``None`` when the cell has no session to show.
    id: str | None = None
    campaign: str
    task_id: str
    rep: int | None = None
    #: ``passed``, ``failed``, ``pending judge``, ``error``, or why the cell has no record
    #: (``not run``, ``infrastructure``, ``harness error``, ``provider refused``, ``stopped``, ...).
    status: str
    scored: bool
    outcome: str | None = None
    pts: int | None = None
    gates: dict[str, bool | None] = Field(default_factory=dict)
    afa: float | None = None
    #: Duplex figures: floor-decision accuracy, median stop latency (ms), overlap (% of the session).
    fda: float | None = None
    stop_ms: float | None = None
    overlap_pct: float | None = None
    duplex_events: int | None = None
    turns: int | None = None
    tool_calls: int | None = None
    media_ms: int | None = None
    reason: str = ""


class CampaignSummary(BaseModel):
    key: str
    name: str
    condition: str
    path: str
    cells: int
    passed: int
    unscored: int


class CampaignIndex(BaseModel):
    """The file the campaign page reads (``data/index.js``)."""

    title: str
    campaigns: list[CampaignSummary]
    cells: list[CellRow]


@dataclass(frozen=True)
class SessionSource:
    """Where a session page is built from."""

    session_dir: Path
    record: ResultRecord | None


@dataclass(frozen=True)
class Site:
    index: CampaignIndex
    sessions: dict[str, SessionSource]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _why(record: ResultRecord) -> str:
    """The one line that says why a scored cell failed (empty when it passed)."""
    if record.error is not None:
        return record.error
    if record.pending:
        return f"pending judge: {', '.join(record.pending_verdicts)}"
    if record.passed:
        return ""
    failure = record.agent_failure or {}
    if failure:
        return f"agent failure ({failure.get('kind', '?')}): {failure.get('detail', '')}"
    if record.explain:
        more = len(record.explain) - 1
        return record.explain[0] + (f" (+{more} more)" if more else "")
    return record.reason or ""


def _status(record: ResultRecord) -> str:
    if record.error is not None:
        return "error"
    if record.pending:
        return "pending judge"
    return "passed" if record.passed else "failed"


def _scored_row(campaign_name: str, run: Run, page_id: str | None) -> CellRow:
    record = run.record
    duplex = record.duplex or {}
    latency = record.latency or {}
    stop = duplex.get("stop_latency_ms")
    overlap = _number(duplex.get("overlap_ratio"))
    return CellRow(
        id=page_id, campaign=campaign_name, task_id=run.task_id, rep=run.rep, status=_status(record),
        scored=not record.pending and record.error is None, outcome=record.outcome, pts=record.pts,
        gates={gate: record.components.get(gate) for gate in GATES}, afa=record.afa,
        fda=_number(duplex.get("fda")), stop_ms=_number(stop.get("median")) if isinstance(stop, dict) else None,
        overlap_pct=None if overlap is None else round(overlap * 100, 2),
        duplex_events=duplex.get("n_events") if isinstance(duplex.get("n_events"), int) else None,
        turns=record.turns, tool_calls=latency.get("tool_calls") if isinstance(latency.get("tool_calls"), int) else None,
        media_ms=latency.get("time_to_resolution_ms") if isinstance(latency.get("time_to_resolution_ms"), int) else None,
        reason=_why(record),
    )


def _unscored_row(campaign_name: str, gap: Unscored) -> CellRow:
    return CellRow(campaign=campaign_name, task_id=gap.task_id, rep=gap.rep, status=gap.reason, scored=False,
                   reason=gap.detail or gap.reason)


def _page_id(prefix: str, task_id: str, rep: int) -> str:
    return _UNSAFE.sub("_", f"{prefix}{task_id}.rep{rep}")


def _campaign_cells(campaign: Campaign, prefix: str, sessions: dict[str, SessionSource]) -> list[CellRow]:
    """Every planned or present cell, in task then repetition order."""
    reps = [rep for runs in campaign.runs.values() for rep in runs]
    planned = campaign.manifest.get("planned_cells")
    if isinstance(planned, dict):
        reps += [rep for cells in planned.values() if isinstance(cells, list) for rep in cells if isinstance(rep, int)]
    k = max(reps, default=-1) + 1
    values = cell_values(campaign, k, lambda run: run.pts)
    gaps = {(gap.task_id, gap.rep): gap for gap in values.unscored}
    rows = []
    for task_id in values.values:
        for rep in range(k):
            run = campaign.runs.get(task_id, {}).get(rep)
            if run is not None:
                session_dir = run.session_dir
                page_id = None
                if session_dir is not None and (session_dir / EVENTS_FILE).is_file():
                    page_id = _page_id(prefix, task_id, rep)
                    sessions[page_id] = SessionSource(session_dir, run.record)
                rows.append(_scored_row(campaign.display_name, run, page_id))
            elif (task_id, rep) in gaps and gaps[(task_id, rep)].reason != "missing":
                rows.append(_unscored_row(campaign.display_name, gaps[(task_id, rep)]))
    return rows


def _summary(campaign: Campaign, rows: list[CellRow]) -> CampaignSummary:
    return CampaignSummary(key=campaign.key, name=campaign.display_name, condition=campaign.condition,
                           path=str(campaign.path), cells=len(rows), passed=sum(r.status == "passed" for r in rows),
                           unscored=sum(not r.scored for r in rows))


def _single_session(path: Path) -> Site:
    """A rep directory or a session directory: a site of one cell."""
    session_dir = find_events_file(path).parent
    rep_dir = session_dir.parent
    record = ResultRecord.read(rep_dir) if (rep_dir / RESULT_FILE).is_file() else None
    if record is not None and record.run_id not in (None, session_dir.name):
        record = None  # the result of another attempt at this cell
    task_id = record.task_id if record else rep_dir.parent.name
    rep = record.rep if record else None
    page_id = _page_id("", task_id, rep if rep is not None else 0)
    sessions = {page_id: SessionSource(session_dir, record)}
    if record is not None:
        run = Run(task_id, record.rep, record, rep_dir)
        row = _scored_row(record.model, run, page_id)
    else:
        row = CellRow(id=page_id, campaign="", task_id=task_id, rep=rep, status="ungraded", scored=False,
                      reason="no result.json beside this session")
    index = CampaignIndex(title=f"{task_id} · {session_dir.name}", campaigns=[], cells=[row])
    return Site(index, sessions)


def read_site(path: Path) -> Site:
    """The cells under ``path``: a campaign, a directory of campaigns, a rep or a session directory."""
    path = Path(path)
    if not path.is_dir():
        raise ViewerInputError(f"{path}: not a directory (give a campaign, a rep or a session directory)")
    if (path / EVENTS_FILE).is_file() or (path / RESULT_FILE).is_file():
        return _single_session(path)
    campaign_dirs = [path] if is_campaign(path) else find_campaigns(path)
    if not campaign_dirs:
        raise ViewerInputError(
            f"{path}: no campaign here (no campaign.json, no <task>/rep<k>/result.json, no {EVENTS_FILE})"
        )
    sessions: dict[str, SessionSource] = {}
    summaries, cells = [], []
    # Two campaigns of one model are named by what tells them apart (``Oracle [C0]``), as in ``results``.
    campaigns, _ = keep_apart([load_campaign(campaign_dir) for campaign_dir in campaign_dirs])
    for number, campaign in enumerate(campaigns):
        prefix = f"c{number}." if len(campaigns) > 1 else ""
        rows = _campaign_cells(campaign, prefix, sessions)
        summaries.append(_summary(campaign, rows))
        cells += rows
    title = path.name if len(summaries) != 1 else f"{summaries[0].name} · {path.name}"
    return Site(CampaignIndex(title=title, campaigns=summaries, cells=cells), sessions)
