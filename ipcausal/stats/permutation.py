"""The paired sign-flip permutation test for interval outcomes (SPEC §3).

Under H0 (mean Δ = 0, Δ symmetric about 0) each difference keeps or flips its sign with
probability 1/2.  The statistic is mean(Δ); the p-value is the share of sign vectors whose
statistic is at least as extreme as the observed one.

Routes to the p-value (``method``):

* ``"exact"`` — all 2ⁿ sign vectors (n ≤ 24), or, for *lattice* data (every |Δ| an integer
  multiple of one unit: ratings, 0/1 correctness, 0/100), the exact null distribution of
  Σ s_k|Δ_k| by grouped binomial convolutions (:func:`ipcausal.stats._kernels.lattice_tail`,
  ``method="exact-lattice"``) while n · Σk ≤ 4·10⁸, and beyond that, at any n, by one FFT of
  the grouped binomials' closed-form characteristic function with a certified error bound
  (:mod:`ipcausal.stats.grouped`, ``method="exact-lattice-fft"``; p is the FFT's tail plus
  its bound, so never below the exact p).
* ``"monte-carlo"`` — L random sign vectors; p = (b + 1)/(L + 1), never 0.  Numba kernels:
  partial-sum tables for continuous data, popcount for lattice data, 16 resamples at a time
  with AVX-512 where the CPU has it (``docs/performance.md``).
* ``"saddlepoint"`` — Lugannani–Rice with a lattice correction (:mod:`ipcausal.stats.saddlepoint`),
  an approximation that can fall below the exact p (measured in ``docs/statistics.md``).  On a
  coarse lattice (root-mean-square unit count below 8: ratings, 0/1) it is below the exact p in
  every measured case, so there ``"saddlepoint"`` takes the exact lattice route (cheap there)
  and ``method`` says so.
* ``"auto"`` — exact when cheap (enumeration for n ≤ 16, the DP while n · Σk ≤ 5·10⁷, the FFT
  whenever its work is below the Monte Carlo kernel's), else Monte Carlo.

Ties in |T| are compared with a relative tolerance, so that p(cΔ) = p(Δ) for any c > 0.

The confidence interval inverts the same test on the same route (:mod:`ipcausal.stats.intervals`):
{δ : two-sided p(Δ − δ) > α}; ``ci_method`` names how.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats.results import SignFlipResult
from ipcausal.stats import _small
from ipcausal.stats._threads import plan, run
from ipcausal.stats.fused import counts_and_ends, lattice_counts, lattice_segments, simd_ok
from ipcausal.stats._validate import (
    ALTERNATIVES,
    MAX_RESAMPLES,
    as_sample,
    check_fits,
    choice,
    mean_sd,
    open_unit,
    positive_int,
    seed_from,
)

K = lazy_module("ipcausal.stats._kernels")  # numba is imported on the first kernel call

__all__ = ["permutation_test", "lattice_units", "METHODS", "paper_compat_pvalue"]

METHODS = ("auto", "exact", "monte-carlo", "saddlepoint")
MAX_ENUMERATION_N = 24
MAX_LATTICE_CELLS = 400_000_000  # n * sum(k): DP work bound for exact lattice p-values
AUTO_LATTICE_CELLS = 50_000_000  # what "auto" still calls cheap
AUTO_ENUMERATION_N = 16
MAX_FFT_LENGTH = 1 << 28  # Σk: the FFT route's length (2 GB of float64 at the limit)
_REL_TOL = 1e-9
#: Peak bytes the Monte Carlo route keeps per resample (T, V, the two interval ends, sorted copies:
#: 36–41 measured by ru_maxrss at 10^7 and 4·10^7 resamples, rounded up).
MC_BYTES_PER_RESAMPLE = 48
_MAX_DENOMINATOR = 1000


def _null_text(alternative: str) -> str:
    h1 = {"two-sided": "mean(Δ) ≠ 0", "greater": "mean(Δ) > 0", "less": "mean(Δ) < 0"}[alternative]
    return f"H0: mean(Δ) = 0 (Δ symmetric about 0; each sign equally likely) against H1: {h1}"


def lattice_units(a: np.ndarray, *, max_denominator: int = _MAX_DENOMINATOR) -> np.ndarray | None:
    """Integers k with ``a ≈ k · unit`` for one common unit (gcd 1), or ``None``.

    ``a`` holds positive magnitudes.  Relative tolerance 1e-9; denominators up to
    ``max_denominator`` relative to the smallest magnitude are tried (the smallest that works
    is used).  A few probe values screen all denominators at once, so non-lattice data are
    rejected in microseconds.
    """
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    u = np.unique(a)
    with np.errstate(over="ignore"):
        ratios = u / u[0]
    if not np.isfinite(ratios[-1]) or ratios[-1] > 2.0**52:  # no exact integer lattice possible
        return None
    rounded = np.rint(ratios)  # fast path: the smallest magnitude is the unit (ratings, 0/1)
    if np.all(np.abs(ratios - rounded) <= _REL_TOL * ratios):
        ints = rounded.astype(np.int64)
        return (ints // int(np.gcd.reduce(ints)))[np.searchsorted(u, a)]
    qs = np.arange(1, max_denominator + 1, dtype=np.float64)
    qs = qs[qs * ratios[-1] <= 2.0**52]  # integers must stay exact in float64 and int64
    probe = ratios[np.unique(np.linspace(0, ratios.size - 1, min(ratios.size, 9)).astype(np.intp))]
    scaled = np.multiply.outer(qs, probe)
    fits = np.all(np.abs(scaled - np.rint(scaled)) <= _REL_TOL * np.maximum(scaled, 1.0), axis=1)
    for q in qs[fits]:
        scaled = ratios * q
        rounded = np.rint(scaled)
        if np.all(np.abs(scaled - rounded) <= _REL_TOL * np.maximum(scaled, 1.0)):
            ints = rounded.astype(np.int64)
            g = int(np.gcd.reduce(ints))
            lookup = ints // g
            return lookup[np.searchsorted(u, a)]
    return None


def coarse_lattice(k: np.ndarray) -> bool:
    """Whether the lattice units are coarse (root-mean-square k below the saddlepoint module's
    ``HO_MIN_RMS_K``: ratings, 0/1), where ``method="saddlepoint"`` takes the exact route instead."""
    from ipcausal.stats.saddlepoint import HO_MIN_RMS_K

    kk = np.asarray(k, dtype=np.float64)
    return bool(kk.size == 0 or float(np.dot(kk, kk)) / kk.size < HO_MIN_RMS_K**2)


def agree_at_zero(lo: float, hi: float, p_two: float, alpha: float, tol: float) -> tuple[float, float]:
    """The interval's ends with 0 outside exactly when the two-sided ``p_two`` ≤ ``alpha``.

    The ends are breakpoints S/N of the same law that gave the p; a breakpoint the p counts as
    a tie with 0 (within its relative tolerance) can come out as ±1e-16 instead of 0.  An end
    within ``tol`` of 0 on the wrong side is moved to 0 (or just past it); nothing else moves.
    """
    inside = lo <= 0.0 <= hi
    if p_two > alpha and not inside:
        if 0.0 < lo <= tol:
            lo = 0.0
        elif -tol <= hi < 0.0:
            hi = 0.0
    elif p_two <= alpha and inside:
        if lo == 0.0 or (-tol <= lo <= 0.0 and hi > tol):
            lo = math.ulp(0.0)
        elif hi == 0.0 or (0.0 <= hi <= tol and lo < -tol):
            hi = -math.ulp(0.0)
    return lo, hi


def _pick(counts: np.ndarray, alternative: str) -> int:
    return int(counts[{"two-sided": 0, "greater": 1, "less": 2}[alternative]])


def _exact_lattice(k: np.ndarray, signs: np.ndarray, alternative: str) -> float:
    """Exact p on a lattice: T = 2W − M, W = Σ of the k's with sign +; W and M − W agree in law."""
    from ipcausal.stats._kernels.exact import lattice_tail_bound

    kk = np.ascontiguousarray(k, dtype=np.int64)
    total = int(kk.sum())
    t = int(np.dot(signs.astype(np.int64), kk))  # observed T = Σ s_k k_k, T ≡ M (mod 2)
    up = 1.0 + lattice_tail_bound(kk)  # the DP's certified rounding bound: never below the exact p
    if alternative == "two-sided":
        p = 1.0 if t == 0 else min(1.0, 2.0 * K.lattice_tail(kk, (total + abs(t)) // 2) * up)
    elif alternative == "greater":
        p = K.lattice_tail(kk, (total + t) // 2) * up
    else:
        p = K.lattice_tail(kk, (total - t) // 2) * up
    # the observed sign vector alone has probability 2^-n, and two-sided its mirror image counts
    # too: p cannot be smaller (the DP drops terms below 1e-300, so this is what it returns there)
    floor = max(math.ldexp(1.0, (1 if alternative == "two-sided" else 0) - int(k.size)), np.finfo(np.float64).tiny)
    return min(1.0, max(p, floor))


def _exact_fft(k: np.ndarray, signs: np.ndarray, alternative: str) -> float:
    """Exact p on a lattice at any n (:mod:`ipcausal.stats.grouped`): the tail plus its certified bound."""
    from ipcausal.stats.grouped import tail

    total = int(k.sum())
    t = int(np.dot(signs.astype(np.int64), k))
    w0 = {"two-sided": (total + abs(t)) // 2, "greater": (total + t) // 2, "less": (total - t) // 2}[alternative]
    if alternative == "two-sided" and t == 0:
        return 1.0
    p, bound = tail(k, w0)
    p = (2.0 if alternative == "two-sided" else 1.0) * (p + bound)
    floor = max(math.ldexp(1.0, (1 if alternative == "two-sided" else 0) - int(k.size)), np.finfo(np.float64).tiny)
    return min(1.0, max(p, floor))


def _fft_cheaper(k: np.ndarray, n_resamples: int) -> bool:
    """Whether the FFT route costs less than the Monte Carlo kernel (8 table look-ups per word)."""
    from ipcausal.stats.grouped import cost

    return int(k.sum()) <= MAX_FFT_LENGTH and cost(k) <= 8.0 * n_resamples * ((k.size + 63) // 64)


def _mc_counts(a: np.ndarray, signs: np.ndarray, n_resamples: int, seed: int,
               k: np.ndarray | None = None, threads: int | None = None,
               simd: bool | None = None) -> np.ndarray:
    """Monte Carlo counts ``[#|T*| >= |t|, #T* >= t, #T* <= t]`` (ties within the tolerance).

    ``a``: positive magnitudes (largest 1), ``signs``: their signs, ``k``: integer lattice
    units of ``a`` or ``None``.  The magnitudes are sorted first (the stream assigns bit j of
    word i to the (64 i + j)-th smallest), so the result does not depend on the input order.
    Lattice data with few distinct values go to the popcount kernels (exact integer
    comparisons), the rest to the table kernels.  Which kernel (AVX-512 or portable) and how many
    threads: :func:`ipcausal.stats._threads.plan` (measured per CPU); ``simd`` ``True``/``False``
    forces the AVX-512 / portable kernel, ``threads`` 1 the serial path and 2+ the parallel one.
    Every choice gives the same counts.
    """
    order = np.argsort(a, kind="stable")
    a_s = np.ascontiguousarray(a[order])
    m = a_s.size
    n_words = (m + 63) // 64
    segs = lattice_segments(k, signs, order, n_words)
    if segs is not None:
        return lattice_counts(segs, n_words, n_resamples, seed,
                              plan("lattice", n_words * n_resamples, threads=threads, simd=simd))
    t_obs = float(np.dot(signs, a))
    eps = _REL_TOL * float(a_s.sum())
    bounds = (abs(t_obs) - eps, t_obs - eps, t_obs + eps)
    pl = plan("continuous", n_words * n_resamples, threads=threads, simd=simd)
    if pl.simd:
        tab, n_words = K.nibble_tables(a_s)
        return run(pl, K.mc_counts_simd, K.mc_counts_simd_parallel, tab, n_words, *bounds, n_resamples, seed)
    tab, n_words = K.word_tables(a_s)
    return run(pl, K.mc_counts_table, K.mc_counts_table_parallel, tab, n_words, *bounds, n_resamples, seed)


_simd = simd_ok  # whether the AVX-512 kernels run here (cached; :func:`ipcausal.stats.fused.simd_ok`)


def permutation_test(
    d: Any,
    *,
    alternative: str = "two-sided",
    method: str = "auto",
    n_resamples: int = 100_000,
    rng: int | np.random.Generator | None = None,
    confidence_level: float = 0.95,
) -> SignFlipResult:
    """The paired sign-flip permutation test of H0: mean(Δ) = 0 (not scipy's ``permutation_test``).

    Each difference keeps or flips its sign with probability 1/2 under H0; the unit of
    randomisation is the pair.

    Parameters
    ----------
    d : array_like, shape (n,)
        Paired differences Δ_k = y_j − y_i (finite, n ≥ 2).
    alternative : {"two-sided", "greater", "less"}
        H1: mean(Δ) ≠ 0, > 0 or < 0.
    method : {"auto", "exact", "monte-carlo", "saddlepoint"}
        How the p-value is computed (module docstring).  ``"exact"`` raises ``ValueError``
        when exactness is not feasible (non-lattice data with n > 24, or a lattice too fine).
    n_resamples : int
        Number L of random sign vectors for Monte Carlo.
    rng : int, numpy.random.Generator or None
        Source of randomness for Monte Carlo (an int seed makes the result reproducible,
        identical on any number of threads).
    confidence_level : float
        Level of the confidence interval for mean(Δ): the set of shifts δ that the two-sided
        test of Δ − δ does not reject at α = 1 − confidence_level (``ci_method`` names how it
        was inverted: ``"exact-inversion"``, ``"exact-lattice-inversion"``,
        ``"monte-carlo-inversion"`` with the same sign vectors as the Monte Carlo p,
        ``"saddlepoint-inversion"``; :mod:`ipcausal.stats.intervals`).  It may be infinite
        when n is so small that no p reaches α.  The Student t interval is :func:`ipcausal.stats.mean_ci`.

    Returns
    -------
    SignFlipResult

    Examples
    --------
    >>> from ipcausal import permutation_test
    >>> res = permutation_test([1, 2, 1, 0, 2, 1, 1, 3], method="exact")
    >>> res.method, round(res.pvalue, 4)
    ('exact-enumeration', 0.0156)
    >>> ci = permutation_test([3, -1, 4, 1, 5, 0, 2, 6, -2, 3])
    >>> ci.ci_method, ci.ci_low, ci.ci_high
    ('exact-inversion', 0.2, 4.0)
    >>> permutation_test([0.3, -0.1, 0.7, 0.4, 0.2] * 20, method="monte-carlo", rng=1).pvalue < 0.001
    True
    """
    x = as_sample(d, "d")
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    method = choice(method, "method", METHODS)
    n_resamples = positive_int(n_resamples, "n_resamples", maximum=MAX_RESAMPLES)
    level = open_unit(confidence_level, "confidence_level")
    n = x.size

    mean, sd = mean_sd(x)  # no overflow for values near the float maximum
    if sd > 0:
        effect_size = mean / sd
    else:
        effect_size = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    seed_box: list[int] = []

    def seed() -> int:  # drawn once, shared by the Monte Carlo p and its interval
        if not seed_box:
            seed_box.append(seed_from(rng))
        return seed_box[0]

    def interval(route: str, k: np.ndarray | None = None, p: float = math.nan) -> dict[str, Any]:
        from ipcausal.stats import intervals

        law = intervals.law(x, route, lattice=k, n_resamples=n_resamples, seed=seed)
        lo, hi = law.interval(level, p0=p if alternative == "two-sided" else None)
        if alternative == "two-sided":  # 0 outside exactly when p ≤ α (ties at 0 rounded to ±1e-16)
            lo, hi = agree_at_zero(lo, hi, p, 1.0 - level, 1e-9 * float(np.abs(x).max()))
        name = law.kind if law.certified else "lattice-inversion-uncertified"
        return dict(ci_low=lo, ci_high=hi, ci_method=name)

    absd = np.abs(x)
    scale = float(absd.max())
    # magnitudes that vanish relative to the largest one (subnormal underflow) count as zeros
    nonzero = (absd / scale > 0) if scale > 0 else np.zeros(n, dtype=bool)
    common = dict(
        statistic=mean,
        alternative=alternative,
        n=n,
        null_hypothesis=_null_text(alternative),
        n_zero=int(n - nonzero.sum()),
        confidence_level=level,
        effect_size=effect_size,
    )
    if scale == 0.0:  # every difference is zero: the statistic equals its null distribution
        # every subset mean is 0: the set is {0}, unless no p can reach α at this n
        wide = math.ldexp(1.0, 1 - n) > 1.0 - level
        ci = dict(ci_low=-math.inf if wide else 0.0, ci_high=math.inf if wide else 0.0, ci_method="exact-inversion")
        return SignFlipResult(pvalue=1.0, method="exact-enumeration", n_resamples=None, pvalue_se=0.0, **common, **ci)

    a_all = absd / scale
    a = np.ascontiguousarray(a_all[nonzero])
    signs = np.sign(x[nonzero])
    t_obs = float(np.dot(signs, a))
    eps = _REL_TOL * float(a.sum())
    m = a.size

    k = lattice_units(a)  # every route uses it: routing, the DP, the saddlepoint, the exact-integer MC kernel
    lattice_ok = k is not None and m * int(k.sum()) <= MAX_LATTICE_CELLS

    if method == "saddlepoint" and k is not None and coarse_lattice(k) and (lattice_ok or int(k.sum()) <= MAX_FFT_LENGTH):
        method = "exact"  # coarse lattices are routed away: the saddlepoint is below the exact p there (measured)
    if method == "saddlepoint":
        from ipcausal.stats.saddlepoint import saddlepoint_pvalue

        p = saddlepoint_pvalue(a, t_obs, alternative, lattice=k)
        return SignFlipResult(pvalue=p, method="saddlepoint", n_resamples=None, pvalue_se=0.0, **common,
                              **interval("saddlepoint", p=p))

    use_exact = False
    fft_ok = k is not None and not lattice_ok and m > MAX_ENUMERATION_N and int(k.sum()) <= MAX_FFT_LENGTH
    if method == "exact":
        if not (m <= MAX_ENUMERATION_N or lattice_ok or fft_ok):
            if k is None:
                why = f"{m} non-zero differences that do not lie on a common lattice (too many to enumerate)"
            else:
                why = (f"the {m} non-zero differences lie on a lattice, but it is too large for the exact DP "
                       f"({m:,} differences x {int(k.sum()):,} lattice units = {m * int(k.sum()):,} cells; "
                       f"the limit is {MAX_LATTICE_CELLS:,}) and for the exact FFT ({int(k.sum()):,} lattice "
                       f"units; the limit is {MAX_FFT_LENGTH:,})")
            raise ValueError(f"`method`='exact' is not feasible here: {why}; use method='monte-carlo' or 'saddlepoint'")
        use_exact = True
    elif method == "auto":
        use_exact = m <= AUTO_ENUMERATION_N or (k is not None and m * int(k.sum()) <= AUTO_LATTICE_CELLS)
        fft_ok = fft_ok or (k is not None and m > AUTO_ENUMERATION_N and not use_exact)
        if not use_exact and fft_ok and _fft_cheaper(k, n_resamples):
            use_exact, lattice_ok = True, False
        else:
            fft_ok = False

    if use_exact and fft_ok and not lattice_ok:
        p = _exact_fft(np.ascontiguousarray(k, dtype=np.int64), signs, alternative)
        return SignFlipResult(pvalue=p, method="exact-lattice-fft", n_resamples=None, pvalue_se=0.0, **common,
                              **interval("lattice", k, p))
    if use_exact:
        if lattice_ok and m > AUTO_ENUMERATION_N:
            p = _exact_lattice(k, signs, alternative)
            return SignFlipResult(pvalue=p, method="exact-lattice", n_resamples=None, pvalue_se=0.0, **common,
                                  **interval("lattice", k, p))
        if m <= _small.ENUMERATION_N:  # numpy, bit-identical: spares a short run numba's first dispatch
            counts = _small.enumeration_counts(a, m, t_obs, eps)
        else:
            counts = K.exact_enumeration_counts(K.byte_tables(a), m, t_obs, eps)
        p = _pick(counts, alternative) / float(1 << m)
        return SignFlipResult(pvalue=p, method="exact-enumeration", n_resamples=None, pvalue_se=0.0, **common,
                              **interval("exact", k, p))

    check_fits(n_resamples, MC_BYTES_PER_RESAMPLE, "the Monte Carlo sign-flip law")
    stream = seed()
    bounds = (abs(t_obs) - eps, t_obs - eps, t_obs + eps)
    simd = None if _simd() else False  # None: the measured choice (AVX-512 allowed)
    j = math.floor((1.0 - level) * (n_resamples + 1) - 1) + 1  # the interval's ends: j-th order statistics
    counts, ends = counts_and_ends(x, a, signs, k, bounds, n_resamples, stream, simd, j)  # p and interval: one pass
    b = _pick(counts, alternative)
    p = (b + 1) / (n_resamples + 1)
    se = math.sqrt(p * (1 - p) / (n_resamples + 1))
    lo, hi = (-math.inf, math.inf) if ends is None else (ends[1] * scale, ends[0] * scale)
    if alternative == "two-sided":
        lo, hi = agree_at_zero(lo, hi, p, 1.0 - level, 1e-9 * scale)
    return SignFlipResult(pvalue=p, method="monte-carlo", n_resamples=n_resamples, pvalue_se=se, seed=stream,
                          **common, ci_low=lo, ci_high=hi, ci_method="monte-carlo-inversion")


def paper_compat_pvalue(d: np.ndarray, *, n_resamples: int = 1000, rng: Any = None) -> float:
    """The released study code's p-value: b / L two-sided (can be 0), L = 1,000 by default."""
    return paper_compat_pvalue_seeded(d, n_resamples=n_resamples, seed=seed_from(rng))


def paper_compat_pvalue_seeded(d: np.ndarray, *, n_resamples: int, seed: int) -> float:
    """:func:`paper_compat_pvalue` with the stream's integer seed given (for the Report's null summary)."""
    x = as_sample(d, "d")
    n_resamples = positive_int(n_resamples, "n_resamples", maximum=MAX_RESAMPLES)
    absd = np.abs(x)
    scale = float(absd.max())
    if scale == 0.0:
        return 1.0
    a_all = absd / scale
    nonzero = a_all > 0
    a = np.ascontiguousarray(a_all[nonzero])
    counts = _mc_counts(a, np.sign(x[nonzero]), n_resamples, seed, k=lattice_units(a))
    return int(counts[0]) / n_resamples
