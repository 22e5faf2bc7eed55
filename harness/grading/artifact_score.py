"""Runtime artifact score (reference §3.4): our one rule for the WA gate.

Stale fields score 0, ``claim_atoms`` fields are excluded, presence-only expectations pass when
the field is present, and every required-or-present field enters AFA — so a present but wrong
optional field fails WA. Every field listed in ``must_not_be_stale`` is checked, also one that has
no gold expectation (the reference only checks listed fields that are also gold fields).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.field_graders import get_grader
from harness.tasks.models import ArtifactExpectation, ArtifactFieldExpectation
from mcp_servers.public_models import LIFECYCLE_ORDER
from mcp_servers.records import ArtifactSnapshot

from .judge import FieldJudge
from .report import FieldRow
from .two_tier import FieldVerdict, grade_two_tier

__all__ = ["ArtifactScore", "score_artifact"]


@dataclass
class ArtifactScore:
    """Runtime score of one artifact expectation; ``passed`` is its WA verdict."""

    artifact_id: str
    present: bool
    lifecycle: str | None
    lifecycle_min: str | None
    lifecycle_ok: bool
    afa: float
    completeness: float
    stale_fact_rate: float
    missing_required: list[str] = field(default_factory=list)
    claim_atom_fields: list[str] = field(default_factory=list)
    stale_protected: list[str] = field(default_factory=list)
    rows: list[FieldRow] = field(default_factory=list)

    @property
    def pending_fields(self) -> list[str]:
        return [row.key for row in self.rows if row.pending]

    @property
    def verdict(self) -> bool | None:
        """WA of this artifact: ``None`` while only pending judge verdicts stand between it and a pass."""
        if not self.lifecycle_ok or self.missing_required or self.stale_fact_rate > 0:
            return False
        if any(row.failed for row in self.rows):
            return False
        return None if self.pending_fields else True

    @property
    def passed(self) -> bool:
        return self.verdict is True

    def artifact_reasons(self) -> list[str]:
        """Artifact-level WA failures (field-level ones are in ``rows``)."""
        if not self.present:
            return [f"{self.artifact_id} missing from the workspace"]
        reasons = []
        if not self.lifecycle_ok:
            reasons.append(f"{self.artifact_id} lifecycle {self.lifecycle} is below {self.lifecycle_min}")
        unscored = {row.field for row in self.rows if not row.counted}
        reasons.extend(f"{self.artifact_id}.{name} missing (required)"
                       for name in self.missing_required if name in unscored)
        gold_fields = {row.field for row in self.rows}
        reasons.extend(f"{self.artifact_id}.{name} stale (must_not_be_stale)"
                       for name in self.stale_protected if name not in gold_fields)
        return reasons

    def summary(self) -> dict[str, object]:
        """JSON-ready summary stored under ``GradeReport.details["artifacts"]``."""
        return {
            "afa": round(self.afa, 4),
            "completeness": round(self.completeness, 4),
            "stale_fact_rate": round(self.stale_fact_rate, 4),
            "lifecycle": self.lifecycle,
            "lifecycle_min": self.lifecycle_min,
            "lifecycle_ok": self.lifecycle_ok,
            "missing_required": self.missing_required,
            "claim_atom_fields": self.claim_atom_fields,
            "artifact_reasons": self.artifact_reasons(),
            "pending_fields": self.pending_fields,
            "passed": self.verdict,
        }


def _lifecycle_ok(lifecycle: str, minimum: str | None) -> bool:
    if minimum is None:
        return True
    return lifecycle in LIFECYCLE_ORDER and LIFECYCLE_ORDER.index(lifecycle) >= LIFECYCLE_ORDER.index(minimum)


async def _grade_field(
    spec: ArtifactFieldExpectation, artifact: ArtifactSnapshot, context: str, judge: FieldJudge | None,
) -> FieldRow:
    grader = spec.grader
    present = spec.field in artifact.fields
    stale = spec.field in artifact.stale_fields
    got = artifact.fields.get(spec.field)
    is_claim = not get_grader(grader).scores_fields
    if is_claim or stale or not present:
        verdict = FieldVerdict(0.0, "none")
    elif spec.expected is None:
        verdict = FieldVerdict(1.0, "deterministic")
    else:
        verdict = await grade_two_tier(
            grader, got, spec.expected, spec.tolerance, field=spec.field, judge=judge,
            context=context, artifact=artifact.fields,
        )
    return FieldRow(
        artifact=artifact.artifact_id, field=spec.field, expected=spec.expected, got=got, grader=grader,
        tier=verdict.tier, score=round(verdict.score, 4), stale=stale, required=spec.required,
        present=present, counted=not is_claim and (spec.required or present),
    )


def _missing_artifact(expectation: ArtifactExpectation) -> ArtifactScore:
    minimum = expectation.lifecycle_min.value if expectation.lifecycle_min else None
    rows = [
        FieldRow(artifact=expectation.artifact_id, field=f.field, expected=f.expected, grader=f.grader,
                 tier="none", score=0.0, required=f.required, counted=False)
        for f in expectation.fields
    ]
    return ArtifactScore(
        artifact_id=expectation.artifact_id, present=False, lifecycle=None, lifecycle_min=minimum,
        lifecycle_ok=minimum is None, afa=0.0, completeness=0.0, stale_fact_rate=0.0,
        missing_required=[f.field for f in expectation.fields if f.required], rows=rows,
    )


async def score_artifact(
    expectation: ArtifactExpectation, artifact: ArtifactSnapshot | None, judge: FieldJudge | None,
) -> ArtifactScore:
    """Grade one artifact expectation against the artifact as the session left it."""
    if artifact is None:
        return _missing_artifact(expectation)
    minimum = expectation.lifecycle_min.value if expectation.lifecycle_min else None
    artifact_type = expectation.artifact_type or artifact.artifact_type
    context = f"{artifact.artifact_id} ({artifact_type})"
    rows = [await _grade_field(spec, artifact, context, judge) for spec in expectation.fields]
    counted = [row.score for row in rows if row.counted]
    required = [row for row in rows if row.required]
    protected = list(dict.fromkeys(expectation.must_not_be_stale))
    stale_protected = [name for name in protected if name in artifact.stale_fields]
    return ArtifactScore(
        artifact_id=artifact.artifact_id,
        present=True,
        lifecycle=artifact.lifecycle,
        lifecycle_min=minimum,
        lifecycle_ok=_lifecycle_ok(artifact.lifecycle, minimum),
        afa=sum(counted) / len(counted) if counted else 1.0,
        completeness=sum(row.present for row in required) / len(required) if required else 1.0,
        stale_fact_rate=len(stale_protected) / len(protected) if protected else 0.0,
        missing_required=[row.field for row in required if not row.present],
        claim_atom_fields=[row.field for row in rows if not get_grader(row.grader).scores_fields],
        stale_protected=stale_protected,
        rows=rows,
    )
