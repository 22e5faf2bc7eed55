"""Gates GS, PC, RA, WA and PTS (reference §3.3) for one finished session.

A WA that hinges on judge verdicts still pending is undetermined: it is left out of
``components`` and PTS is ``None`` — unless another gate has already failed the run (PTS 0).
"""

from __future__ import annotations

from harness.tasks.models import GoldSpec, PredicateSpec

from .artifact_score import ArtifactScore, score_artifact
from .context import GradingContext
from .predicates import evaluate_predicate
from .report import GATES, FailedPredicate, Gate, GradeReport

__all__ = ["grade"]


def _name(spec: PredicateSpec) -> str:
    return spec.id or spec.kind


async def _failures(specs: list[PredicateSpec], ctx: GradingContext, gate: Gate, role: str) -> list[FailedPredicate]:
    """Predicates among ``specs`` that do not hold."""
    failed = []
    for spec in specs:
        result = await evaluate_predicate(spec, ctx)
        if not result.holds:
            failed.append(FailedPredicate(id=_name(spec), kind=spec.kind, gate=gate, reason=result.reason, role=role))
    return failed


async def _terminal(gold: GoldSpec, ctx: GradingContext) -> list[FailedPredicate]:
    """Failures of the terminal state, or none when it or any alternate terminal state holds."""
    failed = await _failures(gold.terminal_state, ctx, "GS", "terminal")
    if not failed:
        return []
    for alternate in gold.alternate_terminal_states:
        if not await _failures(alternate, ctx, "GS", "terminal"):
            return []
    return failed


async def _forbidden(gold: GoldSpec, ctx: GradingContext) -> list[FailedPredicate]:
    held = []
    for spec in gold.forbidden:
        result = await evaluate_predicate(spec, ctx)
        if result.holds:
            held.append(FailedPredicate(id=_name(spec), kind=spec.kind, gate="PC", reason=result.reason,
                                        role="forbidden"))
    return held


async def _critical_gates(gold: GoldSpec, ctx: GradingContext) -> list[FailedPredicate]:
    failed = []
    for gate in gold.critical_gates:
        result = await evaluate_predicate(gate.predicate, ctx)
        if result.holds != gate.must_hold:
            reason = result.reason if gate.must_hold else f"must not hold, but {result.reason}"
            failed.append(FailedPredicate(id=gate.id, kind=gate.predicate.kind, gate="PC", reason=reason,
                                          role="critical_gate"))
    return failed


async def grade(gold: GoldSpec, ctx: GradingContext) -> GradeReport:
    """Evaluate every gold predicate and artifact expectation into gates, PTS and AFA."""
    terminal = await _terminal(gold, ctx)
    required = await _failures(gold.required_actions + gold.required_evidence, ctx, "RA", "required")
    forbidden = await _forbidden(gold, ctx)
    critical = await _critical_gates(gold, ctx)
    scores: list[ArtifactScore] = [
        await score_artifact(exp, ctx.snapshot.artifacts.get(exp.artifact_id), ctx.judge)
        for exp in gold.artifact_expectations
    ]
    verdicts = [score.verdict for score in scores]
    wa: bool | None = False if False in verdicts else (None if None in verdicts else True)
    components = {"GS": not terminal, "PC": not forbidden and not critical, "RA": not required}
    if wa is not None:
        components["WA"] = wa
    pending = [key for score in scores for key in score.pending_fields]
    passed_gates = sum(components.get(g, False) for g in GATES)
    decided_fail = not all(components.values())
    return GradeReport(
        pts=0 if decided_fail else (None if wa is None else 1),
        components=components,
        afa=None if pending else (round(sum(s.afa for s in scores) / len(scores), 4) if scores else 1.0),
        progress_score=round(passed_gates / len(GATES), 4),
        critical_gate_failures=[p.id for p in critical],
        failed_required_actions=[p.id for p in required],
        failed_terminal=[p.id for p in terminal],
        failed_forbidden=[p.id for p in forbidden],
        artifact_failures=[s.artifact_id for s in scores if s.verdict is False],
        failed_predicates=terminal + forbidden + critical + required,
        fields=[row for score in scores for row in score.rows],
        pending_fields=pending,
        details={"artifacts": {s.artifact_id: s.summary() for s in scores}},
        artifact_checks=[check for s in scores if s.verdict is False for check in s.artifact_checks()],
    )
