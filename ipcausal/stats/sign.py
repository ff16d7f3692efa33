"""The one-sample sign test for similarity outcomes (SPEC §3): H0 median(s) = m0.

n₋ = #{s < m0}, n₊ = #{s > m0}, n = n₋ + n₊ (values equal to m0 are dropped and reported).
Under H0, n₋ ~ Binomial(n, 1/2).  For H1 median(s) < m0 (``alternative="less"``, the study's
direction) p = P(X ≥ n₋); for ``"greater"`` p = P(X ≥ n₊); ``"two-sided"`` doubles the smaller
tail (capped at 1).  When every value equals m0 (n = 0) the data carry no evidence either way:
p = 1, by definition here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats.results import SignTestResult
from ipcausal.stats._validate import ALTERNATIVES, as_sample, choice, finite_real, open_unit

_special = lazy_module("scipy.special")  # imported on first use

__all__ = ["sign_test", "sign_tests", "binomial_tail"]


def binomial_tail(k: Any, n: Any) -> np.ndarray:
    """P(X ≥ k) for X ~ Binomial(n, 1/2), vectorized (k ≤ 0 → 1, k > n → 0)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        # P(X >= k) = I_{1/2}(k, n - k + 1) for 1 <= k <= n
        p = _special.betainc(np.maximum(k, 1.0), np.maximum(n - k + 1.0, 1.0), 0.5)
    p = np.where(k <= 0, 1.0, np.where(k > n, 0.0, p))
    return p


def _pvalues(n_below: Any, n_above: Any, alternative: str) -> np.ndarray:
    n_below = np.asarray(n_below)
    n_above = np.asarray(n_above)
    n = n_below + n_above
    if alternative == "less":
        p = binomial_tail(n_below, n)
    elif alternative == "greater":
        p = binomial_tail(n_above, n)
    else:
        p = np.minimum(1.0, 2.0 * binomial_tail(np.maximum(n_below, n_above), n))
    return np.where(n == 0, 1.0, p)


def _null_text(m0: float, alternative: str) -> str:
    h1 = {"less": "<", "greater": ">", "two-sided": "≠"}[alternative]
    return f"H0: median(similarity) = {m0:g} against H1: median(similarity) {h1} {m0:g}"


def sign_test(
    s: Any,
    *,
    m0: float = 0.0,
    alternative: str = "less",
    confidence_level: float = 0.95,
) -> SignTestResult:
    """Exact sign test of H0: median(s) = m0 against H1: median(s) < m0 by default (SPEC §3).

    The unit of randomisation is the value (each is below or above m0 with probability 1/2
    under H0).  The default alternative is the study's direction, ``"less"`` — the same as
    :func:`sign_tests` — not ``scipy.stats.binomtest``'s two-sided one: pass
    ``alternative="two-sided"`` for that.  The study's similarity test is ``m0=0.8`` with this
    default; that is what :func:`ipcausal.test` passes.

    Parameters
    ----------
    s : array_like, shape (n,)
        Similarities of paired responses (any finite numbers; usually in [0, 1]).
    m0 : float
        The hypothesised median (0.8 in the study; default 0).
    alternative : {"less", "greater", "two-sided"}, default "less"
        Direction of H1 (``"less"``: median(s) < m0).
    confidence_level : float
        Level of the distribution-free interval for the median.

    Returns
    -------
    SignTestResult

    Examples
    --------
    >>> from ipcausal import sign_test
    >>> res = sign_test([0.2, 0.5, 0.9, 0.4, 0.3, 0.8, 0.1], m0=0.8, alternative="less")
    >>> res.statistic, res.n, res.n_ties, round(res.pvalue, 4)
    (5, 6, 1, 0.1094)
    >>> sign_test([0.2, 0.5, 0.9, 0.4, 0.3, 0.8, 0.1], m0=0.8).pvalue  # the default: "less"
    0.109375
    >>> sign_test([0.2, 0.5, 0.9, 0.4, 0.3, 0.8, 0.1], m0=0.8, alternative="two-sided").pvalue
    0.21875
    """
    x = as_sample(s, "s", min_size=1)
    m0 = finite_real(m0, "m0")
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    level = open_unit(confidence_level, "confidence_level")
    n_below = int(np.count_nonzero(x < m0))
    n_above = int(np.count_nonzero(x > m0))
    n = n_below + n_above
    p = float(_pvalues(n_below, n_above, alternative))
    lo, hi, attained = median_ci_coverage(x, level)
    statistic = {"less": n_below, "greater": n_above}.get(alternative, max(n_below, n_above))
    return SignTestResult(
        statistic=statistic,
        pvalue=p,
        alternative=alternative,
        method="exact-binomial",
        n=n,
        null_hypothesis=_null_text(m0, alternative),
        m0=m0,
        n_total=int(x.size),
        n_ties=int(x.size - n),
        n_below=n_below,
        n_above=n_above,
        median=float(np.median(x)),
        share_below=n_below / x.size,
        ci_low=lo,
        ci_high=hi,
        confidence_level=attained,
        ci_method=("binomial-order-statistics (confidence_level: the attained coverage)" if attained >= level
                   else f"binomial-order-statistics ([min, max]: n = {x.size} reaches at most this coverage, "
                        f"below the requested {level:g})"),
    )


