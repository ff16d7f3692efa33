"""Consistency properties on every route (issue 28, item 4), with hypothesis: 0 outside the
interval exactly when p ≤ α; p and the interval unchanged by scale from 1e-200 to 1e200 (or a
clear ValueError); no inf/NaN from finite input; an exact p never below the exact value."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ipcausal import permutation_test, personalization_bias
from ipcausal.stats import heterogeneity_test, trend_test
from ipcausal.stats import _kernels as K
from ipcausal.stats.clusters import unequal_cluster_interval

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCALES = st.sampled_from([1e-200, 1e-100, 1e-7, 3.0, 1e7, 1e100, 1e200])
LEVELS = st.sampled_from([0.8, 0.9, 0.95])


def _agree(res) -> bool:  # type: ignore[no-untyped-def]
    return (res.pvalue <= 1 - res.confidence_level) == (not res.ci_low <= 0 <= res.ci_high)


@FAST
@given(st.lists(st.integers(-3, 3), min_size=2, max_size=16), LEVELS)
def test_interval_and_p_agree_on_the_enumeration_route(values: list[int], level: float) -> None:
    res = permutation_test(np.array(values, float) * 0.1, confidence_level=level)  # 0.1: breakpoints off the grid
    assert res.method == "exact-enumeration" and _agree(res)


@FAST
@given(st.lists(st.integers(-4, 4), min_size=30, max_size=90), LEVELS)
def test_interval_and_p_agree_on_the_lattice_route(values: list[int], level: float) -> None:
    res = permutation_test(values, confidence_level=level)
    assert _agree(res)


@FAST
@given(st.lists(st.integers(-3, 3), min_size=17, max_size=40), st.integers(0, 10**6), LEVELS)
def test_interval_and_p_agree_on_the_monte_carlo_route(values: list[int], seed: int, level: float) -> None:
    """Integer data with ties: breakpoints at 0 exactly (issue 28: p = 0.0525 with the CI (8.9e-16, 2.0))."""
    res = permutation_test(values, method="monte-carlo", rng=seed, n_resamples=2000, confidence_level=level)
    assert _agree(res)


@FAST
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=25, max_size=60), LEVELS)
def test_interval_and_p_agree_on_the_saddlepoint_route(values: list[float], level: float) -> None:
    res = permutation_test(values, method="saddlepoint", confidence_level=level)
    assert _agree(res)


def test_issue_28_monte_carlo_breakpoint() -> None:
    res = permutation_test([3, 2, 3, 2, 2, -1, -1, 0, 0, 3, 2, -1, 0], method="monte-carlo", rng=2, n_resamples=2000)
    assert res.pvalue > 0.05 and res.ci_low == 0.0 and res.ci_high == 2.0


@pytest.mark.parametrize("seed", [14, 25, 30, 35])
def test_issue_28_unequal_cluster_interval_agrees_with_the_cluster_test(seed: int) -> None:
    """Integer Δ in 14 clusters of 1–3 pairs: the cluster sums' p is exact; the interval's old
    bisection (Monte Carlo p of shifted sums) excluded 0 at p = 0.06–0.1 in these four."""
    g = np.random.default_rng(seed)
    v, w = [], []
    for _ in range(14):
        size = int(g.integers(1, 4))
        d = []
        for _ in range(size):  # score_i, score_j = 1..3 each, score_j one higher with probability 0.3
            s_i = int(g.integers(1, 4))
            d.append(int(g.integers(1, 4)) + int(g.random() < 0.3) - s_i)
        v.append(float(sum(d)))
        w.append(float(size))
    v_arr, w_arr = np.array(v), np.array(w)
    p = permutation_test(v_arr).pvalue
    lo, hi = unequal_cluster_interval(v_arr, w_arr, 3.0, method="auto", n_resamples=100_000, level=0.95)
    assert (p <= 0.05) == (not lo <= 0 <= hi)


@FAST
@given(st.lists(st.integers(-4, 4), min_size=6, max_size=60), SCALES)
def test_scale_changes_neither_p_nor_interval(values: list[int], c: float) -> None:
    d = np.array(values, dtype=float)
    for method in ("auto", "monte-carlo"):
        a = permutation_test(d, method=method, rng=3, n_resamples=1000)
        b = permutation_test(d * c, method=method, rng=3, n_resamples=1000)
        assert b.pvalue == pytest.approx(a.pvalue, rel=1e-12) and b.method == a.method
        for x, y in ((a.ci_low, b.ci_low), (a.ci_high, b.ci_high)):
            assert (math.isinf(x) and y == x) or y == pytest.approx(x * c, rel=1e-9, abs=1e-300)
        assert all(math.isfinite(v) or v in (b.ci_low, b.ci_high) for v in (b.pvalue, b.statistic, b.effect_size))


def test_issue_28_scale_reproductions() -> None:
    ps = [heterogeneity_test(np.array([[1.0, -1.0]] * 3) * c, method="exact").pvalue for c in (1e-200, 1.0)]
    assert ps == [0.25, 0.25]
    with pytest.raises(ValueError, match="`y`: the statistic .* overflows"):
        heterogeneity_test(np.array([[1.0, -1.0]] * 3) * 1e200, method="exact")
    y = np.random.default_rng(0).normal(size=(5, 3))
    assert trend_test(y, scores=[0, 1e-300, 2e-300]).pvalue == trend_test(y, scores=[0, 1, 2]).pvalue
    r = permutation_test([1e308] * 6)
    assert (r.ci_low, r.ci_high) == (1e308, 1e308) and r.pvalue == 1 / 32
    pb = personalization_bias([3e300, 4e300, 4e300, 2e300, 2e300, 3e300], ["a"] * 3 + ["b"] * 3, rng=0)
    assert math.isfinite(pb.statistic) and pb.ci_low <= pb.statistic <= pb.ci_high < math.inf


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=3, max_size=12).filter(lambda v: np.ptp(v) > 0), SCALES)
def test_relabeling_tests_are_scale_free(values: list[int], c: float) -> None:
    y = np.array(values, dtype=float)
    y = np.stack([y, np.roll(y, 1), y[::-1]], axis=1)[:6]
    for fn in (trend_test, heterogeneity_test):
        base = fn(y, method="exact").pvalue
        try:
            assert fn(y * c, method="exact").pvalue == base
        except ValueError as exc:  # the statistic itself overflows: said, not returned as inf
            assert "overflows" in str(exc) and c >= 1e100


def _exact_tail(k: np.ndarray, w0: int) -> Fraction:
    dist = {0: 1}
    for v in k.tolist():
        new: dict[int, int] = {}
        for w, m in dist.items():
            new[w] = new.get(w, 0) + m
            new[w + v] = new.get(w + v, 0) + m
        dist = new
    return Fraction(sum(m for w, m in dist.items() if w >= w0), 2 ** k.size)


@pytest.mark.parametrize("values", [(1, 2), (1, 2, 3), (1,), (2, 5, 9)])
def test_the_exact_lattice_p_is_never_below_the_exact_value(values: tuple[int, ...]) -> None:
    """Big-integer arithmetic as the oracle: the DP's p carries its certified rounding bound
    (issue 28: 5.8434887396424e-24 where the exact value is 5.8434887396439e-24)."""
    from ipcausal.stats._kernels.exact import lattice_tail_bound

    rng = np.random.default_rng(len(values))
    k = rng.choice(values, size=400).astype(np.int64)
    total = int(k.sum())
    for w0 in (total // 2 + 1, int(0.6 * total), int(0.7 * total)):
        exact = _exact_tail(k, w0)
        got = K.lattice_tail(k, w0) * (1 + lattice_tail_bound(k))
        assert Fraction(got) >= exact and float(Fraction(got) / exact - 1) < 1e-10
    d = k * np.where(rng.random(k.size) < 0.6, 1, -1)
    res = permutation_test(d.astype(float), method="exact", alternative="greater")
    t = int(d.sum())
    assert res.method == "exact-lattice" and Fraction(res.pvalue) >= _exact_tail(k, (total + t) // 2)
