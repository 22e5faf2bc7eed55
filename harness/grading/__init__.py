"""Grading: gold predicates, field graders, the semantic judge, gates and PTS.

Everything is computed from an :class:`~mcp_servers.records.EnvironmentSnapshot`, so a session
graded from a sandbox's control API and one graded in-process get the same report.
"""

from .context import GradingContext
from .gates import grade
from .judge import JUDGE_VERSION, SemanticJudge
from .judge_cache import JudgeCache, judge_cache_key
from .predicates import PredicateResult, evaluate_predicate
from .report import FailedPredicate, FieldRow, GradeReport
from .two_tier import FieldVerdict, grade_two_tier

__all__ = [
    "JUDGE_VERSION",
    "FailedPredicate",
    "FieldRow",
    "FieldVerdict",
    "GradeReport",
    "GradingContext",
    "JudgeCache",
    "PredicateResult",
    "SemanticJudge",
    "evaluate_predicate",
    "grade",
    "grade_two_tier",
    "judge_cache_key",
]
