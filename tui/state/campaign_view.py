"""The campaign view: one row per (task, repetition), each with its session's view and its result.

A campaign's state is an immutable :class:`CampaignView`; events go to the cell's session through
the one reducer, settled results (``result.json`` or a campaign's ``on_cell``) are merged in by
:func:`with_result`. The table rows are derived (:func:`rows`), never stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from harness.events import RunEvent
from harness.grading.report import FailedPredicate, FieldRow

from .reducer import reduce
from .session_view import GATES, Gates, SessionStatus, SessionView, Verdict, evolve

__all__ = [
    "UNSCORED_STATUS",
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
M = TypeVar("M", bound=BaseModel)


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


#: ``campaign.json``'s reasons for an unscored cell, as the cell's status (the CLI's labels).
UNSCORED_STATUS: dict[str, SessionStatus] = {
    "not run": "not run",
    "stopped": "not run",
    "infrastructure": "infra error",
    "harness error": "harness error",
    "provider refused": "provider refused",
}


def _valid(model: type[M], items: Any) -> tuple[M, ...]:
    """The entries of a ``result.json`` list that parse (a newer or older run's odd one is left out)."""
    parsed = []
    for item in items if isinstance(items, list) else ():
        try:
            parsed.append(model.model_validate(item))
        except ValidationError:
            continue
    return tuple(parsed)


def _agent_failure(record: Mapping[str, Any]) -> str | None:
    failure = record.get("agent_failure")
    if not isinstance(failure, dict):
        return None
    return f"agent failure ({failure.get('kind', '?')}): {failure.get('detail', '')}".rstrip(": ")


@dataclass(frozen=True)
class CellResult:
    """A settled cell: its ``result.json``, or why the campaign left it without one."""

    status: SessionStatus
    pts: int | None = None
    afa: float | None = None
    components: tuple[tuple[str, bool], ...] = ()
    outcome: str | None = None
    reason: str | None = None
    explain: tuple[str, ...] = ()
    #: The registry key of the model (``native-oracle``; the session's own id may be its adapter's).
    model: str | None = None
    predicates: tuple[FailedPredicate, ...] = ()
    fields: tuple[FieldRow, ...] = ()
    #: An agent failure, or why an unscored cell has no record.
    detail: str | None = None
    #: From ``campaign.json``'s ``unscored_cells`` (replaced whenever that list is read again).
    unscored: bool = False

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CellResult:
        passed = record.get("error") is None and record.get("pts") == 1
        components = record.get("components") or {}
        model = record.get("model")
        return cls(
            status="passed" if passed else "failed",
            pts=record.get("pts"),
            afa=record.get("afa"),
            components=tuple((gate, bool(components[gate])) for gate in GATES if gate in components),
            outcome="ERROR" if record.get("error") else record.get("outcome"),
            reason=record.get("reason"),
            explain=tuple(record.get("explain") or ([record["error"]] if record.get("error") else [])),
            model=model if isinstance(model, str) else None,
            predicates=_valid(FailedPredicate, record.get("failed_predicates")),
            fields=_valid(FieldRow, record.get("fields")),
            detail=_agent_failure(record),
        )

    @classmethod
    def unscored_cell(cls, reason: str, detail: str) -> CellResult:
        """A cell without a record, as ``campaign.json`` (or the live campaign) gives its reason."""
        return cls(UNSCORED_STATUS.get(reason, "not run"), detail=detail or None, unscored=True)

    def gates(self) -> Gates:
        marks = dict(self.components)
        return Gates(GS=marks.get("GS"), PC=marks.get("PC"), RA=marks.get("RA"), WA=marks.get("WA"),
                     pts=self.pts, failing=self.explain)


@dataclass(frozen=True)
class CampaignView:
    model: str = ""
    cells: tuple[CellKey, ...] = ()
    sessions: Mapping[CellKey, SessionView] = field(default_factory=_empty)
    results: Mapping[CellKey, CellResult] = field(default_factory=_empty)
    finished: bool = False

    def session(self, key: CellKey) -> SessionView:
        """The cell's session view, with its settled result's verdict merged in."""
        view = self.sessions.get(key) or SessionView(task_id=key[0])
        if self.model:  # the campaign's registry key, not the id its adapter gives (container-agent)
            view = evolve(view, model_id=self.model)
        result = self.results.get(key)
        return view if result is None else with_settled(view, result)


def with_settled(view: SessionView, result: CellResult) -> SessionView:
    """``view`` with what only the result knows: the explanation and graded evidence, AFA, the
    model's registry name, an error row's or an unscored cell's status."""
    verdict = view.verdict or Verdict(result.outcome or result.status, result.pts, result.reason)
    verdict = evolve(verdict, explain=result.explain or verdict.explain, afa=result.afa,
                     predicates=result.predicates, fields=result.fields, detail=result.detail)
    gates = view.gates if view.gates.pts is not None else result.gates()
    return evolve(view, status=result.status, verdict=verdict, gates=gates, model_id=result.model or view.model_id)


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
            model=view.model_id,
            clock_ms=view.clock_ms,
            gates=view.gates,
            afa=result.afa if result else None,
        ))
    return out
