"""A graded session's outcome, the same word for every condition (C0 text and C1–C3 voice).

A judge that did not answer leaves verdicts pending: the session is ``PENDING`` (neither a pass
nor a fail) until ``apex-voice regrade`` fills them, never a ``FAILURE``. A simulator fallback
outranks the grade: the user said something the task's bank lacks, so the run is not comparable.
"""

from __future__ import annotations

from harness.grading.report import GradeReport

__all__ = ["session_outcome"]


def session_outcome(report: GradeReport, fallbacks: int = 0) -> str:
    """``SIMULATOR_FALLBACK``, ``PENDING``, ``SUCCESS`` or ``FAILURE``."""
    if fallbacks:
        return "SIMULATOR_FALLBACK"
    if report.pending:
        return "PENDING"
    return "SUCCESS" if report.pts else "FAILURE"
