"""The paired sign-flip permutation test against brute force and scipy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from ipcausal import permutation_test
from ipcausal.stats.permutation import lattice_units


def brute_force(d: np.ndarray, alternative: str) -> float:
    n = d.size
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=n)))
    t = signs @ np.abs(d)
    obs = d.sum()
    tol = 1e-9 * np.abs(d).sum()
    if alternative == "two-sided":
        return float(np.mean(np.abs(t) >= abs(obs) - tol))
    if alternative == "greater":
        return float(np.mean(t >= obs - tol))
    return float(np.mean(t <= obs + tol))


@pytest.mark.parametrize("n", [2, 3, 7, 11, 14])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_matches_brute_force_continuous(n: int, alternative: str) -> None:
    rng = np.random.default_rng(100 + n)
    d = rng.normal(0.4, 1.0, n)
    res = permutation_test(d, alternative=alternative, method="exact")
    assert res.method == "exact-enumeration"
    assert res.pvalue == pytest.approx(brute_force(d, alternative), abs=1e-15)


@pytest.mark.parametrize("n", [5, 12, 14])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_matches_brute_force_lattice_with_ties(n: int, alternative: str) -> None:
    rng = np.random.default_rng(7 * n)
    d = rng.integers(-3, 4, n).astype(float)
    d[0] = 2.0  # make sure something is non-zero
    res = permutation_test(d, alternative=alternative, method="exact")
    assert res.pvalue == pytest.approx(brute_force(d, alternative), rel=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_lattice_dp_equals_enumeration(alternative: str) -> None:
    # n = 20 non-zero lattice values: the DP route (n > 16) against enumeration in numpy
    rng = np.random.default_rng(3)
    d = rng.integers(1, 5, 20) * rng.choice([-1.0, 1.0], 20)
    res = permutation_test(d, alternative=alternative, method="exact")
    assert res.method == "exact-lattice"
    assert res.pvalue == pytest.approx(brute_force(d, alternative), rel=1e-10)


def test_exact_matches_scipy_exact() -> None:
    rng = np.random.default_rng(11)
    d = rng.normal(0.5, 1.0, 12)
    ref = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf)
    assert permutation_test(d, method="exact").pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    ref_g = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="greater")
    assert permutation_test(d, method="exact", alternative="greater").pvalue == pytest.approx(ref_g.pvalue, rel=1e-12)


def test_monte_carlo_agrees_with_scipy_within_error() -> None:
    rng = np.random.default_rng(5)
    d = rng.normal(0.12, 1.0, 120)
    ours = permutation_test(d, method="monte-carlo", n_resamples=40_000, rng=1)
    ref = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=40_000, random_state=2)
    se = np.sqrt(ours.pvalue * (1 - ours.pvalue) / 40_000) * np.sqrt(2)
    assert abs(ours.pvalue - ref.pvalue) < 5 * se
    assert ours.method == "monte-carlo" and ours.n_resamples == 40_000
    assert ours.pvalue_se > 0


def test_monte_carlo_near_exact_on_lattice_data() -> None:
    rng = np.random.default_rng(17)
    d = rng.integers(-4, 5, 1650).astype(float) + (rng.random(1650) < 0.04)
    exact = permutation_test(d, method="exact")
    assert exact.method == "exact-lattice"
    for seed in (1, 2, 3):
        mc = permutation_test(d, method="monte-carlo", n_resamples=20_000, rng=seed)
        assert abs(mc.pvalue - exact.pvalue) <= 4 * np.sqrt(exact.pvalue * (1 - exact.pvalue) / 20_000) + 1 / 20_001


def test_monte_carlo_p_is_never_zero_and_reproducible() -> None:
    d = np.full(50, 3.0)
    res = permutation_test(d, method="monte-carlo", n_resamples=999, rng=42)
    assert res.pvalue == pytest.approx(1 / 1000)
    again = permutation_test(d, method="monte-carlo", n_resamples=999, rng=42)
    assert again.pvalue == res.pvalue
    g1 = permutation_test(np.arange(-5.0, 30.0), method="monte-carlo", n_resamples=5000, rng=np.random.default_rng(9))
    g2 = permutation_test(np.arange(-5.0, 30.0), method="monte-carlo", n_resamples=5000, rng=np.random.default_rng(9))
    assert g1.pvalue == g2.pvalue


def test_auto_picks_exact_when_cheap_and_monte_carlo_otherwise() -> None:
    rng = np.random.default_rng(0)
    assert permutation_test(rng.normal(size=10)).method == "exact-enumeration"
    assert permutation_test(rng.integers(-4, 5, 500).astype(float)).method == "exact-lattice"
    assert permutation_test(rng.normal(size=300), rng=1).method == "monte-carlo"


def test_exact_infeasible_raises() -> None:
    d = np.random.default_rng(1).normal(size=200)
    with pytest.raises(ValueError, match="`method`='exact' is not feasible"):
        permutation_test(d, method="exact")


def test_all_zero_differences() -> None:
    res = permutation_test([0.0, 0.0, 0.0])
    assert res.pvalue == 1.0 and res.statistic == 0.0 and res.n_zero == 3


def test_zeros_are_counted_but_do_not_change_p() -> None:
    d = np.array([1.0, 2.0, 3.0, -0.5, 2.5])
    a = permutation_test(d, method="exact")
    b = permutation_test(np.concatenate([d, [0.0, 0.0]]), method="exact")
    assert a.pvalue == b.pvalue and b.n_zero == 2 and b.n == 7


def test_extreme_lattice_p_is_positive() -> None:
    res = permutation_test(np.full(2000, 1.0), method="exact")
    assert 0 < res.pvalue < 1e-300


def test_result_fields_and_ci() -> None:
    d = np.array([0.5, 1.5, 1.0, 2.0, -0.5, 1.0])
    res = permutation_test(d, method="exact")
    # the interval inverts the test (tests/stats/test_intervals.py); the t interval is mean_ci's
    assert res.ci_method == "exact-inversion" and res.ci_low < d.mean() < res.ci_high
    assert res.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert "mean(Δ) = 0" in res.null_hypothesis
    assert res.to_dict()["pvalue"] == res.pvalue
    with pytest.raises(AttributeError):
        res.pvalue = 0.5  # type: ignore[misc]


def test_lattice_units() -> None:
    assert lattice_units(np.array([2.0, 3.0, 4.0])).tolist() == [2, 3, 4]
    assert lattice_units(np.array([0.25, 0.5, 1.0])).tolist() == [1, 2, 4]
    assert lattice_units(np.array([100.0, 100.0])).tolist() == [1, 1]
    assert lattice_units(np.array([1.0, np.sqrt(2.0)])) is None


small = st.lists(st.integers(-6, 6), min_size=2, max_size=12).filter(lambda v: any(v))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(small, st.sampled_from([1e-9, 1e-3, 0.37, 1.0, 1e3, 1e9]))
def test_scale_invariance(values: list[int], c: float) -> None:
    d = np.array(values, dtype=float)
    for alternative in ("two-sided", "greater", "less"):
        assert permutation_test(c * d, method="exact", alternative=alternative).pvalue == pytest.approx(
            permutation_test(d, method="exact", alternative=alternative).pvalue, rel=1e-12
        )
    assert permutation_test(c * d, method="monte-carlo", n_resamples=2000, rng=3).pvalue == permutation_test(
        d, method="monte-carlo", n_resamples=2000, rng=3
    ).pvalue


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.floats(-50, 50, allow_nan=False, width=32), min_size=2, max_size=12), st.randoms(use_true_random=False))
def test_order_invariance_sign_symmetry_and_range(values: list[float], rnd) -> None:
    d = np.array(values, dtype=float)
    perm = d.copy()
    rnd.shuffle(perm)
    two = permutation_test(d, method="exact")
    assert 0 < two.pvalue <= 1
    assert permutation_test(perm, method="exact").pvalue == pytest.approx(two.pvalue, rel=1e-12)
    assert permutation_test(-d, method="exact").pvalue == pytest.approx(two.pvalue, rel=1e-12)
    g = permutation_test(d, method="exact", alternative="greater").pvalue
    le = permutation_test(-d, method="exact", alternative="less").pvalue
    assert g == pytest.approx(le, rel=1e-12)
    # one-sided p-values never exceed ... the two-sided one by more than a factor 2 rule
    assert min(g, permutation_test(d, method="exact", alternative="less").pvalue) <= two.pvalue + 1e-12


def test_type_one_error_is_calibrated_under_h0() -> None:
    """Under H0 (symmetric Δ) the exact test rejects at most at α; Monte Carlo near α (seeded)."""
    rng = np.random.default_rng(2024)
    reps, n, alpha = 2000, 14, 0.05
    rejections = 0
    for _ in range(reps):
        d = rng.normal(0.0, 1.0, n)
        rejections += permutation_test(d, method="exact").pvalue <= alpha
    rate = rejections / reps
    se = np.sqrt(alpha * (1 - alpha) / reps)
    assert abs(rate - alpha) <= 3 * se
    mc_reps = 3000
    mc_rej = sum(
        permutation_test(rng.standard_t(3, 40), method="monte-carlo", n_resamples=999, rng=rng).pvalue <= alpha
        for _ in range(mc_reps)
    )
    assert abs(mc_rej / mc_reps - alpha) <= 3 * np.sqrt(alpha * (1 - alpha) / mc_reps)


@pytest.mark.parametrize(
    ("d", "kwargs", "exc", "match"),
    [
        ([1.0, np.nan, 2.0], {}, ValueError, "`d` must be finite"),
        ([1.0, np.inf], {}, ValueError, "`d` must be finite"),
        ([], {}, ValueError, "`d` needs at least 2 values"),
        ([1.0], {}, ValueError, "`d` needs at least 2 values"),
        ([[1.0, 2.0], [3.0, 4.0]], {}, ValueError, "`d` must be 1-D"),
        (["a", "b"], {}, TypeError, "`d` must hold numbers"),
        ("12", {}, TypeError, "`d` must be a 1-D array of numbers"),
        ([1.0, 2.0], {"alternative": "bigger"}, ValueError, "`alternative` must be one of"),
        ([1.0, 2.0], {"method": "bootstrap"}, ValueError, "`method` must be one of"),
        ([1.0, 2.0], {"n_resamples": 0}, ValueError, "`n_resamples` must be >= 1"),
        ([1.0, 2.0], {"n_resamples": 2.5}, TypeError, "`n_resamples` must be an integer"),
        ([1.0, 2.0], {"confidence_level": 1.5}, ValueError, "`confidence_level` must lie in"),
        ([1.0, 2.0], {"rng": "seed"}, TypeError, "`rng` must be None"),
    ],
)
def test_validation_messages(d, kwargs, exc, match) -> None:
    if kwargs.get("rng") == "seed":
        kwargs = {**kwargs, "method": "monte-carlo"}
    with pytest.raises(exc, match=match):
        permutation_test(d, **kwargs)
