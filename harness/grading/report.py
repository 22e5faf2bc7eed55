"""The grade of one session as written to ``result.json``, with human-readable explanations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from harness.events.payloads import FailingCheck, FailingKind

__all__ = ["GATES", "FailedPredicate", "FieldRow", "Gate", "GradeReport"]

GATES = ("GS", "PC", "RA", "WA")

Gate = Literal["GS", "PC", "RA", "WA"]


class FieldRow(BaseModel):
    """One expected artifact field: what was expected, what the agent left, and how it scored."""

    artifact: str
    field: str
    expected: Any = None
    got: Any = None
    grader: str
    tier: Literal["deterministic", "judge", "none", "pending"]
    score: float
    stale: bool = False
    required: bool = False
    present: bool = False
    #: Whether the score enters the artifact's AFA (required or present, and not ``claim_atoms``).
    counted: bool = True

    @property
    def pending(self) -> bool:
        """Only the judge can decide this field and it has not answered yet."""
        return self.tier == "pending"

    @property
    def failed(self) -> bool:
        return self.counted and not self.pending and self.score < 1.0

    @property
    def key(self) -> str:
        return f"{self.artifact}.{self.field}"

    def failing_check(self) -> FailingCheck:
        """Why this field fails WA, structured (``reason`` in a few words)."""
        kind: FailingKind
        if self.stale:
            kind, reason = "stale", "stale"
        elif not self.present:
            kind, reason = "missing", "missing (required)"
        else:
            kind, reason = "wrong", (f"wrong: got {self.got!r}, expected {self.expected!r} "
                                     f"(grader {self.grader}, {self.tier} score {self.score:.4g})")
        return FailingCheck(gate="WA", check=self.key, kind=kind, reason=reason, artifact=self.artifact, field=self.field)

    def failure(self) -> str:
        """Why this field fails WA, in a few words."""
        check = self.failing_check()
        return f"{check.check} {check.reason}"


class FailedPredicate(BaseModel):
    """A gold predicate that decided a gate against the agent."""

    id: str
    kind: str
    gate: Gate
    reason: str
    #: ``terminal``, ``required``, ``forbidden`` or ``critical_gate``.
    role: str = ""


_ROLE_WORDING = {
    "terminal": "terminal predicate {id} failed",
    "required": "required predicate {id} failed",
    "forbidden": "forbidden predicate {id} holds",
    "critical_gate": "critical gate {id} failed",
}
#: The check kind of each predicate role (a role without its own wording is a plain ``predicate``).
_ROLE_KIND: dict[str, FailingKind] = {"terminal": "terminal", "required": "required", "forbidden": "forbidden",
                                      "critical_gate": "critical_gate"}
_PREDICATE_KINDS = {*_ROLE_KIND.values(), "predicate"}


class GradeReport(BaseModel):
    """Gates, PTS, AFA and the per-predicate / per-field evidence behind them.

    While judge verdicts are pending and nothing else has decided the run, ``pts`` and ``afa`` are
    ``None`` and ``components`` has no ``WA``: the run is neither a pass nor a fail yet.
    """

    pts: int | None
    components: dict[str, bool]
    afa: float | None
    progress_score: float
    critical_gate_failures: list[str] = Field(default_factory=list)
    failed_required_actions: list[str] = Field(default_factory=list)
    failed_terminal: list[str] = Field(default_factory=list)
    failed_forbidden: list[str] = Field(default_factory=list)
    artifact_failures: list[str] = Field(default_factory=list)
    failed_predicates: list[FailedPredicate] = Field(default_factory=list)
    fields: list[FieldRow] = Field(default_factory=list)
    #: ``"<artifact>.<field>"`` of every field waiting on the judge.
    pending_fields: list[str] = Field(default_factory=list)
    #: ``{"artifacts": {artifact_id: runtime score summary}}``.
    details: dict[str, Any] = Field(default_factory=dict)
    #: Artifact-level WA failures of the failed artifacts (a missing artifact, a lifecycle too low...).
    artifact_checks: list[FailingCheck] = Field(default_factory=list)

    @property
    def pending(self) -> bool:
        """The grade waits on the judge (``pts`` is ``None``)."""
        return self.pts is None

    def failing_items(self) -> list[FailingCheck]:
        """Every check the session did not pass, in :meth:`explain`'s order: predicates, then each
        failed artifact's own checks and failed fields, then the fields waiting on the judge."""
        items = [
            FailingCheck(gate=p.gate, check=p.id, kind=_ROLE_KIND.get(p.role, "predicate"), reason=p.reason)
            for p in self.failed_predicates
        ]
        for artifact_id in self.artifact_failures:
            items.extend(check for check in self.artifact_checks if check.artifact == artifact_id)
            items.extend(row.failing_check() for row in self.fields if row.artifact == artifact_id and row.failed)
        rows = {row.key: row for row in self.fields}
        items.extend(
            FailingCheck(gate="WA", check=key, kind="pending",
                         reason="pending: the judge did not answer (run `apex-voice regrade`)",
                         artifact=rows[key].artifact if key in rows else None,
                         field=rows[key].field if key in rows else None)
            for key in self.pending_fields
        )
        return items

    def explain(self) -> list[str]:
        """One line per reason the session did not pass, prefixed by the gate it failed."""
        return [_line(item) for item in self.failing_items()]


def _line(item: FailingCheck) -> str:
    """``"<gate>: ..."``: a predicate's role and id, else the artifact or field and what is wrong with it."""
    if item.kind in _PREDICATE_KINDS:
        return f"{item.gate}: {_ROLE_WORDING.get(item.kind, 'predicate {id} failed').format(id=item.check)}: {item.reason}"
    return f"{item.gate}: {item.check} {item.reason}"
