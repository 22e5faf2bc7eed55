"""The noise floor of a campaign: how much of a pass rate is repetition noise (issue 35 item 5).

From each task's k verdicts (0/1, repetitions 0..k−1 of the campaign's denominator):

- **verdict-flip rate**: the share of tasks whose k verdicts are not all the same; and the
  pairwise disagreement: the chance that two repetitions of one task disagree,
  ``s(k−s) / C(k,2)`` averaged over tasks (s = passes);
- **pass^j** (τ-bench's, j = 1..k): the chance that j repetitions drawn without replacement all
  pass, ``C(s,j) / C(k,j)`` averaged over tasks; pass^1 is pass@1 and pass^k is Reliable@k / n;
- **minimum detectable difference** (MDE) between two campaigns of this size (same n tasks, k
  repetitions each) for a paired two-sided test at α = 0.05 and 80 % power, when the only noise is
  the repetitions': a task's pass rate over k repetitions varies by ``p(1−p)/k``, estimated
  without bias by ``s(k−s) / (k²(k−1))``; the paired difference of two such campaigns by twice
  that; MDE = (z₀.₉₇₅ + z₀.₈) · sqrt(mean variance · 2 / n), in percentage points. It cannot be
  finer than one verdict in n·k, which is reported beside it;
- **repetitions needed** for a stated difference Δ: the smallest k with MDE(k) ≤ Δ, from the same
  per-task variance.

Two campaigns compared task by task (``results --compare``): their per-task variances add, and a
difference smaller than that pair's MDE is said to be inside the noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import ceil, comb, sqrt

from pydantic import BaseModel

__all__ = ["Z_ALPHA", "Z_POWER", "NoiseFloor", "PairNoise", "noise_floor", "noise_line", "pair_noise"]

#: Two-sided α = 0.05 and 80 % power.
Z_ALPHA = 1.959963984540054
Z_POWER = 0.8416212335729143
#: Differences (pp) for which the repetitions needed are stated.
STATED_DIFFERENCES_PP = (5.0, 10.0)


class NoiseFloor(BaseModel):
    k: int
    n_tasks: int
    flip_rate: float | None
    flipping_tasks: list[str]
    pairwise_disagreement: float | None
    #: pass^j for j = 1..k (fractions).
    pass_hat: list[float]
    #: Reliable@k as a fraction of n, for the reader to see it equals pass^k.
    reliable_at_k_fraction: float | None
    #: pass@k − pass^k (fractions): the gap EVA reports.
    pass_at_k_minus_pass_hat_k: float | None
    mde_pp: float | None
    resolution_pp: float | None
    #: Δ (pp, as text) → repetitions needed, ``None`` when no repetition noise was seen.
    reps_needed: dict[str, int | None]


class PairNoise(BaseModel):
    n_tasks: int
    mde_pp: float | None
    diff_pp: float | None
    inside_noise: bool | None
    sentence: str


def _variance_of_rate(passes: int, k: int) -> float:
    """Unbiased estimate of p(1−p)/k for a task with ``passes`` of ``k`` (0 when k < 2)."""
    return passes * (k - passes) / (k * k * (k - 1)) if k >= 2 else 0.0


def _mde(variance_sum_per_task: float, n: int) -> float:
    return 100.0 * (Z_ALPHA + Z_POWER) * sqrt(variance_sum_per_task / n)


def noise_floor(outcomes: Mapping[str, Sequence[int]], k: int) -> NoiseFloor:
    """The noise floor of one campaign's per-task verdicts (each of length ``k``)."""
    n = len(outcomes)
    passes = {task: sum(verdicts) for task, verdicts in outcomes.items()}
    flipping = sorted(task for task, s in passes.items() if 0 < s < k)
    pass_hat = [sum(comb(s, j) for s in passes.values()) / (comb(k, j) * n) if n else 0.0 for j in range(1, k + 1)]
    # A task's rate variance p(1−p)/k, estimated; p(1−p) itself (for other k) is k times it.
    variances = [_variance_of_rate(s, k) for s in passes.values()]
    mean_variance = sum(variances) / n if n else 0.0
    reps: dict[str, int | None] = {}
    for delta in STATED_DIFFERENCES_PP:
        p_q = mean_variance * k
        reps[f"{delta:g}"] = None if p_q == 0 or not n else max(
            1, ceil(((Z_ALPHA + Z_POWER) * 100.0 / delta) ** 2 * 2 * p_q / n))
    pairwise = [s * (k - s) / comb(k, 2) for s in passes.values()] if k >= 2 else []
    return NoiseFloor(
        k=k, n_tasks=n,
        flip_rate=len(flipping) / n if n else None,
        flipping_tasks=flipping,
        pairwise_disagreement=sum(pairwise) / n if n and pairwise else None,
        pass_hat=pass_hat,
        reliable_at_k_fraction=sum(s == k for s in passes.values()) / n if n else None,
        pass_at_k_minus_pass_hat_k=(sum(s > 0 for s in passes.values()) / n - pass_hat[-1]) if n and pass_hat else None,
        mde_pp=_mde(2 * mean_variance, n) if n and k >= 2 else None,
        resolution_pp=100.0 / (n * k) if n and k else None,
        reps_needed=reps,
    )


