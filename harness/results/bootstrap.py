"""Confidence intervals by resampling tasks (the unit the benchmark samples), with a fixed seed.

Repetitions of one task are not independent draws of the benchmark, so the bootstrap resamples
whole tasks with replacement and recomputes each rate; the interval is the percentile interval.
The seed is fixed so the same runs always print the same intervals.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

__all__ = ["BOOTSTRAP_SAMPLES", "CONFIDENCE", "MIN_CI_TASKS", "bootstrap_ci", "ci_withheld", "ratio_ci"]

BOOTSTRAP_SAMPLES = 2000
CONFIDENCE = 0.95
SEED = 20260929
#: Fewer tasks than this give no interval: a bootstrap over one or two tasks prints [100.0, 100.0],
#: a certainty the data cannot carry. The interval is withheld, and the reason is said instead.
MIN_CI_TASKS = 5


def ci_withheld(n_tasks: int) -> str | None:
    """Why no interval is given for ``n_tasks`` tasks, or ``None`` when one is."""
    if n_tasks >= MIN_CI_TASKS:
        return None
    return f"n/a: {n_tasks} task{'s' if n_tasks != 1 else ''} (< {MIN_CI_TASKS}) cannot carry a bootstrap interval"


@lru_cache(maxsize=8)
def _indices(n: int, samples: int) -> np.ndarray:
    """The resampled task indices; the same for every rate of ``n`` tasks (read-only)."""
    indices = np.random.default_rng(SEED).integers(0, n, size=(samples, n))
    indices.setflags(write=False)
    return indices


def bootstrap_ci(
    per_task: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], *, samples: int = BOOTSTRAP_SAMPLES
) -> tuple[float, float] | None:
    """Interval of ``statistic`` (vectorised over axis 1 of resampled rows); ``None`` for no tasks.

    ``per_task`` has one row per task; ``statistic`` receives an array of shape
    ``(samples, n, ...)`` and returns one value per sample.
    """
    if len(per_task) == 0:
        return None
    values = statistic(per_task[_indices(len(per_task), samples)])
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)


def ratio_ci(passes: np.ndarray, totals: np.ndarray, *, samples: int = BOOTSTRAP_SAMPLES) -> tuple[float, float] | None:
    """Interval of ``Σ passes / Σ totals`` (a pooled rate) with tasks resampled; ``None`` when empty."""
    keep = totals > 0
    passes, totals = passes[keep], totals[keep]
    if len(totals) == 0:
        return None
    idx = _indices(len(totals), samples)
    values = passes[idx].sum(axis=1) / totals[idx].sum(axis=1)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)
