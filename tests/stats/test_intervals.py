"""Confidence intervals by inverting the sign-flip test, against brute-force inversion."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipcausal import permutation_test
from ipcausal.stats import mean_ci
from ipcausal.stats import _kernels as K
from ipcausal.stats import intervals as I
from ipcausal.stats.permutation import lattice_units


def all_signs(n: int) -> np.ndarray:
    return np.array(list(itertools.product([-1.0, 1.0], repeat=n)))


def brute_p(d: np.ndarray, delta: float, signs: np.ndarray) -> float:
    """Two-sided sign-flip p of d − δ over the given sign vectors (all 2ⁿ: the exact p)."""
    x = d - delta
    t = abs(x.sum())
    tol = 1e-9 * np.abs(x).sum()
    return float(np.mean(np.abs(signs @ x) >= t - tol))


def subset_means(d: np.ndarray) -> np.ndarray:
    return np.sort([d[list(c)].mean() for r in range(1, d.size + 1) for c in itertools.combinations(range(d.size), r)])


def check_breakpoints(d: np.ndarray, lo: float, hi: float, alpha: float) -> None:
    """lo and hi are in the set, a hair beyond them is not, and both are subset means."""
    signs = all_signs(d.size)
    eta = 1e-7 * max(1.0, float(np.abs(d).max()))
    assert brute_p(d, lo, signs) > alpha and brute_p(d, hi, signs) > alpha
    assert brute_p(d, lo - eta, signs) <= alpha and brute_p(d, hi + eta, signs) <= alpha
    means = subset_means(d)
    assert np.min(np.abs(means - lo)) < 1e-12 * max(1.0, abs(lo))
    assert np.min(np.abs(means - hi)) < 1e-12 * max(1.0, abs(hi))


def test_issue_example() -> None:
    d = [3, -1, 4, 1, 5, 0, 2, 6, -2, 3]
    res = permutation_test(d)
    assert (res.ci_low, res.ci_high, res.ci_method) == (0.2, 4.0, "exact-inversion")
    t = mean_ci(d)  # the Student t interval is still there, by name
    assert (round(t.ci_low, 3), round(t.ci_high, 3)) == (0.239, 3.961)


@pytest.mark.parametrize("n", [3, 5, 8, 11, 14])
def test_enumeration_equals_brute_force_inversion_continuous(n: int) -> None:
    d = np.random.default_rng(40 + n).normal(0.5, 1.0, n)
    level = 0.95 if n >= 6 else 0.5
    res = permutation_test(d, method="exact", confidence_level=level)
    assert res.ci_method == "exact-inversion"
    check_breakpoints(d, res.ci_low, res.ci_high, 1 - level)
    # Hartigan: the j-th smallest and largest subset means, j = floor(α 2^(n-1) - 1) + 1
    j = math.floor((1 - level) * 2 ** (n - 1) - 1) + 1
    means = subset_means(d)
    assert (res.ci_low, res.ci_high) == pytest.approx((means[j - 1], means[-j]), rel=1e-12)


@pytest.mark.parametrize("n", [6, 10, 14])
def test_lattice_with_ties_and_zeros_equals_brute_force(n: int) -> None:
    rng = np.random.default_rng(n)
    d = rng.integers(-3, 4, n).astype(float)
    d[:2] = [0.0, 2.0]  # a zero and something non-zero
    res = permutation_test(d, method="exact")
    check_breakpoints(d, res.ci_low, res.ci_high, 0.05)
    # the FFT lattice law gives the same breakpoints
    a = np.abs(d) / np.abs(d).max()
    law = I.law(d, "lattice", lattice=lattice_units(a[a > 0]))
    assert law.kind == "exact-lattice-inversion"
    assert law.interval(0.95) == pytest.approx((res.ci_low, res.ci_high), rel=1e-12)
    assert law.certified


@pytest.mark.parametrize("seed", range(4))
def test_lattice_law_equals_class_enumeration_at_large_n(seed: int) -> None:
    # three values: the grouped enumeration is exact at n = 240 (about 81^3 count vectors)
    rng = np.random.default_rng(seed)
    d = rng.choice([-1.0, 0.0, 1.0], 240, p=[0.3, 0.3, 0.4])
    a = np.abs(d)
    lat = I.law(d, "lattice", lattice=lattice_units(a[a > 0]))
    enum = I.law(d, "exact")
    assert enum.kind == "exact-inversion"
    for level in (0.8, 0.95, 0.99):
        assert lat.interval(level) == pytest.approx(enum.interval(level), rel=1e-12)
    for delta in (-0.2, 0.0, 0.05, 0.13, 0.3):  # one-sided p-values at δ off the lattice
        assert lat.upper(delta) == pytest.approx(enum.upper(delta), rel=1e-9, abs=1e-14)
        assert lat.lower(delta) == pytest.approx(enum.lower(delta), rel=1e-9, abs=1e-14)


def test_large_lattice_route_is_the_inversion() -> None:
    d = np.random.default_rng(0).integers(-4, 5, 1650).astype(float)
    res = permutation_test(d)
    assert res.method == "exact-lattice" and res.ci_method == "exact-lattice-inversion"
    t = mean_ci(d)  # at n = 1,650 the t interval is close; the inverted one is on the subset means
    assert res.ci_low == pytest.approx(t.ci_low, abs=2e-3) and res.ci_high == pytest.approx(t.ci_high, abs=2e-3)
    for end in (res.ci_low, res.ci_high):
        assert any(abs(end * k - round(end * k)) < 1e-9 for k in range(1, 1651))  # a fraction S/N


def test_lattice_one_sided_equal_the_exact_test_of_shifted_data() -> None:
    # Δ − δ for δ on a finer lattice is itself lattice data: the DP p-value is the oracle
    d = np.random.default_rng(5).integers(-2, 4, 120).astype(float)
    a = np.abs(d) / np.abs(d).max()
    law = I.law(d, "lattice", lattice=lattice_units(a[a > 0]))
    for delta in (0.25, 0.5, 0.75, 1.0):
        less = permutation_test(d - delta, alternative="less", method="exact")
        greater = permutation_test(d - delta, alternative="greater", method="exact")
        assert law.upper(delta) == pytest.approx(less.pvalue, rel=1e-9)
        assert law.lower(delta) == pytest.approx(greater.pvalue, rel=1e-9)


def _stream_signs(seed: int, n_words: int, m: int, big_l: int) -> np.ndarray:
    """The ±1 sign vectors of resamples 0..L-1 rebuilt from the documented stream."""
    out = np.empty((big_l, m))
    for r in range(big_l):
        c, q = divmod(r, K.CHUNK)
        lane, pos = q % K.LANES, q // K.LANES
        words = K.random_words(seed, c * K.LANES + lane, (pos + 1) * n_words)[pos * n_words:]
        bits = np.array([(int(words[i // 64]) >> (i % 64)) & 1 for i in range(m)])
        out[r] = 2.0 * bits - 1.0
    return out


def test_monte_carlo_inversion_uses_the_p_values_sign_vectors() -> None:
    rng = np.random.default_rng(11)
    d = rng.exponential(1.0, 70) - 0.7  # skewed, no zeros
    big_l, seed = 3000, 123456789
    law = I.law(d, "monte-carlo", n_resamples=big_l, seed=seed)
    lo, hi = law.interval(0.9)
    # brute force with the rebuilt sign vectors, applied to the sorted magnitudes' signs
    y = d / np.abs(d).max()
    order = np.argsort(np.abs(y), kind="stable")
    signs = _stream_signs(seed, 2, d.size, big_l) * np.sign(y[order])  # flips of the sorted values

    def p(delta: float) -> float:
        x = (d - delta)[order]
        b = np.count_nonzero(np.abs(signs @ x) >= abs(x.sum()) * (1 - 1e-12))
        return (b + 1) / (big_l + 1)

    eta = 1e-9
    assert p(lo) > 0.1 and p(hi) > 0.1 and p(lo - eta) <= 0.1 and p(hi + eta) <= 0.1
    # and 0 is inside exactly when the Monte Carlo p (same seed, same L) is above α
    for shift in np.linspace(-0.3, 0.3, 7):
        x = d + shift
        res = permutation_test(x, method="monte-carlo", n_resamples=big_l, rng=7, confidence_level=0.9)
        assert res.ci_method == "monte-carlo-inversion"
        assert (res.ci_low <= 0.0 <= res.ci_high) == (res.pvalue > 0.1)


def test_monte_carlo_with_zeros_and_reproducible() -> None:
    d = np.r_[np.random.default_rng(2).normal(0.3, 1, 200), np.zeros(50)]
    a = permutation_test(d, method="monte-carlo", n_resamples=5000, rng=3)
    b = permutation_test(d, method="monte-carlo", n_resamples=5000, rng=3)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert a.ci_low < d.mean() < a.ci_high
    exact_like = permutation_test(d, method="saddlepoint")
    assert a.ci_low == pytest.approx(exact_like.ci_low, abs=0.03)
    assert a.ci_high == pytest.approx(exact_like.ci_high, abs=0.03)


def test_serial_and_parallel_mc_kernels_agree() -> None:
    d = np.random.default_rng(4).normal(size=130)
    a = np.sort(np.abs(d))
    tab, n_words = K.word_tables(a)
    sgn = np.zeros(n_words, dtype=np.uint64)
    args = (tab, n_words, sgn, a.size, 3, 5000, 99)
    t1, v1 = K.mc_subsets(*args)
    t2, v2 = K.mc_subsets_parallel(*args)
    assert np.array_equal(t1, t2) and np.array_equal(v1, v2)


def test_saddlepoint_inversion_close_to_exact() -> None:
    d = np.random.default_rng(8).normal(0.3, 1.0, 20)
    ex = permutation_test(d, method="exact")
    sp = permutation_test(d, method="saddlepoint")
    assert sp.ci_method == "saddlepoint-inversion"
    width = ex.ci_high - ex.ci_low
    assert abs(sp.ci_low - ex.ci_low) < 0.03 * width and abs(sp.ci_high - ex.ci_high) < 0.03 * width


def test_edge_cases() -> None:
    zero = permutation_test(np.zeros(10))
    assert (zero.ci_low, zero.ci_high) == (0.0, 0.0)
    const = permutation_test([2.5] * 10)
    assert (const.ci_low, const.ci_high) == (2.5, 2.5)
    two = permutation_test([1.0, 3.0])  # 2^(1-n) = 0.5 > α: no δ is ever rejected
    assert (two.ci_low, two.ci_high) == (-math.inf, math.inf)
    two_wide = permutation_test([1.0, 3.0], confidence_level=0.4)  # α = 0.6 > 0.5
    check_breakpoints(np.array([1.0, 3.0]), two_wide.ci_low, two_wide.ci_high, 0.6)
    assert permutation_test(np.zeros(2)).ci_low == -math.inf
    ties = np.array([1.0, 1.0, 1.0, -1.0, 2.0, 2.0, 0.0, 0.0, 1.0])
    res = permutation_test(ties)
    check_breakpoints(ties, res.ci_low, res.ci_high, 0.05)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=6, max_size=11), st.sampled_from([0.8, 0.9, 0.95]))
def test_inversion_matches_brute_force_property(values: list[int], level: float) -> None:
    d = np.array(values, dtype=float) * 0.5
    res = permutation_test(d, method="exact", confidence_level=level)
    if not math.isfinite(res.ci_low):
        assert 2.0 ** (1 - d.size) > 1 - level
        return
    check_breakpoints(d, res.ci_low, res.ci_high, 1 - level)


def test_equivariance() -> None:
    d = np.random.default_rng(9).normal(size=12)
    r = permutation_test(d)
    s = permutation_test(3.0 * d + 1.5)
    assert (s.ci_low, s.ci_high) == pytest.approx((3 * r.ci_low + 1.5, 3 * r.ci_high + 1.5), rel=1e-12)
    perm = permutation_test(d[::-1])
    assert (perm.ci_low, perm.ci_high) == (r.ci_low, r.ci_high)


def test_fine_lattice_falls_back_to_monte_carlo_inversion() -> None:
    # scores on a 0.01 lattice: the p is exact (DP), the FFT grid would be too large
    d = np.random.default_rng(6).integers(-400, 401, 600) / 100.0
    a = permutation_test(d, method="exact", n_resamples=4000, rng=2)
    b = permutation_test(d, method="exact", n_resamples=4000, rng=2)
    assert a.method == "exact-lattice" and a.ci_method == "monte-carlo-inversion"
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    t = mean_ci(d)
    assert a.ci_low == pytest.approx(t.ci_low, abs=0.05) and a.ci_high == pytest.approx(t.ci_high, abs=0.05)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=5, max_size=40), st.sampled_from([0.25, 1.0, 3.0]),
       st.sampled_from([0.8, 0.95, 0.99]))
def test_lattice_law_equals_enumeration_property(values: list[int], unit: float, level: float) -> None:
    d = np.array(values, dtype=float) * unit
    if not np.any(d):
        return
    a = np.abs(d) / np.abs(d).max()
    _, counts = np.unique(d, return_counts=True)  # the law groups equal values, zeros included
    from hypothesis import assume

    assume(float(np.prod(counts + 1.0)) <= I.MAX_CLASS_SUBSETS)  # beyond this "exact" is not enumerated
    lat = I.law(d, "lattice", lattice=lattice_units(a[a > 0]))
    enum = I.law(d, "exact")
    assert lat.kind == "exact-lattice-inversion" and enum.kind == "exact-inversion"
    assert lat.interval(level) == pytest.approx(enum.interval(level), rel=1e-12, abs=1e-12)
    for delta in (-0.3 * unit, 0.1 * unit, float(d.mean()) + 0.2 * unit):
        assert lat.upper(delta) == pytest.approx(enum.upper(delta), rel=1e-8, abs=1e-13)
        assert lat.lower(delta) == pytest.approx(enum.lower(delta), rel=1e-8, abs=1e-13)


@pytest.mark.parametrize("n", [12, 300, 5000])
def test_fourier_rows_give_the_dense_grid_tails(n: int) -> None:
    # oracle: the whole (f1, f2) grid by numpy's inverse 2-D FFT of the full half spectrum, then
    # suffix sums of each box row; the rows' closed-form geometric sums must give the same tails
    from scipy import fft

    rng = np.random.default_rng(n)
    z = rng.integers(-5, 6, n)
    vals, cnts = np.unique(z, return_counts=True)
    n_lo, n_hi, s_lo, s_hi = 0, n, int(z[z < 0].sum()), int(z[z > 0].sum())
    m1, m2 = n_hi - n_lo + 1, s_hi - s_lo + 1
    f1, f2 = I._fast_len(m1), I._fast_len(m2 + (m2 & 1))
    spec, cols, n_cols = K.lattice_spectrum(vals.astype(float), cnts.astype(np.int64), f1, f2, 1e-20)
    dense = np.zeros((f1, f2 // 2 + 1), dtype=complex)
    dense[:, cols[:n_cols]] = spec[:, :n_cols]
    grid = fft.irfft2(dense, s=(f1, f2))
    live = np.argsort(cols[:n_cols])
    head = fft.ifft(spec[:, live], axis=0)
    rows = I._Rows(K.lattice_rows(head, cols[live], n_lo, s_lo, m1, m2, f2), n_lo, s_lo, m1, m2, f2)
    cols = (s_lo + np.arange(m2)) % f2
    box = grid[(n_lo + np.arange(m1)) % f1][:, cols]
    tails = np.cumsum(box[:, ::-1], axis=1)[:, ::-1]  # tails[i, j] = P(N = n_lo + i, S >= s_lo + j)
    for num, den in ((0, 1), (1, 3), (-2, 7), (5, 2)):
        for strict in (False, True):
            want = 0.0
            for i in range(m1):
                q = num * (n_lo + i)
                s = q // den + 1 if strict else -((-q) // den)
                j = min(max(s - s_lo, 0), m2)
                want += tails[i, j] if j < m2 else 0.0
            assert rows.mass(num, den, strict, False) == pytest.approx(want, abs=1e-13)
    # and against brute force at small n: every subset's (size, sum)
    if n <= 12:
        sizes, sums = np.array([0]), np.array([0])
        for v in z:
            sizes, sums = np.r_[sizes, sizes + 1], np.r_[sums, sums + v]
        for delta in (-1.5, -0.2, 0.0, 0.4, 2.0):
            assert rows.mass_float(delta, 0.0, False) == pytest.approx(np.mean(sums - delta * sizes >= 0), abs=1e-13)
            assert rows.mass_float(delta, 0.0, True) == pytest.approx(np.mean(-sums - delta * sizes >= 0), abs=1e-13)


def test_lattice_inversion_is_exact_beyond_the_former_grid_limit() -> None:
    # 200,000 Likert differences: the former (f1, f2) grid would hold about 3 * 10^7 cells, over its
    # 2^24 limit, and the interval fell back to Monte Carlo; the rows need about 6,000 x 30 numbers
    rng = np.random.default_rng(3)
    d = (rng.integers(1, 7, 200_000) - rng.integers(1, 7, 200_000)).astype(float)
    res = permutation_test(d)
    assert res.method == "exact-lattice-fft" and res.ci_method == "exact-lattice-inversion"
    t = mean_ci(d)
    assert res.ci_low == pytest.approx(t.ci_low, abs=1e-3) and res.ci_high == pytest.approx(t.ci_high, abs=1e-3)
    for end in (res.ci_low, res.ci_high):  # each end is a breakpoint S/N (checked with integers)
        assert any(abs(end * k - round(end * k)) < 1e-6 for k in range(99_000, 101_000))