def pair_noise(a: Mapping[str, Sequence[int]], b: Mapping[str, Sequence[int]], k: int, key_a: str, key_b: str) -> PairNoise:
    """Pair two campaigns task by task: their paired difference and the MDE of this pair."""
    tasks = sorted(set(a) & set(b))
    n = len(tasks)
    if not n:
        return PairNoise(n_tasks=0, mde_pp=None, diff_pp=None, inside_noise=None,
                         sentence=f"{key_a} vs {key_b}: no task in common; nothing to pair.")
    diff = 100.0 * sum(sum(a[t]) - sum(b[t]) for t in tasks) / (n * k)
    variance = sum(_variance_of_rate(sum(a[t]), k) + _variance_of_rate(sum(b[t]), k) for t in tasks) / n
    mde = _mde(variance, n) if k >= 2 else None
    inside = None if mde is None else abs(diff) < mde or (mde == 0 and diff == 0)
    if mde is None:
        sentence = f"{key_a} vs {key_b}: one repetition per task: the repetitions' noise cannot be seen."
    elif variance == 0:
        sentence = (f"{key_a} vs {key_b}: difference {diff:+.1f} pp over {n} paired tasks; no verdict varied across "
                    f"the {k} repetitions of either, so no repetition noise was seen (resolution {100.0 / (n * k):.1f} pp).")
    else:
        verdict = "inside the noise" if inside else "outside the noise"
        sentence = (f"{key_a} vs {key_b}: difference {diff:+.1f} pp over {n} paired tasks is {verdict}: the smallest "
                    f"difference this pair detects at 80 % power (paired, α = 0.05) is {mde:.1f} pp.")
    return PairNoise(n_tasks=n, mde_pp=mde, diff_pp=diff, inside_noise=inside, sentence=sentence)


def noise_line(key: str, floor: NoiseFloor) -> str:
    """One line per campaign under the leaderboard."""
    if floor.n_tasks == 0:
        return f"{key}: no complete task"
    hats = ", ".join(f"pass^{j} {100 * v:.1f} %" for j, v in enumerate(floor.pass_hat, start=1))
    if floor.k < 2:
        return f"{key}: {hats}; one repetition: no verdict can flip, the noise floor is unseen"
    flip = f"verdict flips in {len(floor.flipping_tasks)}/{floor.n_tasks} tasks ({100 * (floor.flip_rate or 0):.1f} %)"
    if floor.mde_pp == 0:
        mde = f"no repetition noise seen (resolution {floor.resolution_pp:.1f} pp)"
    else:
        needs = "; ".join(f"{delta} pp needs k={reps}" for delta, reps in floor.reps_needed.items())
        mde = f"MDE {floor.mde_pp:.1f} pp at 80 % power vs a campaign of this size ({needs})"
    return f"{key}: {flip}; {hats}; {mde}"
