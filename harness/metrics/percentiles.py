"""Percentiles and rounding exactly as the published analysis computes them.

Linear interpolation (sort, ``i = (n-1)·p``, interpolate between neighbours); one value is that
value; no value is ``None``, so a metric that has no samples is reported as missing, never as 0.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

__all__ = ["DECIMALS", "median", "percentile", "percentile_by_index", "rounded"]

#: Every ratio and statistic in ``result.json`` is rounded to this many decimal places.
DECIMALS = 4


def percentile(values: Sequence[float], p: float) -> float | None:
    """The ``p``-quantile (``0 <= p <= 1``) by linear interpolation; ``None`` for no values."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"percentile: p must be within [0, 1], got {p!r}")
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * p
    low = math.floor(position)
    if low + 1 >= len(ordered):
        return float(ordered[low])
    return float(ordered[low] + (ordered[low + 1] - ordered[low]) * (position - low))


def percentile_by_index(values: Sequence[float], p: float) -> float | None:
    """The published per-run rule for ``isl_ms`` p90/p95: ``sorted[round(p·(n−1))]``, Python's
    round-half-even; ``None`` for no values. ([100, 200, 300, 400] → p90 = p95 = 400.)"""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"percentile_by_index: p must be within [0, 1], got {p!r}")
    if not values:
        return None
    ordered = sorted(values)
    return float(ordered[round(p * (len(ordered) - 1))])


def median(values: Sequence[float]) -> float | None:
    """``statistics.median`` (mean of the two middle values for even counts); ``None`` when empty."""
    return float(statistics.median(values)) if values else None


def rounded(value: float | None) -> float | None:
    """``value`` rounded to :data:`DECIMALS` places, ``None`` kept as is."""
    return None if value is None else round(value, DECIMALS)
