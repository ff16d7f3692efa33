"""The exact sign-flip null on a lattice at any n: grouped binomials convolved by one FFT.

On a lattice every magnitude is an integer multiple k of one unit, and the weight of the positive
signs is W = Σ_v v · B_v, with B_v ~ Binomial(c_v, 1/2) independent for each distinct value v
(c_v of them).  Ratings take a handful of values (differences of 1–6 scores: five), so the law
of W is the product of a few closed-form characteristic functions

    E e^{-iωW} = Π_v ((1 + e^{-iωv}) / 2)^{c_v},

sampled on ω = 2πj/L with L > Σ_v v c_v (no aliasing) and inverted by one real FFT: O(g · M +
M log M) work for g values and M = Σ_v v c_v, where the dynamic programme of
:func:`ipcausal.stats._kernels.lattice_tail` costs O(n · M).

**Tails far out.**  A tail P(W ≥ w0) of 1e-30 is below the FFT's absolute rounding (about 1e-16
of the peak), so the tail is computed under the exponentially tilted law P_θ(W = w) ∝ P(W = w)
e^{θw} with θ chosen so that E_θ W = w0 (the tilted law has its mass where the tail starts), then
untilted: P(W = w) = P_θ(W = w) · E e^{θW} · e^{-θw}.  The error is then relative, not absolute.

**Certified bound.**  :func:`tail` returns the tail together with a bound on its absolute error
under the standard floating-point model: the error of each log-factor (``log1p``/``atan2`` of
accurately reduced phases, a few ulps each, times c_v) bounds the spectrum's error, the inverse
FFT adds at most ``6 u log2 L`` of the pmf's 2-norm (Higham, *Accuracy and Stability*, Thm 24.2),
and the untilting multiplies per cell by a known factor.  :func:`ipcausal.permutation_test`
reports ``min(1, p + bound)`` — a valid, slightly conservative p — and the bound is about 1e-13
of p on ratings.
"""

from __future__ import annotations

import math

import numpy as np

from ipcausal._lazy import lazy_module

_fft = lazy_module("scipy.fft")  # imported on first use
_special = lazy_module("scipy.special")

__all__ = ["tail", "pmf", "cost"]

_U = 2.0 ** -53  # unit roundoff of float64
_DEAD = -740.0  # log|X| below this: the spectrum point is set to 0 (moves a cell < 1e-321)


