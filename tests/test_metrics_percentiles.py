"""Percentiles and medians as the published analysis computes them (incl. the §10 vectors)."""

from __future__ import annotations

import pytest

from harness.metrics.percentiles import median, percentile, rounded


@pytest.mark.parametrize(
    ("values", "p", "expected"),
    [([], 0.5, None), ([5], 0.95, 5.0), ([1, 2, 3, 4], 0.5, 2.5), ([0, 10], 0.95, 9.5)],
)
def test_reference_vectors(values, p, expected):
    assert percentile(values, p) == expected


def test_percentile_sorts_its_input_and_hits_the_extremes():
    values = [40, 10, 30, 20]
    assert percentile(values, 0.0) == 10.0
    assert percentile(values, 1.0) == 40.0
    assert percentile(values, 0.9) == pytest.approx(37.0)


def test_percentile_rejects_p_outside_unit_interval():
    with pytest.raises(ValueError, match="within \\[0, 1\\], got 95"):
        percentile([1, 2], 95)


def test_median_is_mean_of_middle_values_and_none_when_empty():
    assert median([3, 1, 2]) == 2.0
    assert median([4, 1, 3, 2]) == 2.5
    assert median([]) is None


def test_rounded_keeps_none_and_rounds_to_four_places():
    assert rounded(None) is None
    assert rounded(1 / 3) == 0.3333
