"""Reliability over k repetitions (reference §7.4) over the campaign's denominator, and the ranking.

``full`` = tasks having every repetition 0..k−1 counted; ``n = |full|``. pass@1 (mean of k) is the
mean over repetitions of the passes among full tasks; pass@k counts tasks passed at least once;
Reliable@k tasks passed every time. A planned cell without a usable score counts as a failure
(:mod:`.denominator`); a task with a still-pending repetition is left out of these (not yet
graded, neither a pass nor a fail) but its other runs still count in the gate and latency pools.
Without a recorded plan (the published runs) a task missing a repetition is left out, as published.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from .denominator import Unscored, cell_values
from .run_tree import Campaign, Run

__all__ = ["Reliability", "rank", "reliability"]


@dataclass(frozen=True)
class Reliability:
    k: int
    #: Full task ids (sorted) and, per task, its 0/1 outcome per repetition.
    outcomes: dict[str, tuple[int, ...]]
    #: Tasks left out because a repetition is missing (published runs without a plan).
    incomplete: tuple[str, ...]
    pending_runs: int
    #: Cells of repetitions 0..k−1 that were planned, and those of them without a usable score.
    n_planned: int = 0
    unscored: tuple[Unscored, ...] = ()
    #: Whether ``campaign.json`` recorded the plan (else the runs present stand for it).
    plan_recorded: bool = False
    #: Passes among the scored cells and their number: the "scored cells only" reading.
    scored_passes: int = 0

    @property
    def complete(self) -> bool:
        return not self.unscored

    @property
    def n_scored(self) -> int:
        return self.n_planned - len(self.unscored)

    @property
    def scored_only_pass1_pct(self) -> float | None:
        """pass@1 % over the scored cells alone: beside the campaign's figure, never instead of it."""
        return 100.0 * self.scored_passes / self.n_scored if self.n_scored else None

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

    def rank_key(self) -> tuple[Fraction, Fraction, Fraction]:
        """pass@k, Reliable@k and pass@1 as exact fractions of ``n`` (all 0 without a full task): equal
        rates compare equal, whatever their counts."""
        if not self.n or not self.k:
            return (Fraction(0), Fraction(0), Fraction(0))
        return (Fraction(self.pass_at_k, self.n), Fraction(self.reliable_at_k, self.n),
                Fraction(sum(self.rep_pass), self.n * self.k))


def _stored_pts(run: Run) -> int | None:
    return run.pts


def reliability(campaign: Campaign, k: int, pts: Callable[[Run], int | None] = _stored_pts) -> Reliability:
    """Reliability of ``campaign`` over repetitions 0..k−1; ``pts`` may read a run another way."""
    cells = cell_values(campaign, k, pts)
    outcomes: dict[str, tuple[int, ...]] = {}
    incomplete: list[str] = []
    for task_id, values in cells.values.items():
        if any(v is None for v in values):
            incomplete.append(task_id)
        else:
            outcomes[task_id] = tuple(int(v) for v in values)  # type: ignore[arg-type]
    pending = sum(1 for run in campaign.all_runs() if run.pts is None)
    unscored = {(u.task_id, u.rep) for u in cells.unscored}
    scored_passes = sum(
        int(bool(pts(run))) for run in campaign.all_runs() if run.rep < k and (run.task_id, run.rep) not in unscored
    )
    return Reliability(k, outcomes, tuple(incomplete), pending, cells.n_planned, tuple(cells.unscored),
                       cells.plan_recorded, scored_passes)


def rank(results: dict[str, Reliability], intervals: dict[str, tuple[float, float] | None] | None = None) -> list[str]:
    """Model keys by pass@k %, Reliable@k %, pass@1 % (desc); ties by the lower end of ``intervals[key]``
    (each campaign's pass@1 interval; none given or withheld ranks below one given), then stable."""

    def key(name: str) -> tuple[Fraction, Fraction, Fraction, float]:
        interval = (intervals or {}).get(name)
        return (*results[name].rank_key(), interval[0] if interval else float("-inf"))

    return sorted(results, key=key, reverse=True)
