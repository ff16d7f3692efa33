"""The betting interval for a bounded mean: a plain-Python oracle, its coverage where the shift
interval fails (issue 28), the order it needs, its agreement with its p, scale and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipcausal import permutation_test
from ipcausal.stats import BoundedMeanTestResult, bounded_mean_test, equivalence_test
from ipcausal.stats.meanci import TRUNCATION


def _oracle_log_capital(y: list[float], m: float, side: int, log_inv_a: float) -> float:
    """log max_t K_t(m), written out from the definition (Waudby-Smith & Ramdas' fixed-n bets)."""
    n, total, dev, logk, best = len(y), 0.5, 0.25, 0.0, 0.0
    cap = (TRUNCATION / m if m > 0 else math.inf) if side > 0 else (TRUNCATION / (1 - m) if m < 1 else math.inf)
    for t, v in enumerate(y):
        lam = min(math.sqrt(2 * log_inv_a / (n * dev / (t + 1))), cap)
        logk += math.log(1 + side * lam * (v - m))
        best = max(best, logk)
        total += v
        dev += (v - total / (t + 2)) ** 2
    return best


@pytest.mark.parametrize("seed", range(4))
def test_pvalue_and_ends_equal_the_plain_definition(seed: int) -> None:
    gen = np.random.default_rng(seed)
    d = gen.choice([-2.0, -1.0, 0.0, 1.0, 2.0], size=40 + 20 * seed, p=[0.1, 0.15, 0.4, 0.2, 0.15])
    res = bounded_mean_test(d, bound=2)
    y = list((d + 2) / 4)
    la = math.log(2 / 0.05)
    p = min(1.0, 2 * min(math.exp(-_oracle_log_capital(y, 0.5, +1, la)), math.exp(-_oracle_log_capital(y, 0.5, -1, la))))
    assert res.pvalue == pytest.approx(p, rel=1e-12)
    lo, hi = (res.ci_low + 2) / 4, (res.ci_high + 2) / 4
    for end, side in ((lo, +1), (hi, -1)):  # the capital crosses 1/a at each end (up to the bisection)
        inner = _oracle_log_capital(y, end, side, la)
        outer = _oracle_log_capital(y, end - side * 1e-9, side, la)
        assert inner < la + 1e-12 and la <= outer + 1e-9
    assert res.statistic == pytest.approx(d.mean()) and res.n == d.size and res.bounds == (-2.0, 2.0)


def test_issue_28_covers_the_mean_where_the_shift_interval_does_not() -> None:
    """{−1, 0, 1} with P = (.01, .96, .03), n = 50 (mean 0.02): the shift interval covered 78 %."""
    gen = np.random.default_rng(28)
    reps, mu = 400, 0.02
    new = old = point = 0
    for _ in range(reps):
        d = gen.choice([-1.0, 0.0, 1.0], size=50, p=[0.01, 0.96, 0.03])
        r = bounded_mean_test(d, bound=1)
        new += r.ci_low <= mu <= r.ci_high
        s = permutation_test(d)
        old += s.ci_low <= mu <= s.ci_high
        point += s.ci_low == s.ci_high == 0.0
    assert new / reps >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / reps)
    assert old / reps < 0.85 and point > 0  # the shift interval: [0, 0] for 50 zeros


def test_the_order_must_not_depend_on_the_values() -> None:
    """Bernoulli(0.1) differences at the margin 0.1, n = 300: the exact size over the count of ones
    for the values in one sorted order (a function of the count) is 1 with the zeros first."""
    from scipy.stats import binom

    n = 300
    zeros_first = sum(binom.pmf(k, n, 0.1) for k in range(0, 61)  # P(k > 60) < 1e-10
                      if equivalence_test(np.r_[np.zeros(n - k), np.ones(k)], margin=0.1, bound=1).equivalent)
    assert zeros_first > 0.99


ALPHAS = st.sampled_from([0.01, 0.05, 0.2])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=80), st.sampled_from([-0.3, 0.0, 0.25]),
       st.sampled_from(["two-sided", "greater", "less"]), ALPHAS)
