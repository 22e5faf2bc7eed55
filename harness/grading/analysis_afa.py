"""The reference's analysis re-grader (§3.8), kept only to reproduce published AFA tables.

It differs from our WA rule (:mod:`.artifact_score`) on purpose: stale fields still pass,
``claim_atoms`` and presence-only fields are graded (and fail), and a wrong optional field does not
fail WA. Never use it for gating new runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.tasks.models import ArtifactExpectation, ArtifactFieldExpectation, GoldSpec
from mcp_servers.public_models import LIFECYCLE_ORDER
from mcp_servers.records import ArtifactSnapshot

from .judge import FieldJudge
from .two_tier import grade_two_tier

__all__ = ["AnalysisArtifactScore", "analysis_artifact_score", "analysis_scores"]


@dataclass
class AnalysisArtifactScore:
    """Published-style AFA of one artifact and its analysis WA verdict (``wa_ok``)."""

    artifact_id: str
    afa: float
    passed: int
    total: int
    wa_ok: bool
    reasons: list[str] = field(default_factory=list)
    missed_required: list[str] = field(default_factory=list)


async def _passes(
    spec: ArtifactFieldExpectation, artifact: ArtifactSnapshot, context: str, judge: FieldJudge | None,
) -> bool:
    pred = artifact.fields.get(spec.field, "")
    try:
        verdict = await grade_two_tier(
            spec.grader, pred, spec.expected, spec.tolerance, field=spec.field, judge=judge,
            context=context, artifact=artifact.fields,
        )
    except Exception:  # the reference counts any grader error as a failed field
        return False
    return verdict.score >= 1.0


async def analysis_artifact_score(
    expectation: ArtifactExpectation, artifact: ArtifactSnapshot | None, judge: FieldJudge | None,
) -> AnalysisArtifactScore:
    """Re-grade one artifact of a final workspace exactly as the published analysis did."""
    total = len(expectation.fields)
    if artifact is None:
        return AnalysisArtifactScore(expectation.artifact_id, 0.0, 0, total, False, ["artifact-missing"])
    reasons: list[str] = []
    minimum = expectation.lifecycle_min.value if expectation.lifecycle_min else None
    if minimum is not None and (
        artifact.lifecycle not in LIFECYCLE_ORDER
        or LIFECYCLE_ORDER.index(artifact.lifecycle) < LIFECYCLE_ORDER.index(minimum)
    ):
        reasons.append(f"lifecycle<{minimum}")
    context = expectation.artifact_type
    passed = 0
    missed: list[str] = []
    for spec in expectation.fields:
        ok = await _passes(spec, artifact, context, judge)
        passed += ok
        if spec.required and (not ok or spec.field in artifact.stale_fields):
            missed.append(spec.field)
            reasons.append(f"required-field:{spec.field}")
    return AnalysisArtifactScore(
        artifact_id=artifact.artifact_id,
        afa=passed / total if total else 1.0,
        passed=passed,
        total=total,
        wa_ok=not reasons,
        reasons=reasons,
        missed_required=missed,
    )


async def analysis_scores(
    gold: GoldSpec, workspace: dict[str, ArtifactSnapshot], judge: FieldJudge | None,
) -> list[AnalysisArtifactScore]:
    """Analysis scores of every artifact expectation against a ``final_workspace.json`` mapping."""
    return [
        await analysis_artifact_score(exp, workspace.get(exp.artifact_id), judge)
        for exp in gold.artifact_expectations
    ]
