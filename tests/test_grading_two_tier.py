"""Two-tier grading: when the judge is consulted and what context it is given."""

from __future__ import annotations

from typing import Any

from harness.grading.two_tier import grade_two_tier, judge_context


class RecordingJudge:
    def __init__(self, verdict: bool) -> None:
        self.verdict = verdict
        self.asked: list[tuple[str, Any, Any, str]] = []

    async def __call__(self, field: str, pred: Any, gold: Any, context: str) -> bool:
        self.asked.append((field, pred, gold, context))
        return self.verdict


async def _grade(grader: str, pred: Any, gold: Any, judge: RecordingJudge | None, tolerance: float | None = None,
                 artifact: dict[str, Any] | None = None):
    return await grade_two_tier(grader, pred, gold, tolerance, field="f", judge=judge, context="a1 (FORM)",
                                artifact=artifact)


async def test_deterministic_pass_never_asks_the_judge() -> None:
    judge = RecordingJudge(False)
    verdict = await _grade("exact", "CC-330", "CC-330", judge)
    assert (verdict.score, verdict.tier) == (1.0, "deterministic") and judge.asked == []


async def test_identifier_graders_fall_back_to_the_judge() -> None:
    for grader in ("exact", "casefold_exact", "enum", "semantic"):
        judge = RecordingJudge(True)
        verdict = await _grade(grader, "CC330", "CC-330", judge, artifact={"cost_center": "CC330", "n": 1})
        assert (verdict.score, verdict.tier) == (1.0, "judge")
        assert judge.asked == [("f", "CC330", "CC-330",
                                "a1 (FORM) | other fields in the same artifact: cost_center=CC330, n=1")]


async def test_blank_prediction_or_no_judge_scores_zero() -> None:
    judge = RecordingJudge(True)
    assert (await _grade("exact", "  ", "x", judge)).score == 0.0 and judge.asked == []
    assert (await _grade("semantic", "other", "x", None)).tier == "deterministic"


async def test_numeric_fallback_has_the_numeric_preamble() -> None:
    judge = RecordingJudge(True)
    verdict = await _grade("numeric_tolerance", "around two hundred", 200.0, judge, tolerance=0.01)
    assert verdict.score == 1.0
    context = judge.asked[0][3]
    assert context.startswith("This field is numeric: the reference value is 200.0 (tolerance ±0.01).")
    assert "'half a million' = 500000" in context and context.endswith("a1 (FORM)")


async def test_structured_graders_are_deterministic_only() -> None:
    judge = RecordingJudge(True)
    assert (await _grade("normalized_date", "next Tuesday", "2026-02-01", judge)).score == 0.0
    f1 = await _grade("set_f1", ["a", "b"], ["a"], judge)
    assert f1.score == 2 / 3 and f1.tier == "deterministic"
    assert judge.asked == []


def test_judge_context_shows_at_most_forty_fields() -> None:
    artifact = {f"k{i}": i for i in range(45)}
    context = judge_context("ctx", artifact)
    assert context.endswith("k39=39") and "k40" not in context
    assert judge_context("ctx", None) == "ctx"
