"""The equivalence tests: betting TOST (level α for every bounded distribution: exact sizes by
enumeration) and the sign-flip TOST of the shift model against brute force and statsmodels."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipcausal import permutation_test
from ipcausal.stats import EquivalenceResult, equivalence_test


def brute_one_sided(d: np.ndarray, delta: float, alternative: str) -> float:
    x = d - delta
    t = np.array(list(itertools.product([-1.0, 1.0], repeat=d.size))) @ np.abs(x)
    obs = x.sum()
    tol = 1e-9 * np.abs(x).sum()
    return float(np.mean(t >= obs - tol)) if alternative == "greater" else float(np.mean(t <= obs + tol))


@pytest.mark.parametrize("seed", range(3))
def test_tost_pvalues_equal_brute_force_one_sided_tests(seed: int) -> None:
    d = np.random.default_rng(seed).normal(0.1, 0.5, 12)
    res = equivalence_test(d, margin=0.6, ci_method="shift")
    assert res.method == "exact-enumeration"
    assert res.pvalue_lower == pytest.approx(brute_one_sided(d, -0.6, "greater"), abs=1e-15)
    assert res.pvalue_upper == pytest.approx(brute_one_sided(d, 0.6, "less"), abs=1e-15)
    assert res.pvalue == max(res.pvalue_lower, res.pvalue_upper)


def test_lattice_tost_equals_exact_lattice_tests_of_shifted_data() -> None:
    d = np.random.default_rng(1).integers(-2, 3, 400).astype(float)
    res = equivalence_test(d, margin=0.25, ci_method="shift")
    assert res.method == "exact-lattice" and res.ci_method == "exact-lattice-inversion"
    lo = permutation_test(d + 0.25, alternative="greater", method="exact")
    up = permutation_test(d - 0.25, alternative="less", method="exact")
    assert res.pvalue_lower == pytest.approx(lo.pvalue, rel=1e-9)
    assert res.pvalue_upper == pytest.approx(up.pvalue, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=8, max_size=13), st.sampled_from([0.3, 0.75, 1.0, 1.6]),
       st.sampled_from([0.05, 0.1, 0.2]))
def test_equivalent_iff_interval_inside_margin(values: list[int], margin: float, alpha: float) -> None:
    d = np.array(values, dtype=float) * 0.5
    res = equivalence_test(d, margin=margin, alpha=alpha, ci_method="shift")
    assert res.confidence_level == pytest.approx(1 - 2 * alpha)
    assert res.equivalent == (-margin < res.ci_low and res.ci_high < margin)


def test_close_to_statsmodels_ttost_at_large_n() -> None:
    from statsmodels.stats.weightstats import ttost_paired

    rng = np.random.default_rng(3)
    d = rng.normal(0.05, 1.0, 400)
    res = equivalence_test(d, margin=0.2, method="saddlepoint", ci_method="shift")
    p_t = ttost_paired(d, np.zeros_like(d), -0.2, 0.2)[0]
    assert res.pvalue == pytest.approx(p_t, rel=0.1)
    mc = equivalence_test(d, margin=0.2, n_resamples=20_000, rng=5, ci_method="shift")
    se = math.sqrt(res.pvalue * (1 - res.pvalue) / 20_000)  # Monte Carlo against the saddlepoint
    assert mc.method == "monte-carlo" and mc.pvalue == pytest.approx(res.pvalue, abs=4 * se)


def test_small_samples_cannot_show_equivalence() -> None:
    res = equivalence_test([0.0, 0.0, 0.0, 0.0], margin=10.0, ci_method="shift")
    assert not res.equivalent and res.pvalue == 1 / 16  # the all-same-sign vector alone
    assert equivalence_test(np.zeros(6), margin=1.0, ci_method="shift").pvalue == 1 / 64


def test_monte_carlo_is_reproducible_and_consistent() -> None:
    d = np.random.default_rng(4).exponential(1.0, 300) - 1.0
    a = equivalence_test(d, margin=0.3, n_resamples=4000, rng=12, ci_method="shift")
    b = equivalence_test(d, margin=0.3, n_resamples=4000, rng=12, ci_method="shift")
    assert a == b and a.n_resamples == 4000 and a.ci_method == "monte-carlo-inversion"
    assert a.pvalue >= 1 / 4001


def test_result_fields() -> None:
    res = equivalence_test([0.1, -0.2, 0.05, 0.0, 0.15, -0.1, 0.05, -0.05, 0.1, 0.0, -0.1, 0.05], margin=0.5,
                           ci_method="shift")
    assert isinstance(res, EquivalenceResult)
    assert "|mean(Δ)| ≥ 0.5" in res.null_hypothesis and "shift model" in res.null_hypothesis
    assert res.to_dict()["equivalent"] is res.equivalent and res.margin == 0.5 and res.n == 12
    assert res.statistic == pytest.approx(0.004166666666666667)
    with pytest.raises(AttributeError):
        res.pvalue = 0.5  # type: ignore[misc]


def test_validation() -> None:
    d = [0.1, 0.2, -0.1, 0.0]
    with pytest.raises(TypeError):
        equivalence_test(d)  # type: ignore[call-arg]  # margin is required
    for bad in (0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="`margin`"):
            equivalence_test(d, margin=bad, bound=1)
    for bad in ("0.1", True, None):
        with pytest.raises(TypeError, match="`margin`"):
            equivalence_test(d, margin=bad, bound=1)  # type: ignore[arg-type]
    for bad in (0.0, 0.5, 0.7, -0.1):
        with pytest.raises(ValueError, match="`alpha`"):
            equivalence_test(d, margin=0.5, bound=1, alpha=bad)
    with pytest.raises(TypeError, match="`alpha`"):
        equivalence_test(d, margin=0.5, bound=1, alpha="0.05")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`bound` is needed"):
        equivalence_test(d, margin=0.5)
    with pytest.raises(ValueError, match="`ci_method`"):
        equivalence_test(d, margin=0.5, bound=1, ci_method="t")
    with pytest.raises(ValueError, match="`margin`.*smaller than `bound`"):
        equivalence_test(d, margin=1.0, bound=1)
    with pytest.raises(ValueError, match="`d`: every value must lie in the range"):
        equivalence_test(d, margin=0.05, bound=0.15)
    for bad in (0, -1.0, math.inf):
        with pytest.raises(ValueError, match="`bound`"):
            equivalence_test(d, margin=0.5, bound=bad)
    with pytest.raises(TypeError, match="`bound`"):
        equivalence_test(d, margin=0.5, bound="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`method` applies to ci_method='shift'"):
        equivalence_test(d, margin=0.5, bound=1, method="exact")
    with pytest.raises(ValueError, match="`n_resamples` applies to ci_method='shift'"):
        equivalence_test(d, margin=0.5, bound=1, n_resamples=100)
    shift = dict(margin=1.0, ci_method="shift")
    with pytest.raises(ValueError, match="`method`"):
        equivalence_test(d, method="t", **shift)
    with pytest.raises(ValueError, match="`n_resamples`"):
        equivalence_test(d, n_resamples=0, **shift)
    with pytest.raises(TypeError, match="`n_resamples`"):
        equivalence_test(d, n_resamples=10.5, **shift)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="`rng`"):
        equivalence_test(d, rng="seed", **shift)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="`rng`"):
        equivalence_test(d, margin=0.5, bound=1, rng="seed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`d`"):
        equivalence_test([1.0], **shift)
    with pytest.raises(ValueError, match="`d`"):
        equivalence_test([1.0, math.nan], margin=0.5, bound=1)


# -- the betting TOST: level α for every bounded distribution ----------------------------------
def test_issue_28_twenty_zeros_do_not_show_a_mean_below_one_tenth() -> None:
    # 20 zeros have probability 0.9**20 = 0.12 when Δ ~ Bernoulli(0.1), whose mean is the margin
    res = equivalence_test(np.zeros(20), margin=0.1, bound=1)
    assert not res.equivalent and res.pvalue > 0.05 and res.method == "betting"
    assert res.ci_method == "betting-fixed-n" and res.bound == 1.0 and "any distribution" in res.null_hypothesis
    old = equivalence_test(np.zeros(20), margin=0.1, ci_method="shift")  # the shift model's answer
    assert old.equivalent and old.pvalue == pytest.approx(9.5367431640625e-07)


@pytest.mark.parametrize("n", [20, 300])
def test_size_at_the_margin_for_bernoulli_differences(n: int) -> None:
    """Δ ~ Bernoulli(ε) has mean ε = the margin: seeded size of the betting TOST ≤ α + 3 SE, while
    the shift TOST's exact size (a function of the count of ones alone) is above α at n = 20."""
    from scipy.stats import binom

    eps, reps = 0.1, 1500
    gen = np.random.default_rng(n)
    hits = sum(equivalence_test((gen.random(n) < eps).astype(float), margin=eps, bound=1).equivalent
               for _ in range(reps))
    assert hits / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    if n == 20:
        shift = sum(binom.pmf(k, n, eps) for k in range(n + 1)
                    if equivalence_test(np.r_[np.ones(k), np.zeros(n - k)], margin=eps, ci_method="shift").equivalent)
        assert shift > 0.12  # issue 28: 0.127


