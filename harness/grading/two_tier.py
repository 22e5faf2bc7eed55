"""Two-tier field grading: the deterministic grader first, the semantic judge only as a fallback.

Each grader says whether the judge may decide a field it fails (``FieldGraderDef.judge``): among the
built-ins, identifier-like graders (exact, casefold_exact, enum) and ``semantic`` as text,
``numeric_tolerance`` as a number; dates, phones, addresses, sets, lists and intervals never.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from harness.blame.errors import JudgeUnavailable
from harness.field_graders import get_grader

from .judge import FieldJudge
from .judge_prompt import clipped

__all__ = ["JUDGE_CONTEXT_FIELDS", "FieldVerdict", "grade_two_tier", "judge_context"]

#: How many artifact fields are shown to the judge as context, and how much of each value.
JUDGE_CONTEXT_FIELDS = 40
JUDGE_CONTEXT_VALUE_CHARS = 500

Tier = Literal["deterministic", "judge", "none", "pending"]


@dataclass(frozen=True)
class FieldVerdict:
    """A field score and which tier decided it.

    ``none``: the field was not graded at all; ``pending``: only the judge can decide and it did
    not answer (the score is then 0 but means nothing yet).
    """

    score: float
    tier: Tier


def judge_context(context: str, artifact: dict[str, Any] | None) -> str:
    """``context`` plus the first 40 ``k=v`` pairs of the artifact (each value cut to 500 characters),
    for disambiguation; the prompt bounds the whole (:mod:`.judge_prompt`)."""
    if not artifact:
        return context
    pairs = ", ".join(
        f"{k}={clipped(str(v), JUDGE_CONTEXT_VALUE_CHARS)}" for k, v in list(artifact.items())[:JUDGE_CONTEXT_FIELDS]
    )
    return f"{context} | other fields in the same artifact: {pairs}"


def _numeric_preamble(gold: Any, tolerance: float | None) -> str:
    return (
        f"This field is numeric: the reference value is {gold!r} (tolerance ±{tolerance or 0}). "
        "Spoken, spelled-out or hedged forms of the same number are equivalent (for example "
        "'around eight years' = 8, 'half a million' = 500000); a different number must FAIL. "
    )


async def grade_two_tier(
    grader: str,
    pred: Any,
    gold: Any,
    tolerance: float | None,
    *,
    field: str,
    judge: FieldJudge | None,
    context: str,
    artifact: dict[str, Any] | None,
) -> FieldVerdict:
    """Score ``pred`` against ``gold``; the judge is asked only when the deterministic tier fails."""
    definition = get_grader(grader)
    score = definition.score(pred, gold, tolerance)
    if definition.judge == "never":
        return FieldVerdict(score, "deterministic")
    if score >= 1.0:
        return FieldVerdict(1.0, "deterministic")
    if not str(pred).strip() or judge is None:
        return FieldVerdict(0.0, "deterministic")
    ctx = judge_context(context, artifact)
    if definition.judge == "number":
        ctx = _numeric_preamble(gold, tolerance) + ctx
    try:
        passed = await judge(field, pred, gold, ctx)
    except JudgeUnavailable:
        return FieldVerdict(0.0, "pending")
    return FieldVerdict(1.0 if passed else 0.0, "judge")
