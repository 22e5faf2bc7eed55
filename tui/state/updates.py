"""What sources tell the campaign view (a bus, a tailed runs directory), applied by one function.

Sources run off the UI thread and only build these values; :func:`apply_update` folds them into
the immutable :class:`~tui.state.campaign_view.CampaignView` on the UI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from harness.events import RunEvent

from .campaign_view import CampaignView, CellKey, CellResult, with_cells, with_event, with_result
from .session_view import SessionView, evolve

__all__ = ["CampaignFinished", "CampaignSeen", "EventsRead", "EventsSkipped", "ResultRead", "SessionRestarted", "Update",
           "apply_update"]


@dataclass(frozen=True)
class CampaignSeen:
    """``campaign.json`` read (or a live campaign started): its model, planned cells, and the cells
    its last start left without a record, with why (they replace those read before)."""

    model: str
    cells: tuple[CellKey, ...]
    unscored: tuple[tuple[CellKey, CellResult], ...] = ()


@dataclass(frozen=True)
class EventsRead:
    key: CellKey
    events: tuple[RunEvent, ...]


@dataclass(frozen=True)
class EventsSkipped:
    """A session's events the inbox did not keep: they came faster than the UI could fold them."""

    key: CellKey
    count: int


@dataclass(frozen=True)
class SessionRestarted:
    """A cell's session started again (a retry after an infrastructure failure): its view restarts."""

    key: CellKey
    run_id: str


@dataclass(frozen=True)
class ResultRead:
    key: CellKey
    result: CellResult


@dataclass(frozen=True)
class CampaignFinished:
    summary: str


Update = CampaignSeen | EventsRead | EventsSkipped | SessionRestarted | ResultRead | CampaignFinished


def _seen(campaign: CampaignView, update: CampaignSeen) -> CampaignView:
    campaign = with_cells(evolve(campaign, model=update.model or campaign.model), update.cells)
    unscored = dict(update.unscored)
    results = {key: result for key, result in campaign.results.items() if not result.unscored or key in unscored}
    results.update((key, result) for key, result in unscored.items() if key not in results or results[key].unscored)
    return with_cells(evolve(campaign, results=MappingProxyType(results)), unscored)


def _events(campaign: CampaignView, update: EventsRead) -> CampaignView:
    for event in update.events:
        campaign = with_event(campaign, update.key, event)
    return campaign


def _skipped(campaign: CampaignView, update: EventsSkipped) -> CampaignView:
    session = campaign.sessions.get(update.key) or SessionView(task_id=update.key[0], model_id=campaign.model)
    return evolve(campaign, sessions=MappingProxyType({**campaign.sessions, update.key: evolve(
        session, skipped_events=session.skipped_events + update.count)}))


def _restarted(campaign: CampaignView, update: SessionRestarted) -> CampaignView:
    fresh = SessionView(task_id=update.key[0], model_id=campaign.model, run_id=update.run_id)
    sessions = MappingProxyType({**campaign.sessions, update.key: fresh})
    results = MappingProxyType({k: v for k, v in campaign.results.items() if k != update.key})
    return with_cells(evolve(campaign, sessions=sessions, results=results), [update.key])


def _result(campaign: CampaignView, update: ResultRead) -> CampaignView:
    return with_result(campaign, update.key, update.result)


def _finished(campaign: CampaignView, update: CampaignFinished) -> CampaignView:
    return evolve(campaign, finished=True)


_APPLY: dict[type, Callable[[CampaignView, Any], CampaignView]] = {
    CampaignSeen: _seen,
    EventsRead: _events,
    EventsSkipped: _skipped,
    SessionRestarted: _restarted,
    ResultRead: _result,
    CampaignFinished: _finished,
}


def apply_update(campaign: CampaignView, update: Update) -> CampaignView:
    return _APPLY[type(update)](campaign, update)
