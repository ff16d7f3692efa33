"""Every route of the public tests at the sizes on both sides of the threshold that selects it
(issue 28, item 3): enumeration / lattice DP / FFT / Monte Carlo / saddlepoint, exact vs Monte
Carlo relabelings, 1 vs 2 threads (the same seed must give the same counts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipcausal import permutation_test
from ipcausal.stats import heterogeneity_test, mmd_permutation_test, trend_test, westfall_young
from ipcausal.stats import permutation as P
from ipcausal.stats.permutation import AUTO_ENUMERATION_N, MAX_ENUMERATION_N


def _se(p: float, big_l: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-4) / big_l)


# -- the sign-flip test: enumeration ≤ 16 (auto) / ≤ 24 (exact), lattice DP, FFT, Monte Carlo ----
@pytest.mark.parametrize("n", [5, AUTO_ENUMERATION_N, AUTO_ENUMERATION_N + 1, MAX_ENUMERATION_N,
                               MAX_ENUMERATION_N + 1, 50])
def test_continuous_routes_on_both_sides_of_the_enumeration_limits(n: int) -> None:
    d = np.random.default_rng(n).normal(0.3, 1, n)
    auto = permutation_test(d, rng=1, n_resamples=20_000)
    assert auto.method == ("exact-enumeration" if n <= AUTO_ENUMERATION_N else "monte-carlo")
    if n <= MAX_ENUMERATION_N:
        exact = permutation_test(d, method="exact")
        assert exact.method == "exact-enumeration"
        assert abs(auto.pvalue - exact.pvalue) <= (0 if auto.method == exact.method else 4 * _se(exact.pvalue, 20_000))
    else:
        with pytest.raises(ValueError, match="`method`='exact' is not feasible"):
            permutation_test(d, method="exact")
    for res in (auto, permutation_test(d, method="saddlepoint")):
        assert (res.pvalue <= 0.05) == (not res.ci_low <= 0 <= res.ci_high), res.method


@pytest.mark.parametrize("n", [5, 17, 500, 5000])
def test_lattice_routes_agree_at_every_size(n: int) -> None:
    d = (np.random.default_rng(n).integers(1, 6, n) - np.random.default_rng(n + 1).integers(1, 6, n)).astype(float)
    d[: max(1, n // 10)] = np.abs(d[: max(1, n // 10)])
    auto = permutation_test(d, rng=2, n_resamples=20_000)
    exact = permutation_test(d, method="exact")
    mc = permutation_test(d, method="monte-carlo", rng=2, n_resamples=20_000)
    assert auto.method == ("exact-enumeration" if np.count_nonzero(d) <= AUTO_ENUMERATION_N else "exact-lattice")
    assert auto.pvalue == exact.pvalue
    assert abs(mc.pvalue - exact.pvalue) <= 4 * _se(exact.pvalue, 20_000) + 1 / 20_001
    for res in (auto, mc):
        assert (res.pvalue <= 0.05) == (not res.ci_low <= 0 <= res.ci_high), res.method


def test_fft_route_beyond_the_auto_dp_limit_agrees_with_the_dp() -> None:
    rng = np.random.default_rng(3)
    n = 8000  # n · Σk ≈ 1.3e8 > AUTO_LATTICE_CELLS (5e7) but below the DP's hard limit
    d = (rng.integers(1, 7, n) - rng.integers(1, 7, n)).astype(float) + (rng.random(n) < 0.05)
    fft, dp = permutation_test(d), permutation_test(d, method="exact")
    assert (fft.method, dp.method) == ("exact-lattice-fft", "exact-lattice")
    assert fft.pvalue == pytest.approx(dp.pvalue, rel=1e-9)


@pytest.mark.parametrize("lattice", [False, True])
@pytest.mark.parametrize("n", [63, 64, 65, 2000])
def test_monte_carlo_counts_are_the_same_on_one_and_two_threads(lattice: bool, n: int) -> None:
    rng = np.random.default_rng(n)
    d = rng.integers(-3, 4, n).astype(float) if lattice else rng.normal(0.1, 1, n)
    a = np.abs(d[d != 0]) / np.abs(d).max()
    signs = np.sign(d[d != 0])
    k = P.lattice_units(a) if lattice else None
    for simd in (False, P._simd()):
        one = P._mc_counts(a, signs, 3000, 11, k=k, threads=1, simd=simd)
        two = P._mc_counts(a, signs, 3000, 11, k=k, threads=2, simd=simd)
        assert one.tolist() == two.tolist()


def test_saddlepoint_is_the_exact_route_on_coarse_lattices_and_an_approximation_elsewhere() -> None:
    rng = np.random.default_rng(5)
    coarse = rng.integers(-2, 3, 400).astype(float)
    assert permutation_test(coarse, method="saddlepoint").method == "exact-lattice"
    cont = rng.normal(0.15, 1, 400)
    sp, mc = permutation_test(cont, method="saddlepoint"), permutation_test(cont, rng=1, n_resamples=50_000)
    assert sp.method == "saddlepoint" and abs(sp.pvalue - mc.pvalue) <= 4 * _se(mc.pvalue, 50_000)


# -- relabeling tests: exact enumeration vs Monte Carlo, one vs two threads ------------------------
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("n", [5, 120, 200])
def test_trend_and_heterogeneity_routes_and_threads(k: int, n: int) -> None:
    """n = 200 at k = 3 is issue 28's crash (`ordered.py:97`, the Monte Carlo route's thread check)."""
    y = np.random.default_rng(n + k).normal(size=(n, k))
    y[:, -1] += 0.3
    big_l = 4000
    for fn in (trend_test, heterogeneity_test):
        res = fn(y, rng=1, n_resamples=big_l)
        exact_possible = math.factorial(k) ** n <= 200_000
        assert res.method == ("exact-enumeration" if exact_possible else "monte-carlo")
        assert 0 < res.pvalue <= 1
        if not exact_possible:
            one = fn(y, rng=1, n_resamples=big_l, _threads=1)
            two = fn(y, rng=1, n_resamples=big_l, _threads=2)
            assert one.pvalue == two.pvalue == res.pvalue
        else:
            mc = fn(y, method="monte-carlo", rng=1, n_resamples=20_000)
            assert abs(mc.pvalue - res.pvalue) <= 4 * _se(res.pvalue, 20_000) + 1 / 20_001
    assert trend_test(np.random.default_rng(0).normal(size=(200, 3)), rng=1).method == "monte-carlo"


@pytest.mark.parametrize("n", [4, 40])
def test_westfall_young_exact_and_monte_carlo_threads(n: int) -> None:
    y = np.random.default_rng(n).normal(size=(n, 3))
    y[:, 2] += 0.5
    res = westfall_young(y, rng=3, n_resamples=4000)
    assert res.method == ("exact-enumeration" if 6**n <= 200_000 else "monte-carlo")
    if res.method == "monte-carlo":
        one = westfall_young(y, rng=3, n_resamples=4000, _threads=1)
        two = westfall_young(y, rng=3, n_resamples=4000, _threads=2)
        assert one.adjusted_pvalues == two.adjusted_pvalues == res.adjusted_pvalues


@pytest.mark.parametrize("n", [3, 60])
def test_distribution_test_exact_and_monte_carlo_threads(n: int) -> None:
    x = np.random.default_rng(n).normal(size=(n, 6, 2))
    x[:, 3:] += 0.7
    sim = np.exp(-((x[:, :, None, :] - x[:, None, :, :]) ** 2).sum(-1) / 2)
    res = mmd_permutation_test(sim, rng=1, n_resamples=3000)
    assert res.method == ("exact-enumeration" if 10**n <= 200_000 else "monte-carlo")
    if res.method == "monte-carlo":
        assert mmd_permutation_test(sim, rng=1, n_resamples=3000, _threads=1).pvalue == \
            mmd_permutation_test(sim, rng=1, n_resamples=3000, _threads=2).pvalue == res.pvalue
