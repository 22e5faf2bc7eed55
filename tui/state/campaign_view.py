"""The campaign view: one row per (task, repetition), each with its session's view and its result.

A campaign's state is an immutable :class:`CampaignView`; events go to the cell's session through
the one reducer, settled results (``result.json`` or a campaign's ``on_cell``) are merged in by
:func:`with_result`. The table rows are derived (:func:`rows`), never stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from harness.events import RunEvent

from .reducer import reduce
from .session_view import GATES, Gates, SessionStatus, SessionView, Verdict, evolve

__all__ = [
    "CampaignRow",
    "CampaignView",
    "CellKey",
    "CellResult",
    "rows",
    "with_cells",
    "with_event",
    "with_result",
    "with_settled",
]

CellKey = tuple[str, int]


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class CellResult:
    """A settled cell, from its ``result.json`` (``None`` record: infrastructure left it empty)."""

    status: SessionStatus
    pts: int | None = None
    afa: float | None = None
    components: tuple[tuple[str, bool], ...] = ()
    outcome: str | None = None
    reason: str | None = None
    explain: tuple[str, ...] = ()

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None, infra_errors: Iterable[str] = ()) -> CellResult:
        if record is None:
            return cls("infra error", explain=tuple(infra_errors))
        passed = record.get("error") is None and record.get("pts") == 1
        components = record.get("components") or {}
        return cls(
            status="passed" if passed else "failed",
            pts=record.get("pts"),
            afa=record.get("afa"),
            components=tuple((gate, bool(components[gate])) for gate in GATES if gate in components),
            outcome="ERROR" if record.get("error") else record.get("outcome"),
            reason=record.get("reason"),
            explain=tuple(record.get("explain") or ([record["error"]] if record.get("error") else [])),
        )

    def gates(self) -> Gates:
        marks = dict(self.components)
        return Gates(*(marks.get(gate) for gate in GATES), pts=self.pts, failing=self.explain)


@dataclass(frozen=True)
class CampaignView:
    model: str = ""
    cells: tuple[CellKey, ...] = ()
    sessions: Mapping[CellKey, SessionView] = field(default_factory=_empty)
    results: Mapping[CellKey, CellResult] = field(default_factory=_empty)
    finished: bool = False

    def session(self, key: CellKey) -> SessionView:
        """The cell's session view, with its settled result's verdict merged in."""
        view = self.sessions.get(key) or SessionView(task_id=key[0], model_id=self.model)
        result = self.results.get(key)
        return view if result is None else with_settled(view, result)


def with_settled(view: SessionView, result: CellResult) -> SessionView:
    """``view`` with what only the result knows: the explanation lines, AFA, an error row's status."""
    verdict = view.verdict or Verdict(result.outcome or result.status, result.pts, result.reason)
    verdict = evolve(verdict, explain=result.explain or verdict.explain, afa=result.afa)
    gates = view.gates if view.gates.pts is not None else result.gates()
    return evolve(view, status=result.status, verdict=verdict, gates=gates)


@dataclass(frozen=True)
class CampaignRow:
    key: CellKey
    status: SessionStatus
    model: str
    clock_ms: int
    gates: Gates
    afa: float | None


def _put(mapping: Mapping[CellKey, Any], key: CellKey, value: Any) -> Mapping[CellKey, Any]:
    return MappingProxyType({**mapping, key: value})


def with_cells(campaign: CampaignView, keys: Iterable[CellKey]) -> CampaignView:
    """Add cells (queued until their session starts), keeping the campaign's coverage-first order."""
    new = [key for key in keys if key not in campaign.cells]
    if not new:
        return campaign
    cells = tuple(sorted((*campaign.cells, *new), key=lambda k: (k[1], k[0])))
    return evolve(campaign, cells=cells)


def with_event(campaign: CampaignView, key: CellKey, event: RunEvent) -> CampaignView:
    campaign = with_cells(campaign, [key])
    session = campaign.sessions.get(key) or SessionView(task_id=key[0], model_id=campaign.model)
    return evolve(campaign, sessions=_put(campaign.sessions, key, reduce(session, event)))


def with_result(campaign: CampaignView, key: CellKey, result: CellResult) -> CampaignView:
    campaign = with_cells(campaign, [key])
    return evolve(campaign, results=_put(campaign.results, key, result))


def rows(campaign: CampaignView) -> list[CampaignRow]:
    out = []
    for key in campaign.cells:
        view = campaign.session(key)
        result = campaign.results.get(key)
        out.append(CampaignRow(
            key=key,
            status=view.status,
            model=view.model_id or campaign.model,
            clock_ms=view.clock_ms,
            gates=view.gates,
            afa=result.afa if result else None,
        ))
    return out