def _classes(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    vals, cnts = np.unique(np.asarray(k, dtype=np.int64), return_counts=True)
    return vals, cnts.astype(np.int64)


def cost(k: np.ndarray) -> float:
    """Rough work of :func:`tail` (spectrum points × values + one FFT), to compare with Monte Carlo."""
    vals, cnts = _classes(k)
    m = float(vals @ cnts)
    return (vals.size + 2.0 * math.log2(m + 2.0)) * (m / 2.0 + 1.0)


def _log_mgf(vals: np.ndarray, cnts: np.ndarray, theta: float) -> float:
    """log E e^{θW} = Σ_v c_v log((1 + e^{θv}) / 2), without overflow."""
    x = theta * vals.astype(np.float64)
    return float(cnts @ (np.logaddexp(0.0, x) - math.log(2.0)))


def _tilt(vals: np.ndarray, cnts: np.ndarray, w0: int) -> float:
    """θ ≥ 0 with E_θ W = w0 (bisection; 0 when w0 is at or below the mean)."""
    v = vals.astype(np.float64)
    c = cnts.astype(np.float64)
    total = float(v @ c)
    if w0 <= total / 2.0:
        return 0.0

    def mean(th: float) -> float:
        return float(c @ (v * _special.expit(th * v)))

    lo, hi = 0.0, 1.0 / float(v.min())
    while mean(hi) < w0 and hi < 1e3:
        lo, hi = hi, 2.0 * hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if mean(mid) < w0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _tilted_pmf(vals: np.ndarray, cnts: np.ndarray, theta: float) -> tuple[np.ndarray, float]:
    """P_θ(W = w), w = 0..M, and a bound on the absolute error of each cell."""
    total = int(vals @ cnts)
    length = _fft.next_fast_len(total + 1, real=True)
    half = length // 2 + 1
    j = np.arange(half, dtype=np.int64)  # the points still alive (|X| above e^-745)
    logx = np.zeros(half, dtype=np.complex128)
    err = np.zeros(half)
    for v, c in sorted(zip(vals.tolist(), cnts.tolist()), key=lambda vc: -vc[1]):  # largest counts prune most
        q = float(_special.expit(theta * v))  # tilted P(sign +)
        ph = (2.0 * math.pi / length) * ((j * v) % length)  # ωv reduced exactly (integers)
        s = np.sin(0.5 * ph)
        re = -2.0 * q * s * s  # z = q (e^{-iωv} − 1): the factor is 1 + z
        im = -q * np.sin(ph)
        with np.errstate(divide="ignore"):
            lr = 0.5 * np.log1p(2.0 * re + re * re + im * im)
        keep = logx.real[j] + c * lr > _DEAD  # every factor has modulus ≤ 1: a dead point stays dead
        j, lr, re, im = j[keep], lr[keep], re[keep], im[keep]
        li = np.arctan2(im, 1.0 + re)
        logx[j] += c * (lr + 1j * li)
        err[j] += c * 8.0 * _U * (np.abs(lr) + np.abs(li) + 1.0)
    spec = np.zeros(half, dtype=np.complex128)
    spec[j] = np.exp(logx[j])
    d_spec = np.abs(spec) * np.expm1(np.minimum(err, 700.0))  # |error| of each live spectrum point
    dead_total = (half - j.size) * math.exp(_DEAD)  # the points set to 0 had |X| below e^_DEAD
    f = _fft.irfft(spec, n=length)[: total + 1]
    norm2 = math.sqrt(float(f @ f))
    cell = (float(d_spec[0]) + 2.0 * float(d_spec[1:].sum()) + 2.0 * dead_total) / length  # inverse DFT of the spectrum error
    cell += 6.0 * _U * math.log2(length) * norm2 * 1.1 + 4.0 * _U  # the FFT's own rounding, the clip
    np.clip(f, 0.0, 1.0, out=f)
    return f, cell


def tail(k: np.ndarray, w0: int) -> tuple[float, float]:
    """P(W ≥ w0) for W = Σ of the k's whose sign is +, and a bound on its absolute error.

    Parameters
    ----------
    k : numpy.ndarray
        Positive integers (lattice units of the non-zero |Δ|).
    w0 : int
        Threshold.

    Returns
    -------
    (float, float)
        The tail and the certified bound on its absolute error (see the module).

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats.grouped import tail
    >>> p, err = tail(np.array([1, 1, 2, 3]), 6)  # only + + + + reaches 7; 6 also by (1, 2, 3)
    >>> round(p * 16, 9), err < 1e-12
    (3.0, True)
    """
    vals, cnts = _classes(k)
    total = int(vals @ cnts)
    if w0 <= 0:
        return 1.0, 0.0
    if w0 > total:
        return 0.0, 0.0
    if w0 == total:  # every sign +: exact, 2^-n
        return math.ldexp(1.0, -int(cnts.sum())), 0.0
    theta = _tilt(vals, cnts, w0)
    f, cell = _tilted_pmf(vals, cnts, theta)
    log_m = _log_mgf(vals, cnts, theta)
    w = np.arange(w0, total + 1, dtype=np.float64)
    back = np.exp(log_m - theta * w)  # untilting factors, each at most the Chernoff bound
    p = float(f[w0:] @ back)
    bound = cell * float(back.sum())
    if theta == 0.0 and w0 < f.size:  # near the centre: the complement has fewer cells
        q = 1.0 - float(f[:w0].sum())
        bound_q = cell * w0 + 4.0 * _U
        if bound_q < bound:
            p, bound = q, bound_q
    return min(1.0, max(p, 0.0)), bound


def pmf(k: np.ndarray) -> np.ndarray:
    """P(W = w), w = 0..Σk (untilted; absolute error about 1e-16 per cell), for the Report's picture.

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats.grouped import pmf
    >>> np.round(pmf(np.array([1, 1, 2])) * 8, 9).tolist()
    [1.0, 2.0, 2.0, 2.0, 1.0]
    """
    vals, cnts = _classes(k)
    return _tilted_pmf(vals, cnts, 0.0)[0]
