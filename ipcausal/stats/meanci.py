"""A test and interval for the mean of a bounded variable, valid for every distribution on its range.

The sign-flip test is exact for "Δ is symmetric about 0", and its inverted interval is an
interval for a *shift* under "Δ − δ is symmetric".  When Δ is asymmetric (sparse ratings, 0/1
outcomes with unequal discordance) that interval does not cover the mean at its level (SPEC
§11).  No interval can cover the mean of *every* distribution without a bound on the values;
with one (|Δ| ≤ c: the scorer knows c — 1 for 0/1, k − 1 for a k-point rating) there are.

:func:`bounded_mean_test` is the fixed-n betting test of Waudby-Smith & Ramdas (JRSS-B 2024):
for a candidate mean m, the capital of a gambler who bets against m, with bets
λ_t = sqrt(2 log(1/a) / (n σ̂²_{t−1})) fixed before the t-th value is seen (σ̂² the running
variance, shrunk towards the largest possible), truncated so that no bet can lose everything,
grows only if the data speak against m.  Under E X = m it is a non-negative martingale that
starts at 1, so by Ville's inequality it reaches 1/a with probability at most a, *for every
distribution on the range*.  m is rejected when the capital of either side reached 1/a at some
time t ≤ n; the interval is the set of m not rejected (an interval: each side's capital is
monotone in m; the ends are found by bisection, to adjacent floating-point numbers).  The p of
H0: mean = m0 is min(1, 1 / max capital) per side, twice the smaller one two-sided.  The
kernels are in :mod:`ipcausal.stats._kernels.meanci`.

The bets are placed in the order of the input, and the guarantee holds for values that are
independent draws of one distribution on the range, in an order that does not depend on their
values (pairs in the order they were built or sent; clusters counted as one value, their mean).
A file sorted by the outcome must be shuffled first: the running maximum of the capital would
read the early, one-sided stretch as evidence (measured: the equivalence test of Bernoulli(0.1)
differences at the margin 0.1, n = 300, has size 0.029 in a random order and 1.0 with the
zeros first — ``tests/stats/test_meanci.py``).  The measured coverage and
size, against the sign-flip interval and TOST, are in ``benchmarks/RESULTS.md``
(``benchmarks/calib_meanci.py``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipcausal.stats._validate import ALTERNATIVES, as_sample, choice, finite_real, open_unit
from ipcausal.stats.results import Result

__all__ = ["bounded_mean_test", "BoundedMeanTestResult", "as_bounds", "TRUNCATION", "CI_METHOD"]

#: The largest bet as a share of what a value at the bound could lose (WSR's default 1/2).
TRUNCATION = 0.5
#: The name every result gives this interval.
CI_METHOD = "betting-fixed-n"


@dataclass(frozen=True)
class BoundedMeanTestResult(Result):
    """Result of :func:`bounded_mean_test`.

    ``statistic`` is the mean; ``pvalue`` the p of H0: mean = ``m0`` against ``alternative``;
    ``ci_low``/``ci_high`` the interval for the mean at ``confidence_level`` (two-sided, or
    one-sided with the range's end on the other side), valid for every distribution on
    ``bounds``; ``m0`` lies outside it exactly when ``pvalue <= 1 − confidence_level``.
    ``ci_method`` is ``"betting-fixed-n"``.
    """

    statistic: float
    pvalue: float
    alternative: str
    method: str
    n: int
    null_hypothesis: str
    m0: float
    ci_low: float
    ci_high: float
    confidence_level: float
    bounds: tuple[float, float]
    ci_method: str = CI_METHOD


def as_bounds(bound: Any, name: str = "bound") -> tuple[float, float]:
    """``bound`` c > 0 (the range [−c, c]) or a pair (low, high) with low < high, as floats."""
    if isinstance(bound, bool):
        raise TypeError(f"`{name}` must be a number c > 0 (|x| ≤ c) or a pair (low, high), got {bound!r}")
    if isinstance(bound, numbers.Real):
        c = finite_real(bound, name)
        if c <= 0:
            raise ValueError(f"`{name}` must be > 0 (the values lie in [−{name}, {name}]), got {bound!r}")
        return -c, c
    try:
        lo, hi = bound
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a number c > 0 (|x| ≤ c) or a pair (low, high), got {bound!r}") from None
    lo, hi = finite_real(lo, name), finite_real(hi, name)
    if not lo < hi:
        raise ValueError(f"`{name}` must have low < high, got {bound!r}")
    return lo, hi


class _Scaled:
    """The values mapped to y ∈ [0, 1] (no overflow at the float maximum), in their order, and back."""

    def __init__(self, x: np.ndarray, lo: float, hi: float, name: str) -> None:
        tol = 1e-12 * max(abs(lo), abs(hi))
        if x.min() < lo - tol or x.max() > hi + tol:
            i = int(np.flatnonzero((x < lo - tol) | (x > hi + tol))[0])
            raise ValueError(f"`{name}`: every value must lie in the range [{lo:g}, {hi:g}] of the bound; "
                             f"value {x[i]!r} at index {i}")
        self.range = (lo, hi)
        self.s = max(abs(lo), abs(hi))
        self.lo, self.hi = lo / self.s, hi / self.s
        self.w = self.hi - self.lo
        self.y = np.ascontiguousarray(np.clip((x / self.s - self.lo) / self.w, 0.0, 1.0))

    def to_y(self, m: float) -> float:
        return float(np.clip((m / self.s - self.lo) / self.w, 0.0, 1.0))

    def from_y(self, e: float) -> float:
        return float(np.clip((self.lo + e * self.w) * self.s, *self.range))


def side_pvalues(y: np.ndarray, a: float, probes: tuple[float, float]) -> tuple[float, float, np.ndarray]:
    """(p of "mean ≤ probes[0]" from K⁺, p of "mean ≥ probes[1]" from K⁻, the bets), bets tuned to level ``a``."""
    from ipcausal.stats._kernels import meanci as K

    lam = K.plugin_bets(y, math.log(1.0 / a), float(y.size))
    p_up = min(1.0, math.exp(-K.log_max_capital(y, lam, probes[0], 1.0, TRUNCATION)))
    p_down = min(1.0, math.exp(-K.log_max_capital(y, lam, probes[1], -1.0, TRUNCATION)))
    return p_up, p_down, lam


def side_ends(sc: _Scaled, lam: np.ndarray, a: float, probes: tuple[float, float],
              want: tuple[bool, bool]) -> tuple[float, float]:
    """The interval's ends at one-sided level ``a`` per side (``want``: which sides are computed;
    the other is the range's end), in the data's units; the bisection decides ``probes`` first."""
    from ipcausal.stats._kernels import meanci as K

    thr = math.log(1.0 / a)
    lo, hi = sc.range
    if want[0]:
        e = K.crossing(sc.y, lam, 1.0, TRUNCATION, thr, np.array([probes[0]]))[0]
        lo = sc.from_y(e)
    if want[1]:
        e = K.crossing(sc.y, lam, -1.0, TRUNCATION, thr, np.array([probes[1]]))[0]
        hi = sc.from_y(e)
    return lo, hi


def snap(end: float, at: float, outside: bool, low: bool) -> float:
    """``end`` moved (by rounding only) so that ``at`` lies outside the closed interval exactly when
    ``outside`` (the test's decision there): the interval and the p never disagree."""
    if low:
        if outside and end <= at:
            return math.nextafter(at, math.inf)
        if not outside and end > at:
            return at
    else:
        if outside and end >= at:
            return math.nextafter(at, -math.inf)
        if not outside and end < at:
            return at
    return end


def _null_text(m0: float, alternative: str, lo: float, hi: float) -> str:
    h1 = {"two-sided": "≠", "greater": ">", "less": "<"}[alternative]
    return (f"H0: mean = {m0:g} for any distribution on [{lo:g}, {hi:g}] (values independent draws) "
            f"against H1: mean {h1} {m0:g}")


def bounded_mean_test(
    x: Any,
    *,
    bound: float | tuple[float, float],
    m0: float = 0.0,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
) -> BoundedMeanTestResult:
    """The betting test of mean(x) = ``m0`` and interval for the mean, valid for every bounded distribution.

    H0: the values are independent draws of a distribution on the range of ``bound`` whose mean
    is ``m0``; no other assumption (no symmetry, no normality).  The unit is the value (a pair's
    Δ, or a cluster's mean Δ).  The bets take the values in the given order, which must not
    depend on the values (see :mod:`ipcausal.stats.meanci`).

    Parameters
    ----------
    x : array_like, shape (n,)
        The values (finite, n ≥ 1), each inside the range.
    bound : float or (float, float)
        A number c > 0 for the range [−c, c] (paired differences of a scale: 1 for 0/1
        correctness, k − 1 for a k-point rating), or the range (low, high) itself.
    m0 : float
        The mean under H0 (inside the range).
    alternative : {"two-sided", "greater", "less"}
        H1: mean ≠, >, < m0.  The interval follows it: one-sided intervals end at the range.
    confidence_level : float
        Level of the interval; m0 lies outside it exactly when p ≤ 1 − confidence_level.

    Returns
    -------
    BoundedMeanTestResult

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats import bounded_mean_test
    >>> d = np.random.default_rng(0).permutation(np.r_[np.zeros(30), np.ones(16), -np.ones(4)])
    >>> res = bounded_mean_test(d, bound=1)                          # 0/1 outcomes: Δ in [−1, 1]
    >>> res.ci_method, round(res.statistic, 2), round(res.ci_low, 3), round(res.ci_high, 3)
    ('betting-fixed-n', 0.24, 0.001, 0.433)
    >>> res.pvalue <= 0.05, res.ci_low > 0                           # they agree, by construction
    (True, True)
    >>> bounded_mean_test(np.zeros(20), bound=1).ci_high > 0.1  # 20 zeros do not show |mean| < 0.1
    True
    """
    v = as_sample(x, "x", min_size=1)
    lo, hi = as_bounds(bound)
    m0 = finite_real(m0, "m0")
    if not lo <= m0 <= hi:
        raise ValueError(f"`m0` must lie in the range [{lo:g}, {hi:g}] of `bound`, got {m0!r}")
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    level = open_unit(confidence_level, "confidence_level")
    sc = _Scaled(v, lo, hi, "x")
    alpha = 1.0 - level
    a = alpha / 2.0 if alternative == "two-sided" else alpha  # each side's level (α/2 exactly)
    mp = sc.to_y(m0)
    p_up, p_down, lam = side_pvalues(sc.y, a, (mp, mp))
    want = (alternative != "less", alternative != "greater")
    p = {"two-sided": min(1.0, 2.0 * min(p_up, p_down)), "greater": p_up, "less": p_down}[alternative]
    ci_lo, ci_hi = side_ends(sc, lam, a, (mp, mp), want)
    # the decision at m0 is the p's (p ≤ α exactly when a side's p ≤ a): rounding cannot split them
    if want[0]:
        ci_lo = snap(ci_lo, m0, p_up <= a, True)
    if want[1]:
        ci_hi = snap(ci_hi, m0, p_down <= a, False)
    mean = float(np.clip(float(np.mean(v / sc.s)) * sc.s, lo, hi))
    return BoundedMeanTestResult(statistic=mean, pvalue=float(p), alternative=alternative, method="betting",
                                 n=int(v.size), null_hypothesis=_null_text(m0, alternative, lo, hi), m0=m0,
                                 ci_low=ci_lo, ci_high=ci_hi, confidence_level=level, bounds=(lo, hi))