def test_size_at_the_margin_for_a_sparse_three_point_lattice() -> None:
    """Δ ∈ {−1, 0, 1} with P = (.01, .96, .03) (mean .02 = ε), n = 50: seeded size ≤ α + 3 SE."""
    gen = np.random.default_rng(11)
    reps = 1500
    hits = sum(equivalence_test(gen.choice([-1.0, 0.0, 1.0], 50, p=[0.01, 0.96, 0.03]), margin=0.02,
                                bound=1).equivalent for _ in range(reps))
    assert hits / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=60), st.sampled_from([0.2, 0.5, 1.5]),
       st.sampled_from([0.05, 0.1, 0.25]))
def test_betting_equivalent_iff_interval_inside_margin(values: list[int], margin: float, alpha: float) -> None:
    d = np.array(values, dtype=float)
    res = equivalence_test(d, margin=margin, bound=3, alpha=alpha)
    assert res.confidence_level == pytest.approx(1 - 2 * alpha)
    assert res.equivalent == (-margin < res.ci_low and res.ci_high < margin)
    assert (res.pvalue_lower <= alpha) == (res.ci_low > -margin)
    assert (res.pvalue_upper <= alpha) == (res.ci_high < margin)
    assert -3 <= res.ci_low <= res.ci_high <= 3 and math.isfinite(res.pvalue)


def test_betting_tost_shows_equivalence_with_enough_pairs_and_is_reproducible() -> None:
    d = np.random.default_rng(2).choice([-1.0, 0.0, 1.0], size=600, p=[0.3, 0.4, 0.3])
    a = equivalence_test(d, margin=0.15, bound=1)
    assert a.equivalent and a == equivalence_test(d, margin=0.15, bound=1)
    assert not equivalence_test(d[:30], margin=0.15, bound=1).equivalent  # 30 pairs: inconclusive
