"""The sign test against scipy.stats.binomtest."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ipcausal import sign_test
from ipcausal.stats import sign_tests
from ipcausal.stats.sign import binomial_tail


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alternative", ["less", "greater", "two-sided"])
def test_matches_binomtest(seed: int, alternative: str) -> None:
    rng = np.random.default_rng(seed)
    s = np.round(rng.beta(4, 1.5, 40 + 7 * seed), 1)  # rounding creates ties at m0 = 0.8
    res = sign_test(s, m0=0.8, alternative=alternative)
    below, above = int((s < 0.8).sum()), int((s > 0.8).sum())
    assert res.n == below + above and res.n_ties == int((s == 0.8).sum())
    k = below if alternative != "greater" else above
    alt = {"less": "greater", "greater": "greater", "two-sided": "two-sided"}[alternative]
    ref = stats.binomtest(k, below + above, 0.5, alternative=alt).pvalue
    assert res.pvalue == pytest.approx(ref, rel=1e-10)
    assert res.statistic == {"less": below, "greater": above}.get(alternative, max(below, above))
    assert res.share_below == pytest.approx(below / s.size)
    assert res.median == pytest.approx(np.median(s))


def test_all_tied_is_defined() -> None:
    res = sign_test([0.8, 0.8, 0.8], m0=0.8)
    assert res.pvalue == 1.0 and res.n == 0 and res.n_ties == 3


def test_direction_and_text() -> None:
    low = sign_test([0.1] * 12, m0=0.8, alternative="less")
    assert low.pvalue == pytest.approx(0.5**12)
    assert "median(similarity) < 0.8" in low.null_hypothesis
    assert sign_test([0.95] * 12, m0=0.8, alternative="less").pvalue == 1.0
    # two-sided about 0 when asked, like scipy.stats.binomtest
    two = sign_test([0.1] * 12, alternative="two-sided")
    assert two.alternative == "two-sided" and two.m0 == 0.0 and two.statistic == 12
    assert two.pvalue == pytest.approx(stats.binomtest(12, 12, 0.5).pvalue)


def test_sign_test_and_sign_tests_share_the_default_alternative() -> None:
    """SPEC §3: H1 is median(s) < m0; both the one-sample test and the vectorized one default to it."""
    import inspect

    defaults = {f.__name__: inspect.signature(f).parameters["alternative"].default for f in (sign_test, sign_tests)}
    assert defaults == {"sign_test": "less", "sign_tests": "less"}
    s = [0.2, 0.5, 0.9, 0.4, 0.3, 0.8, 0.1, 0.85]
    res = sign_test(s, m0=0.8)
    assert res.alternative == "less" and "median(similarity) < 0.8" in res.null_hypothesis
    assert res.pvalue == pytest.approx(stats.binomtest(res.n_below, res.n, 0.5, alternative="greater").pvalue)
    assert sign_tests([res.n_below], [res.n_above])[0] == pytest.approx(res.pvalue, rel=1e-12)


def test_median_interval_covers() -> None:
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(400):
        s = rng.random(25)
        r = sign_test(s, m0=0.5)
        hits += r.ci_low <= 0.5 <= r.ci_high
    assert hits / 400 >= 0.93  # conservative interval: coverage >= 95% up to noise


def test_vectorized_matches_scalar() -> None:
    rng = np.random.default_rng(1)
    below = rng.integers(0, 60, 500)
    above = rng.integers(0, 60, 500)
    for alt in ("less", "greater", "two-sided"):
        vec = sign_tests(below, above, alternative=alt)
        for i in range(0, 500, 37):
            s = np.r_[np.zeros(below[i]), np.ones(above[i])]
            if s.size == 0:
                assert vec[i] == 1.0
                continue
            assert vec[i] == pytest.approx(sign_test(s, m0=0.5, alternative=alt).pvalue, rel=1e-10)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.integers(0, 300), st.integers(0, 300))
def test_binomial_tail_matches_scipy(k: int, n: int) -> None:
    expected = 1.0 if k <= 0 else stats.binom.sf(k - 1, n, 0.5)
    assert float(binomial_tail(k, n)) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "match"),
    [
        (([],), {}, ValueError, "`s` needs at least 1 values"),
        (([0.1, np.nan],), {}, ValueError, "`s` must be finite"),
        ((["x"],), {}, TypeError, "`s` must hold numbers"),
        (([0.1],), {"m0": np.nan}, ValueError, "`m0` must be a finite number"),
        (([0.1],), {"alternative": "lower"}, ValueError, "`alternative` must be one of"),
    ],
)
def test_validation(args, kwargs, exc, match) -> None:
    with pytest.raises(exc, match=match):
        sign_test(*args, **kwargs)


def test_vectorized_validation() -> None:
    with pytest.raises(ValueError, match="`n_below` must hold non-negative integers"):
        sign_tests([-1], [2])
    with pytest.raises(TypeError, match="`n_above` must hold non-negative integers"):
        sign_tests([1], [0.5])
    with pytest.raises(ValueError, match="same shape"):
        sign_tests([1, 2], [1])


def test_median_interval_reports_its_attained_coverage() -> None:
    """Issue 24: at n = 4 the interval is [min, max], whose coverage is 1 − 2·2⁻⁴ = 0.875, not 0.95."""
    r = sign_test([0.95, 0.9, 0.85, 0.78], m0=0.8, alternative="less")
    assert (r.ci_low, r.ci_high) == (0.78, 0.95)
    assert r.confidence_level == 1 - 2 * 2.0**-4 == 0.875
    assert r.ci_method == ("binomial-order-statistics ([min, max]: n = 4 reaches at most this coverage, below the "
                           "requested 0.95)")


@pytest.mark.parametrize("n", [6, 9, 20, 41])
def test_attained_coverage_is_the_order_statistic_law(n: int) -> None:
    """Oracle: brute-force coverage of [x_(r), x_(n−r+1)] from the binomial law (scipy.stats.binom)."""
    from scipy import stats

    x = np.random.default_rng(n).uniform(size=n)
    r_obj = sign_test(x, m0=0.5)
    xs = np.sort(x)
    r = int(np.flatnonzero(xs == r_obj.ci_low)[0]) + 1  # the order statistic used
    assert xs[n - r] == r_obj.ci_high
    assert r_obj.confidence_level == pytest.approx(1 - 2 * stats.binom.cdf(r - 1, n, 0.5), rel=1e-12)
    assert r_obj.confidence_level >= 0.95  # reachable at these n: conservative, never below the level
    hits, rng = 0, np.random.default_rng(7)
    for _ in range(2000):
        y = rng.normal(size=n)
        res = sign_test(y)
        hits += res.ci_low <= 0.0 <= res.ci_high
    assert abs(hits / 2000 - r_obj.confidence_level) < 4 * np.sqrt(0.05 * 0.95 / 2000) + 1e-9
