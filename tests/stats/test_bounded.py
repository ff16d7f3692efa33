"""bounded_mean_ci: exact binomial for 0/1 (oracle: statsmodels), a bootstrap inside the range otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from ipcausal.stats.bounded import bounded_mean_ci


@pytest.mark.parametrize("n", [1, 5, 12, 40])
def test_binary_is_clopper_pearson(n: int) -> None:
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    for k in range(n + 1):
        x = np.r_[np.ones(k), np.zeros(n - k)]
        r = bounded_mean_ci(x)
        lo, hi = proportion.proportion_confint(k, n, alpha=0.05, method="beta")
        assert r.method == "clopper-pearson" and r.n == n
        assert r.ci_low == pytest.approx(lo, abs=1e-12) and r.ci_high == pytest.approx(hi, abs=1e-12)
        assert 0.0 <= r.ci_low <= r.statistic <= r.ci_high <= 1.0


def test_the_issue_cases_stay_in_range() -> None:
    one_of_five = bounded_mean_ci([0, 0, 1, 0, 0])
    assert one_of_five.ci_low >= 0 and one_of_five.ci_high < 1  # not [-0.355, 0.755]
    zeros = bounded_mean_ci([0, 0, 0, 0, 0])
    assert zeros.ci_low == 0 and zeros.ci_high > 0.5  # not [0, 0]


def test_two_valued_with_bounds_is_rescaled() -> None:
    r = bounded_mean_ci([1, 6, 6, 1, 1], bounds=(1, 6))
    b = bounded_mean_ci([0, 1, 1, 0, 0])
    assert r.method == "clopper-pearson"
    assert (r.ci_low, r.ci_high) == pytest.approx((1 + 5 * b.ci_low, 1 + 5 * b.ci_high))


def test_binary_coverage_is_at_least_the_level() -> None:
    """Seeded check of the guarantee: exact coverage computed from the binomial law, every p."""
    from scipy import stats

    n = 8
    intervals = [bounded_mean_ci(np.r_[np.ones(k), np.zeros(n - k)]) for k in range(n + 1)]
    for p in np.linspace(0.01, 0.99, 50):
        cover = sum(stats.binom.pmf(k, n, p) for k, r in enumerate(intervals) if r.ci_low <= p <= r.ci_high)
        assert cover >= 0.95 - 1e-12


def test_with_bounds_the_betting_interval_covers_a_skewed_rating() -> None:
    """A skewed 1–6 rating: with its range given, the betting interval covers at the level at
    every n (the bootstrap covered 0.85 at n = 5–10, issue 28); without it, an approximation by name."""
    rng = np.random.default_rng(1)
    levels = np.arange(1, 7)
    probs = np.array([0.55, 0.2, 0.1, 0.07, 0.05, 0.03])
    mu = float(levels @ probs)
    reps = 300
    for n in (5, 10, 40):
        hits = boot = 0
        for rep in range(reps):
            x = rng.choice(levels, size=n, p=probs)
            r = bounded_mean_ci(x, bounds=(1, 6))
            assert r.method in ("betting-fixed-n", "clopper-pearson")  # the latter: every value 1 or 6
            assert 1 <= r.ci_low <= r.ci_high <= 6 and r.bounds == (1.0, 6.0)
            hits += r.ci_low <= mu <= r.ci_high
            b = bounded_mean_ci(x, n_resamples=500, rng=rep)
            assert b.method in ("percentile-bootstrap (approximate)", "none (constant sample, no bounds)",
                                "clopper-pearson")  # the last: only 1s (taken as 0/1 without bounds)
            boot += b.ci_low <= mu <= b.ci_high
        assert hits / reps >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / reps)
        if n == 5:
            assert boot / reps < 0.9  # the bootstrap undercovers at small n


def test_no_zero_width_interval_from_the_observed_range() -> None:
    r = bounded_mean_ci([3, 3, 3])
    assert (r.ci_low, r.ci_high) == (-np.inf, np.inf) and r.bounds is None and "no bounds" in r.method
    r = bounded_mean_ci([3, 3, 3], bounds=(1, 5))
    assert r.ci_low < 3 < r.ci_high and r.method == "betting-fixed-n"


def test_same_seed_same_interval() -> None:
    x = [2.0, 3.5, 4.0, 5.5, 3.0, 4.5]
    assert bounded_mean_ci(x, rng=3) == bounded_mean_ci(x, rng=3)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"bounds": (1, 6), "x": [0, 2]}, r"`x` has values outside `bounds` \(1, 6\): min 0, max 2"),
    ({"bounds": (6, 1), "x": [2]}, r"`bounds` must be two finite numbers with low < high, got \(6, 1\)"),
    ({"bounds": "ab", "x": [2]}, r"`bounds` must be two finite numbers \(low, high\), got 'ab'"),
    ({"confidence_level": 1.5, "x": [2]}, r"`confidence_level`"),
])
def test_errors_name_the_parameter(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        bounded_mean_ci(**kwargs)
