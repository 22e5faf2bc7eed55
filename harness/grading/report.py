"""The grade of one session as written to ``result.json``, with human-readable explanations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

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

    def failure(self) -> str:
        """Why this field fails WA, in a few words."""
        where = self.key
        if self.stale:
            return f"{where} stale"
        if not self.present:
            return f"{where} missing (required)"
        return (f"{where} wrong: got {self.got!r}, expected {self.expected!r} "
                f"(grader {self.grader}, {self.tier} score {self.score:.4g})")


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

    @property
    def pending(self) -> bool:
        """The grade waits on the judge (``pts`` is ``None``)."""
        return self.pts is None

    def explain(self) -> list[str]:
        """One line per reason the session did not pass, prefixed by the gate it failed."""
        lines = [
            f"{p.gate}: {_ROLE_WORDING.get(p.role, 'predicate {id} failed').format(id=p.id)}: {p.reason}"
            for p in self.failed_predicates
        ]
        for artifact_id in self.artifact_failures:
            summary = self.details.get("artifacts", {}).get(artifact_id, {})
            lines.extend(f"WA: {reason}" for reason in summary.get("artifact_reasons", []))
            lines.extend(f"WA: {row.failure()}" for row in self.fields if row.artifact == artifact_id and row.failed)
        lines.extend(f"WA: {key} pending: the judge did not answer (run `apex-voice regrade`)"
                     for key in self.pending_fields)
        return lines