def median_ci(x: np.ndarray, level: float) -> tuple[float, float]:
    """Distribution-free interval for the median from order statistics (conservative)."""
    lo, hi, _ = median_ci_coverage(x, level)
    return lo, hi


def median_ci_coverage(x: np.ndarray, level: float) -> tuple[float, float, float]:
    """:func:`median_ci` and its attained coverage 1 − 2·P(Binom(n, ½) ≤ r − 1).

    The coverage is exact for continuous data (at least that with ties).  When no order
    statistics reach ``level`` (small n), the interval is [min, max] and its coverage,
    1 − 2·2⁻ⁿ, is below ``level``: it is reported as it is, never as ``level``.

    Examples
    --------
    >>> import numpy as np
    >>> median_ci_coverage(np.array([0.95, 0.9, 0.85, 0.78]), 0.95)
    (0.78, 0.95, 0.875)
    """
    lo, hi, r = _median_ci(x, level)
    tail = float(_special.bdtr(r - 1, x.size, 0.5))
    return lo, hi, 1.0 - 2.0 * tail


def _median_ci(x: np.ndarray, level: float) -> tuple[float, float, int]:
    """The interval [x_(r), x_(n−r+1)] and its r (r = 1 also when no r reaches ``level``)."""
    n = x.size
    xs = np.sort(x)
    alpha = 1.0 - level
    # largest r with P(Binom(n, 1/2) <= r - 1) <= alpha / 2; interval [x_(r), x_(n - r + 1)]
    # scipy.special only (scipy.stats costs ~1 s to import): r = binom.ppf(alpha/2, n, 1/2),
    # the smallest r with P(X <= r) >= alpha/2
    cdf = _special.bdtr(np.arange(n + 1), n, 0.5)
    r = int(np.searchsorted(cdf, alpha / 2, side="left"))
    if r >= 1 and cdf[r - 1] > alpha / 2:
        r -= 1
    if r < 1:
        return float(xs[0]), float(xs[-1]), 1
    return float(xs[r - 1]), float(xs[n - r]), r


def sign_tests(n_below: Any, n_above: Any, *, alternative: str = "less") -> np.ndarray:
    """Many sign tests at once, from counts: one p-value per group (vectorized).

    Parameters
    ----------
    n_below, n_above : array_like of int
        Per group, the counts of values below and above m0 (ties already dropped).
    alternative : {"less", "greater", "two-sided"}, default "less"
        Direction of H1, as in :func:`sign_test` (``"less"``: the median is below m0).

    Returns
    -------
    numpy.ndarray
        One p-value per group.

    Examples
    --------
    >>> from ipcausal.stats import sign_tests
    >>> sign_tests([5, 0, 3], [1, 4, 3]).round(4).tolist()
    [0.1094, 1.0, 0.6562]
    """
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    lo = np.asarray(n_below)
    hi = np.asarray(n_above)
    for name, arr in (("n_below", lo), ("n_above", hi)):
        if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.rint(arr))):
            raise TypeError(f"`{name}` must hold non-negative integers")
        if np.any(arr < 0):
            raise ValueError(f"`{name}` must hold non-negative integers")
    if lo.shape != hi.shape:
        raise ValueError(f"`n_below` and `n_above` must have the same shape, got {lo.shape} and {hi.shape}")
    return _pvalues(lo, hi, alternative)


def paper_compat_sign_pvalue(s: np.ndarray, m0: float) -> float:
    """The released study code's sign test: k = #{s > m0} of all n values, alternative "greater"."""
    x = as_sample(s, "s", min_size=1)
    k = int(np.count_nonzero(x > m0))
    return float(binomial_tail(k, x.size))


