"""Paired comparison of two models on the tasks both completed (``results --compare A B``).

Each task gives one paired difference: A's pass rate over its k repetitions minus B's. The report
is the mean difference in percentage points with a task-bootstrap interval, the per-task wins /
losses / ties, the same for pass@k, and an exact two-sided sign test over the untied tasks —
so "A beats B" is read off the same tasks, not two different samples.
"""

from __future__ import annotations

from math import comb

import numpy as np
from pydantic import BaseModel

from .bootstrap import bootstrap_ci, ci_withheld
from .leaderboard import Reliability

__all__ = ["PairedComparison", "compare", "sign_test_p"]


class PairedComparison(BaseModel):
    a: str
    b: str
    n_tasks: int
    pass1_a_pct: float | None
    pass1_b_pct: float | None
    pass1_diff_pp: float | None
    pass1_diff_ci_pp: tuple[float, float] | None
    pass_at_k_diff: int
    pass_at_k_diff_ci_pp: tuple[float, float] | None
    wins: int
    losses: int
    ties: int
    sign_test_p: float | None
    #: Why the intervals are ``None`` (too few tasks), else ``None``.
    ci_note: str | None = None
    #: Per task: A's and B's passes out of k.
    per_task: dict[str, tuple[int, int]]


def sign_test_p(wins: int, losses: int) -> float | None:
    """Exact two-sided binomial sign test of ``wins`` vs ``losses`` (ties dropped)."""
    n = wins + losses
    if n == 0:
        return None
    tail = sum(comb(n, i) for i in range(0, min(wins, losses) + 1)) / 2**n
    return min(1.0, 2.0 * float(tail))


def compare(key_a: str, a: Reliability, key_b: str, b: Reliability) -> PairedComparison:
    tasks = sorted(set(a.outcomes) & set(b.outcomes))
    rate_a = np.array([np.mean(a.outcomes[t]) for t in tasks], dtype=float)
    rate_b = np.array([np.mean(b.outcomes[t]) for t in tasks], dtype=float)
    any_a = np.array([max(a.outcomes[t]) for t in tasks], dtype=float)
    any_b = np.array([max(b.outcomes[t]) for t in tasks], dtype=float)
    diff = rate_a - rate_b
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())

    def mean_pp(rows: np.ndarray) -> np.ndarray:
        return np.asarray(100.0 * rows.mean(axis=1))

    withheld = ci_withheld(len(tasks))
    ci = None if withheld else bootstrap_ci(diff, mean_pp)
    ci_k = None if withheld else bootstrap_ci(any_a - any_b, mean_pp)
    return PairedComparison(
        a=key_a,
        b=key_b,
        n_tasks=len(tasks),
        pass1_a_pct=100.0 * float(rate_a.mean()) if tasks else None,
        pass1_b_pct=100.0 * float(rate_b.mean()) if tasks else None,
        pass1_diff_pp=100.0 * float(diff.mean()) if tasks else None,
        pass1_diff_ci_pp=ci,
        pass_at_k_diff=int(any_a.sum() - any_b.sum()),
        pass_at_k_diff_ci_pp=ci_k,
        wins=wins,
        losses=losses,
        ties=len(tasks) - wins - losses,
        sign_test_p=sign_test_p(wins, losses),
        ci_note=withheld,
        per_task={t: (sum(a.outcomes[t]), sum(b.outcomes[t])) for t in tasks},
    )
