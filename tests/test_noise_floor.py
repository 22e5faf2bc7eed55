"""The noise floor's figures, worked out by hand on small verdict tables."""

from __future__ import annotations

from math import sqrt

import pytest

from harness.results.noise_floor import Z_ALPHA, Z_POWER, noise_floor, noise_line, pair_noise

# Four tasks, three repetitions: passes 3, 2, 1, 0.
MIXED = {"a": (1, 1, 1), "b": (1, 0, 1), "c": (0, 0, 1), "d": (0, 0, 0)}
Z = Z_ALPHA + Z_POWER  # 2.8016


def test_flip_rate_and_pass_hat():
    floor = noise_floor(MIXED, 3)
    assert floor.flip_rate == 0.5 and floor.flipping_tasks == ["b", "c"]
    # Two repetitions of b disagree in 2 of the 3 pairs, of c too: (0 + 2/3 + 2/3 + 0) / 4.
    assert floor.pairwise_disagreement == pytest.approx(1 / 3)
    # pass^1 = 6/12; pass^2 = (C(3,2) + C(2,2)) / (C(3,2)·4) = 4/12; pass^3 = 1/4 = Reliable@3 / n.
    assert floor.pass_hat == pytest.approx([0.5, 1 / 3, 0.25])
    assert floor.reliable_at_k_fraction == 0.25
    assert floor.pass_at_k_minus_pass_hat_k == pytest.approx(0.75 - 0.25)


def test_mde_and_repetitions_needed():
    floor = noise_floor(MIXED, 3)
    # Per task p(1−p)/k estimated as s(k−s)/(k²(k−1)): 0, 2/18, 2/18, 0 → mean 1/18; two campaigns: 2/18.
    assert floor.mde_pp == pytest.approx(100 * Z * sqrt(2 / 18 / 4))  # 46.7 pp
    assert floor.mde_pp == pytest.approx(46.69, abs=0.01)
    assert floor.resolution_pp == pytest.approx(100 / 12)
    # p(1−p) averages 1/6: k ≥ (Z·100/Δ)² · 2 · (1/6) / 4 → 261.6 → 262 for 5 pp, 65.4 → 66 for 10 pp.
    assert floor.reps_needed == {"5": 262, "10": 66}
    line = noise_line("m", floor)
    assert "verdict flips in 2/4 tasks (50.0 %)" in line and "pass^3 25.0 %" in line and "MDE 46.7 pp" in line


def test_a_deterministic_campaign_shows_no_noise():
    floor = noise_floor({"a": (1, 1, 1), "b": (0, 0, 0)}, 3)
    assert floor.flip_rate == 0.0 and floor.mde_pp == 0.0 and floor.reps_needed == {"5": None, "10": None}
    assert "no repetition noise seen (resolution 16.7 pp)" in noise_line("m", floor)
    assert noise_floor({"a": (1,)}, 1).mde_pp is None


def test_a_pair_says_whether_its_difference_is_inside_the_noise():
    same_rate = pair_noise(MIXED, {"a": (1, 1, 1), "b": (1, 1, 1), "c": (0, 0, 0), "d": (0, 0, 0)}, 3, "x", "y")
    # The difference is 0 pp; only x varies: mean variance (2/18 + 2/18) / 4 = 1/18 over n = 4 tasks.
    assert same_rate.diff_pp == 0.0 and same_rate.inside_noise
    assert same_rate.mde_pp == pytest.approx(100 * Z * sqrt(1 / 18 / 4))  # 33.0 pp
    assert "inside the noise" in same_rate.sentence
    far = pair_noise({t: (1, 1, 1) for t in "abcdefgh"}, {t: (1, 0, 0) for t in "abcdefgh"}, 3, "x", "y")
    # +66.7 pp; y's per-task variance 2/18 → MDE = Z·100·sqrt(2/18/8) = 33.0 pp.
    assert far.diff_pp == pytest.approx(200 / 3) and far.mde_pp == pytest.approx(100 * Z * sqrt(2 / 18 / 8))
    assert far.inside_noise is False and "outside the noise" in far.sentence
    assert pair_noise({"a": (1, 1)}, {"b": (1, 1)}, 2, "x", "y").n_tasks == 0