def test_m0_outside_the_interval_exactly_when_p_is_at_most_alpha(values: list[float], m0: float, alternative: str,
                                                                  alpha: float) -> None:
    res = bounded_mean_test(values, bound=1, m0=m0, alternative=alternative, confidence_level=1 - alpha)
    assert (res.pvalue <= alpha) == (not res.ci_low <= m0 <= res.ci_high)
    assert -1 <= res.ci_low <= res.ci_high <= 1 and 0 < res.pvalue <= 1
    assert all(math.isfinite(v) for v in (res.pvalue, res.ci_low, res.ci_high, res.statistic))
    if alternative == "greater":
        assert res.ci_high == 1
    if alternative == "less":
        assert res.ci_low == -1


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=2, max_size=60), st.sampled_from([1e-200, 1e-30, 3.7, 1e30, 1e200]))
def test_scale_changes_nothing(values: list[int], c: float) -> None:
    d = np.array(values, dtype=float)
    a, b = bounded_mean_test(d, bound=4), bounded_mean_test(d * c, bound=4 * c)
    assert b.pvalue == pytest.approx(a.pvalue, rel=1e-9, abs=1e-300)
    assert b.ci_low == pytest.approx(a.ci_low * c, rel=1e-9, abs=1e-12 * c)
    assert b.ci_high == pytest.approx(a.ci_high * c, rel=1e-9, abs=1e-12 * c)


def test_extremes_stay_finite_and_inside_the_range() -> None:
    for d, bound in (([1.7e308, -1.7e308, 1e308], 1.7976931348623157e308), ([5e-324, 0.0, 5e-324], 1e-323),
                     ([1.0] * 30, 1.0), ([-1.0] * 30, 1.0), ([0.0], 1.0)):
        r = bounded_mean_test(d, bound=bound)
        assert all(math.isfinite(v) for v in (r.pvalue, r.ci_low, r.ci_high, r.statistic))
        assert -bound <= r.ci_low <= r.statistic <= r.ci_high <= bound
    assert bounded_mean_test([1.0] * 30, bound=1).pvalue < 1e-4  # all at the bound: far from 0
    r = bounded_mean_test([3, 4, 4, 5], bound=(1, 5), m0=3)  # a range (low, high): ratings 1..5
    assert 1 <= r.ci_low <= 4 <= r.ci_high <= 5 and r.bounds == (1.0, 5.0)


def test_result_and_validation() -> None:
    r = bounded_mean_test([0.5, -0.25, 0.0, 1.0], bound=1)
    assert isinstance(r, BoundedMeanTestResult) and r.method == "betting" and r.ci_method == "betting-fixed-n"
    assert "any distribution on [-1, 1]" in r.null_hypothesis and r.to_dict()["bounds"] == [-1.0, 1.0]
    with pytest.raises(TypeError):
        bounded_mean_test([0.1, 0.2])  # type: ignore[call-arg]  # bound is required
    with pytest.raises(ValueError, match="`x`: every value must lie in the range"):
        bounded_mean_test([0.5, 2.0], bound=1)
    for bad in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError, match="`bound`"):
            bounded_mean_test([0.1], bound=bad)
    for bad in ("1", True, (1,), None):
        with pytest.raises(TypeError, match="`bound`"):
            bounded_mean_test([0.1], bound=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`bound` must have low < high"):
        bounded_mean_test([0.1], bound=(1, 1))
    with pytest.raises(ValueError, match="`m0` must lie in the range"):
        bounded_mean_test([0.1], bound=1, m0=2)
    with pytest.raises(ValueError, match="`alternative`"):
        bounded_mean_test([0.1], bound=1, alternative="both")
    with pytest.raises(ValueError, match="`confidence_level`"):
        bounded_mean_test([0.1], bound=1, confidence_level=1.0)
    with pytest.raises(ValueError, match="`x`"):
        bounded_mean_test([], bound=1)
    with pytest.raises(ValueError, match="`x`"):
        bounded_mean_test([0.1, math.nan], bound=1)
