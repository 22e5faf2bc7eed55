"""Reliability over k repetitions, exactly as published (reference §7.4), and the ranking.

``full`` = tasks having every repetition 0..k−1 graded; ``n = |full|``. pass@1 (mean of k) is the
mean over repetitions of the passes among full tasks; pass@k counts tasks passed at least once;
Reliable@k tasks passed every time. A task with a missing or still-pending repetition is left out
of these (it is not-yet-graded, neither a pass nor a fail) but its other runs still count in the
gate and latency pools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .run_tree import Campaign, Run

__all__ = ["Reliability", "rank", "reliability"]


@dataclass(frozen=True)
class Reliability:
    k: int
    #: Full task ids (sorted) and, per task, its 0/1 outcome per repetition.
    outcomes: dict[str, tuple[int, ...]]
    #: Tasks left out because a repetition is missing or pending.
    incomplete: tuple[str, ...]
    pending_runs: int

    @property
    def n(self) -> int:
        return len(self.outcomes)

    @property
    def rep_pass(self) -> list[int]:
        return [sum(passes[r] for passes in self.outcomes.values()) for r in range(self.k)]

    @property
    def k_of_n(self) -> dict[str, int]:
        return {task: sum(passes) for task, passes in self.outcomes.items()}

    @property
    def distribution(self) -> list[int]:
        counts = [0] * (self.k + 1)
        for passes in self.k_of_n.values():
            counts[passes] += 1
        return counts

    @property
    def pass1_mean(self) -> float:
        return sum(self.rep_pass) / self.k if self.k else 0.0

    @property
    def pass_at_k(self) -> int:
        return sum(1 for passes in self.k_of_n.values() if passes >= 1)

    @property
    def reliable_at_k(self) -> int:
        return sum(1 for passes in self.k_of_n.values() if passes == self.k)

    def pct(self, count: float) -> float | None:
        """``count`` as a percentage of ``n`` (``None`` when there is no full task)."""
        return 100.0 * count / self.n if self.n else None

    def rank_key(self) -> tuple[int, int, float]:
        return (self.pass_at_k, self.reliable_at_k, self.pass1_mean)


def _stored_pts(run: Run) -> int | None:
    return run.pts


def reliability(campaign: Campaign, k: int, pts: Callable[[Run], int | None] = _stored_pts) -> Reliability:
    """Reliability of ``campaign`` over repetitions 0..k−1; ``pts`` may read a run another way."""
    outcomes: dict[str, tuple[int, ...]] = {}
    incomplete: list[str] = []
    pending = 0
    for task_id in sorted(campaign.runs):
        reps = campaign.runs[task_id]
        pending += sum(1 for run in reps.values() if run.pts is None)
        values = [pts(reps[r]) if r in reps else None for r in range(k)]
        if any(v is None for v in values):
            incomplete.append(task_id)
        else:
            outcomes[task_id] = tuple(int(v) for v in values)  # type: ignore[arg-type]
    return Reliability(k, outcomes, tuple(incomplete), pending)


def rank(results: dict[str, Reliability]) -> list[str]:
    """Model keys by pass@k desc, then Reliable@k desc, then pass@1 desc (stable for ties)."""
    return sorted(results, key=lambda key: results[key].rank_key(), reverse=True)
