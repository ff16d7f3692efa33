"""Confidence sets for mean(Δ) by inverting the two-sided sign-flip test (SPEC §8).

The set is {δ : the two-sided sign-flip test of Δ − δ has p > α}, α = 1 − confidence_level.
A sign vector flips a subset A of the differences; with S_A = Σ_{k∈A} Δ_k and N_A = |A|,

    |Σ s_k (Δ_k − δ)| ≥ |Σ (Δ_k − δ)|   ⇔   δ lies between mean(Δ_A) and mean(Δ_not A),

and mean(Δ) always lies between those two means.  So for δ above mean(Δ) the two-sided p is
p(δ) = 2·P(S_A ≥ δ N_A) over the randomisation, a non-increasing step function whose steps sit
at the subset means: the set is an interval, closed, and its upper end is the j-th largest
subset mean with j = ⌊α 2ⁿ⁻¹ − 1⌋ + 1 (Hartigan's randomization interval); below the mean,
the mirror image.  The one-sided p-values of Δ − δ for *any* δ are P(S_A ≥ δ N_A) ("less") and
P(S_A ≤ δ N_A) ("greater"): the equivalence test reads them off the same law.

Laws of (S_A, N_A), one per route:

* ``"exact-inversion"`` — every subset, grouped by equal values (small n);
* ``"exact-lattice-inversion"`` — integer data at any n: the joint distribution of (N_A, S_A)
  by one inverse FFT of its characteristic function on a grid that holds all but 1e-14 of the
  mass (Hoeffding), then a bisection on δ that ends on the breakpoint S/N itself, checked with
  integer arithmetic; certified when p at the breakpoint and just past it are further than
  ``CERTIFY_TOL`` from α (``certified`` False otherwise);
* ``"monte-carlo-inversion"`` — the L sign vectors of the counter-based stream that gives the
  Monte Carlo p (same seed, same sorted magnitudes): one fixed set, so the set is an interval
  and contains 0 exactly when that Monte Carlo p exceeds α;
* ``"saddlepoint-inversion"`` — the saddlepoint p of Δ − δ (continuous formula: the shifted
  differences are off the lattice) solved for p = α by bisection on each side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats import _small
from ipcausal.stats._validate import mean_sd

_fft = lazy_module("scipy.fft")  # faster than numpy's FFT on these shapes; imported on first use
K = lazy_module("ipcausal.stats._kernels")  # numba is imported on the first kernel call

__all__ = ["law", "SubsetLaw"]

MAX_CLASS_SUBSETS = 1 << 20  # count vectors the enumeration law may hold (about 50 MB at the peak)
MAX_LATTICE_GRID = 1 << 24  # spectrum cells held for the lattice law (rows x live columns; 256 MB at the limit)
SPECTRUM_COLUMNS = 64  # live spectrum columns expected at large n (about 26 at n = 66,667 Likert differences)
BOX_MASS = 5e-15  # mass left outside the grid, per axis (Hoeffding bound)
SPECTRUM_FLOOR = 1e-20  # |characteristic function| below this is set to 0 (moves a cell < 1e-20)
CERTIFY_TOL = 1e-11  # |p - α| below this leaves a lattice endpoint uncertified
PARALLEL_MIN_CELLS = 10**12  # FFT grids from this size compute their spectrum on all threads
_REL_TOL = 1e-9  # the p-value's tie tolerance (permutation.py), for the one-sided tails


@dataclass
class SubsetLaw:
    """The law of (S_A, N_A) under the randomisation, in units of ``scale``; see the module."""

    kind: str
    scale: float
    n: int
    mean: float  # mean(Δ) / scale
    data: dict[str, Any]
    certified: bool = True

    # --- one-sided p-values of Δ − δ --------------------------------------------------------
    def upper(self, delta: float) -> float:
        """P(S_A ≥ δ N_A) = the one-sided ("less") p-value of Δ − δ."""
        return self._tail(delta / self.scale, +1)

    def lower(self, delta: float) -> float:
        """P(S_A ≤ δ N_A) = the one-sided ("greater") p-value of Δ − δ."""
        return self._tail(delta / self.scale, -1)

    def _tail(self, x: float, side: int) -> float:
        tol = 0.5 * _REL_TOL * float(np.abs(self.data["y"] - x).sum())  # the p-value's tie tolerance
        if self.kind == "exact-inversion":
            s, nn, w = self.data["s"], self.data["n"], self.data["w"]
            gap = side * (s - x * nn)
            return float(w[gap >= -tol].sum()) / self.data["total"]
        if self.kind == "monte-carlo-inversion":
            s, nn = self.data["s"], self.data["n"]
            b = int(np.count_nonzero(side * (s - x * nn) >= -tol))
            return (b + 1) / (s.size + 1)
        if self.kind == "exact-lattice-inversion":
            u = self.data["unit"]
            p = self.data["rows"].mass_float(side * x / u, tol / u, side < 0)
            return float(min(1.0, max(p, 0.0)))
        return self._saddle(x, side)

    def _saddle(self, x: float, side: int) -> float:
        from ipcausal.stats.saddlepoint import saddlepoint_pvalue

        y = self.data["x"] - x
        nz = np.abs(y) > 0
        alt = "less" if side > 0 else "greater"
        return saddlepoint_pvalue(np.abs(y[nz]), float(y.sum()), alt)

    # --- the interval ------------------------------------------------------------------------
    def interval(self, confidence_level: float, p0: float | None = None) -> tuple[float, float]:
        """The closed interval {δ : two-sided p(Δ − δ) > 1 − confidence_level} (may be infinite).

        ``p0``: the two-sided p at δ = 0 as reported; the saddlepoint inversion takes it there
        (its p of Δ − δ is the continuous formula, the reported p may be the lattice one)."""
        alpha = 1.0 - confidence_level
        if self.kind == "exact-inversion":
            lo, hi = _enum_interval(self.data, alpha)
        elif self.kind == "monte-carlo-inversion":
            lo, hi = _mc_interval(self.data, alpha)
        elif self.kind == "exact-lattice-inversion":
            if math.ldexp(1.0, 1 - self.n) > alpha:
                return -math.inf, math.inf
            hi, ok_hi = _lattice_end(self.data["rows"], alpha / 2, False)
            lo, ok_lo = _lattice_end(self.data["rows"], alpha / 2, True)
            lo = -lo
            self.certified = ok_hi and ok_lo
            u = self.data["unit"]
            lo, hi = lo * u, hi * u
        else:
            lo, hi = self._saddle_interval(alpha, p0)
        return lo * self.scale, hi * self.scale

    def _saddle_interval(self, alpha: float, p0: float | None = None) -> tuple[float, float]:
        x = self.data["x"]
        if math.ldexp(1.0, 1 - self.n) > alpha:
            return -math.inf, math.inf
        ends = []
        for side, edge in ((+1, float(x.max())), (-1, float(x.min()))):
            inside, outside = self.mean, edge
            zero = p0 is not None and (0.0 - inside) * (outside - 0.0) > 0  # δ = 0 decided by the reported p
            if zero and p0 <= alpha:
                outside = 0.0
            elif 2.0 * self._saddle(edge, side) > alpha:  # p stays above α up to the extreme value
                ends.append(edge)
                continue
            elif zero:
                inside = 0.0
            for _ in range(200):
                mid = 0.5 * (inside + outside)
                if mid in (inside, outside):
                    break
                if 2.0 * self._saddle(mid, side) > alpha:
                    inside = mid
                else:
                    outside = mid
            ends.append(inside)
        return ends[1], ends[0]


def _enum_interval(data: dict[str, Any], alpha: float) -> tuple[float, float]:
    total = data["total"]
    # count of non-empty subsets whose mean is beyond the end must reach j
    j = math.floor(alpha * total / 2 - 1) + 1
    if j <= 0:
        return -math.inf, math.inf
    means, w = data["means"], data["w_sorted"]
    cum = np.cumsum(w)  # ascending means
    lo = float(means[np.searchsorted(cum, j, side="left")])
    cum_top = np.cumsum(w[::-1])
    hi = float(means[::-1][np.searchsorted(cum_top, j, side="left")])
    return lo, hi


def _mc_interval(data: dict[str, Any], alpha: float) -> tuple[float, float]:
    big_l = data["s"].size
    j = math.floor(alpha * (big_l + 1) - 1) + 1
    if j <= 0:
        return -math.inf, math.inf
    hi, lo = K.mc_ends(data["s"], data["n"], data["total"], data["size"], j)  # j-th largest / smallest end
    return float(lo), float(hi)


def _lattice_end(rows: _Rows, thr: float, mirror: bool) -> tuple[float, bool]:
    """Largest breakpoint f = S/N with P(S ≥ f N) > thr, and whether the crossing is certified
    (``mirror``: the same for −S, whose negative is the lower end).

    Bisection on δ until the bracket is narrower than 1/(2 N²) (two fractions with denominators
    up to N differ by at least 1/N²), then the one fraction in it, checked with integer
    thresholds at f and just past f."""
    n_lo, n_hi = rows.n_lo, rows.n_lo + rows.m1 - 1
    s_lo, s_hi = rows.s_lo, rows.s_lo + rows.m2 - 1
    if mirror:
        s_lo, s_hi = -s_hi, -s_lo
    first = max(n_lo, 1)
    inside = min(s_lo / first, s_lo / max(n_hi, 1), 0.0) - 1.0  # every row fully counted
    outside = max(s_hi / first, s_hi / max(n_hi, 1), 0.0) + 1.0  # past every S/N of the grid
    width = 1.0 / (2.0 * max(n_hi, 1) ** 2)
    for _ in range(200):
        if outside - inside < width:
            break
        mid = 0.5 * (inside + outside)
        if mid in (inside, outside):
            break
        if rows.mass_float(mid, 0.0, mirror) > thr:
            inside = mid
        else:
            outside = mid
    best_num, best_den = 0, 0  # the smallest fraction s/N ≥ inside over the grid's rows
    for nn in range(first, n_hi + 1):
        s = math.ceil(inside * nn)
        if (s - 1) / nn >= inside:
            s -= 1
        while s / nn < inside:
            s += 1
        if best_den == 0 or s * best_den < best_num * nn:
            best_num, best_den = s, nn
    g = math.gcd(best_num, best_den) or 1
    num, den = best_num // g, best_den // g
    at = rows.mass(num, den, False, mirror)
    past = rows.mass(num, den, True, mirror)
    if not (at > thr >= past):  # rounding moved the crossing: keep the bracket's outer end
        return outside, False
    return num / den, bool(at - thr > CERTIFY_TOL and thr - past > CERTIFY_TOL)


# ------------------------------------------------------------------------------------------
def law(x: np.ndarray, route: str, **kwargs: Any) -> SubsetLaw:
    """The law of (S_A, N_A) for the differences ``x`` on ``route`` (internal: validated input).

    Parameters
    ----------
    x : numpy.ndarray
        Finite float64 differences (validated by the caller).
    route : {"exact", "lattice", "monte-carlo", "saddlepoint"}
        See :func:`_build`; ``lattice``, ``n_resamples`` and ``seed`` are passed on.

    Returns
    -------
    SubsetLaw
        ``interval(level)`` gives the inverted interval, ``upper(δ)`` / ``lower(δ)`` the
        one-sided p-values of Δ − δ.

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats.intervals import law
    >>> lw = law(np.array([3.0, -1, 4, 1, 5, 0, 2, 6, -2, 3]), "exact")
    >>> lw.kind, lw.interval(0.95)
    ('exact-inversion', (0.2, 4.0))
    >>> round(lw.upper(4.0), 6), round(lw.upper(4.000001), 6)  # p("less") of Δ − δ at the end and past it
    (0.033203, 0.018555)
    """
    built = _build(x, route, **kwargs)
    built.data["y"] = x / built.scale
    return built


def _build(x: np.ndarray, route: str, *, lattice: np.ndarray | None = None, n_resamples: int = 0,
        seed: int | Callable[[], int] = 0) -> SubsetLaw:
    """The law of (S_A, N_A) for the differences ``x`` (validated, not all zero) on ``route``.

    ``route``: ``"exact"`` (enumeration when the grouped subsets are few, else the lattice law
    when ``lattice`` is given, else Monte Carlo), ``"lattice"``, ``"monte-carlo"`` or
    ``"saddlepoint"``.  ``lattice``: integer units of |x| over the non-zero entries (as
    :func:`ipcausal.stats.permutation.lattice_units` returns them), in the order of ``x``.
    ``seed``: the Monte Carlo stream's seed, or a function that draws it (called only when
    the law is a Monte Carlo one).
    """
    n = x.size
    scale = float(np.abs(x).max())
    if scale == 0.0:
        scale = 1.0
    y = x / scale
    mean = float(y.mean())
    if route in ("exact", "lattice"):
        vals, cnts = np.unique(x, return_counts=True)
        if route == "exact" and float(np.prod(cnts + 1.0)) <= MAX_CLASS_SUBSETS:
            if scale * n < 1e300 and scale > 1e-280:  # in the data's units: exact means (no overflow)
                return _enum_law(vals, cnts, n, 1.0, mean_sd(x)[0])
            return _enum_law(vals / scale, cnts, n, scale, mean)  # subset sums would overflow (or underflow)
        if lattice is not None:
            built = _lattice_law(y, lattice, n, scale, mean)
            if built is not None:
                return built
            return _mc_lattice_law(x, lattice, n_resamples, seed() if callable(seed) else int(seed))
        route = "monte-carlo"
    if route == "saddlepoint":
        return SubsetLaw("saddlepoint-inversion", scale, n, mean, {"x": y})
    return _mc_law(y, n, scale, mean, n_resamples, seed() if callable(seed) else int(seed))


def _enum_law(vals: np.ndarray, cnts: np.ndarray, n: int, scale: float, mean: float) -> SubsetLaw:
    small = float(np.prod(cnts + 1.0)) <= _small.CLASS_SUBSETS  # numpy, bit-identical (no numba dispatch)
    s, nn, w = (_small.class_subsets if small else K.class_subsets)(
        np.ascontiguousarray(vals), np.ascontiguousarray(cnts.astype(np.int64)))
    keep = nn > 0
    means = s[keep] / nn[keep]
    order = np.argsort(means, kind="stable")
    data = dict(s=s, n=nn, w=w, total=float(2.0**n), means=means[order], w_sorted=w[keep][order])
    return SubsetLaw("exact-inversion", scale, n, mean, data)


def _mc_law(y: np.ndarray, n: int, scale: float, mean: float, n_resamples: int, seed: int) -> SubsetLaw:
    absy = np.abs(y)
    nonzero = absy > 0
    a = absy[nonzero]
    sg = y[nonzero] > 0
    order = np.argsort(a, kind="stable")  # the p-value kernels' order
    a_s = np.ascontiguousarray(a[order])
    sg_s = sg[order]
    m = a_s.size
    tab, n_words = K.word_tables(a_s)
    bits = np.zeros(64 * n_words, dtype=np.uint64)
    bits[:m] = sg_s
    sgn = (bits.reshape(n_words, 64) << np.arange(64, dtype=np.uint64)).sum(axis=1).astype(np.uint64)
    n_zero = n - m
    from ipcausal.stats._threads import plan, run

    p = plan("continuous-fused", n_words * n_resamples, simd=False)  # byte tables: the threads measured for them
    t, v = run(p, K.mc_subsets, K.mc_subsets_parallel, tab, n_words, np.ascontiguousarray(sgn), m, n_zero,
               n_resamples, seed)
    K.mc_split(t, v, float(y.sum()), n)  # t, v become S_A, N_A (12 bytes per resample)
    data = dict(s=t, n=v, total=float(y.sum()), size=n)
    return SubsetLaw("monte-carlo-inversion", scale, n, mean, data)


def _mc_lattice_law(x: np.ndarray, k: np.ndarray, n_resamples: int, seed: int) -> SubsetLaw:
    """The Monte Carlo law on lattice data (the same sign vectors as :func:`_mc_law`) from the
    fused kernels: the AVX-512 nibble pass, else the portable popcount pass (integer T)."""
    from ipcausal.stats.fused import counts_and_law, simd_ok

    absx = np.abs(x)
    scale = float(absx.max())
    nonzero = absx / scale > 0
    a = np.ascontiguousarray((absx / scale)[nonzero])
    simd = None if simd_ok() else False  # the measured choice: the nibble pass or the popcount pass
    data = counts_and_law(x, a, np.sign(x[nonzero]), np.asarray(k), (0.0, 0.0, 0.0), n_resamples, seed, simd,
                          need_counts=False)[1]
    return SubsetLaw("monte-carlo-inversion", scale, x.size, float(data["y"].mean()), data)


@dataclass(frozen=True)
class _Rows:
    """The lattice law's box rows as short Fourier sums (:func:`ipcausal.stats._kernels.lattice_rows`):
    N = n_lo .. n_lo + m1 − 1, S = s_lo .. s_lo + m2 − 1, period f2."""

    rows: tuple[np.ndarray, ...]
    n_lo: int
    s_lo: int
    m1: int
    m2: int
    f2: int

    def mass(self, num: int, den: int, strict: bool, mirror: bool) -> float:
        """Σ_N P(N, S ≥ num·N/den) (``strict``: >; ``mirror``: the same for −S), integer thresholds."""
        return K.fourier_upper_mass(self.rows, self.m2, self.f2, self.n_lo, self.s_lo, num, den, strict, mirror)

    def mass_float(self, delta: float, tol: float, mirror: bool) -> float:
        """Σ_N P(N, S − δN ≥ −tol) (``mirror``: −S − δN ≥ −tol)."""
        return K.fourier_upper_mass_float(self.rows, self.m2, self.f2, self.n_lo, self.s_lo, delta, tol, mirror)


def _fast_len(m: int) -> int:
    """The smallest 2·3·5-smooth integer ≥ m."""
    best = 1 << max(0, (m - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            q = p35
            while q < m:
                q *= 2
            best = min(best, q)
            p35 *= 3
        p5 *= 5
    return best


def _box(total: int, center: float, sq: float) -> tuple[int, int]:
    """[lo, hi] ⊂ [0, total]-like range around ``center`` holding all but BOX_MASS (Hoeffding)."""
    t = math.sqrt(sq / 2.0 * math.log(2.0 / BOX_MASS))
    return math.floor(center - t), math.ceil(center + t)


def _scan_share(vals: np.ndarray, cnts: np.ndarray) -> float:
    """About the share of a spectrum row that :func:`ipcausal.stats._kernels.lattice_spectrum`
    visits: a non-zero value v counted c times is alive only within β = acos(floor^(1/c)) of
    a multiple of π, and the scan jumps over the rest (it steers by the four largest counts)."""
    share = 1.0
    for i in np.argsort(-cnts, kind="stable")[:4]:
        if vals[i] != 0:
            beta = math.acos(min(1.0, SPECTRUM_FLOOR ** (1.0 / float(cnts[i]))))
            share = min(share, 2.0 * beta / math.pi)
    return share


def _lattice_law(y: np.ndarray, k: np.ndarray, n: int, scale: float, mean: float) -> SubsetLaw | None:
    nonzero = np.abs(y) > 0
    z = np.zeros(n, dtype=np.int64)
    z[nonzero] = np.asarray(k, dtype=np.int64) * np.sign(y[nonzero]).astype(np.int64)
    unit = float(np.abs(y[nonzero]).max()) / float(np.abs(z).max())
    vals, cnts = np.unique(z, return_counts=True)
    s_min = int(vals[vals < 0] @ cnts[vals < 0]) if np.any(vals < 0) else 0
    s_max = int(vals[vals > 0] @ cnts[vals > 0]) if np.any(vals > 0) else 0
    b_n = _box(n, n / 2.0, float(n))
    b_s = _box(n, float(z.sum()) / 2.0, float(np.dot(z, z)))
    n_lo, n_hi = max(0, b_n[0]), min(n, b_n[1])
    s_lo, s_hi = max(s_min, b_s[0]), min(s_max, b_s[1])
    m1, m2 = n_hi - n_lo + 1, s_hi - s_lo + 1
    if m1 * SPECTRUM_COLUMNS > MAX_LATTICE_GRID:
        return None
    f1, f2 = _fast_len(m1), _fast_len(m2 + (m2 & 1))  # FFT-friendly sizes (a longer period only helps)
    if vals.size * f1 * (f2 // 2 + 1) * _scan_share(vals, cnts) > 16 * MAX_LATTICE_GRID:
        return None  # the spectrum's scan would visit too many points (few, spread-out differences)
    order = np.argsort(-cnts, kind="stable")  # largest counts first: the floor test cuts early
    args = (vals[order].astype(np.float64), cnts[order].astype(np.int64), f1, f2, SPECTRUM_FLOOR)
    spec, cols, n_cols = K.lattice_spectrum(*args, SPECTRUM_COLUMNS)
    if n_cols > SPECTRUM_COLUMNS:  # a wide spectrum (few differences): every column
        if f1 * (f2 // 2 + 1) > MAX_LATTICE_GRID:
            return None
        spec, cols, n_cols = K.lattice_spectrum(*args)
    live = np.argsort(cols[:n_cols], kind="stable")  # ascending columns, 0 first (always live)
    head = _fft.ifft(spec[:, live], axis=0)  # the complex pass of the 2-D inverse FFT, live columns only
    rows = _Rows(K.lattice_rows(head, cols[live], n_lo, s_lo, m1, m2, f2), n_lo, s_lo, m1, m2, f2)
    data = dict(unit=unit, rows=rows)
    return SubsetLaw("exact-lattice-inversion", scale, n, mean, data)
