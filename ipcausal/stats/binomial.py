"""The exact binomial test of a success probability, with the exact (Clopper–Pearson) interval.

The statistics of :func:`ipcausal.probe` ("can the model infer the background?"): k correct
answers of n, each trial correct with probability p0 under H0 (chance, 1 / number of
options).  The same p-value as :func:`scipy.stats.binomtest` (its two-sided rule: the
outcomes no more likely than the observed one), computed from :mod:`scipy.special` so that the
statistics layer loads no more of scipy than it needs.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats._validate import ALTERNATIVES, choice, open_unit
from ipcausal.stats.results_ordered import BinomialTestResult

_special = lazy_module("scipy.special")  # imported on first use

__all__ = ["binomial_test", "clopper_pearson"]

_RERR = 1 + 1e-7  # scipy's relative tolerance for "no more likely than the observed outcome"


def _count(value: Any, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}, got {value}")
    return int(value)


def _cdf(x: int, n: int, p: float) -> float:
    return 0.0 if x < 0 else (1.0 if x >= n else float(_special.bdtr(x, n, p)))


def _sf(x: int, n: int, p: float) -> float:
    """P(X > x)."""
    return 1.0 if x < 0 else (0.0 if x >= n else float(_special.bdtrc(x, n, p)))


def _pmf(x: np.ndarray, n: int, p: float) -> np.ndarray:
    return np.exp(_special.gammaln(n + 1) - _special.gammaln(x + 1) - _special.gammaln(n - x + 1)
                  + x * math.log(p) + (n - x) * math.log1p(-p))


def clopper_pearson(k: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """The two-sided exact (Clopper–Pearson) interval of a binomial probability from k of n.

    Examples
    --------
    >>> lo, hi = clopper_pearson(7, 10)
    >>> round(lo, 4), round(hi, 4)
    (0.3475, 0.9333)
    """
    n = _count(n, "n", minimum=1)
    k = _count(k, "k", minimum=0)
    if k > n:
        raise ValueError(f"`k` must be at most `n` ({n}), got {k}")
    a = 1.0 - open_unit(confidence_level, "confidence_level")
    lo = 0.0 if k == 0 else float(_special.betaincinv(k, n - k + 1, a / 2))
    hi = 1.0 if k == n else float(_special.betaincinv(k + 1, n - k, 1 - a / 2))
    return lo, hi


def binomial_test(
    k: int,
    n: int,
    p: float = 0.5,
    *,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
) -> BinomialTestResult:
    """Exact test that the success probability of n independent trials is ``p``.

    H0: every trial succeeds with probability ``p`` (for the probe: the model picks the right
    background no more often than chance).  The unit is the trial (one probed prompt).
    The p-value is the binomial tail (``"greater"``: P(X ≥ k); ``"less"``: P(X ≤ k);
    ``"two-sided"``: the total probability of the outcomes no more likely than k, scipy's rule).

    Parameters
    ----------
    k : int
        Successes, 0 ≤ k ≤ n.
    n : int
        Trials, ≥ 1.
    p : float
        The success probability under H0, in (0, 1).
    alternative : {"two-sided", "greater", "less"}
        H1: the probability differs from, exceeds, or falls below ``p``.
    confidence_level : float
        Of the two-sided Clopper–Pearson interval ``ci_low``/``ci_high``.

    Returns
    -------
    BinomialTestResult

    Examples
    --------
    >>> from ipcausal.stats.binomial import binomial_test
    >>> res = binomial_test(14, 20, 1 / 3, alternative="greater")  # 14 of 20 right, chance 1/3
    >>> round(res.pvalue, 5), res.proportion
    (0.00088, 0.7)
    >>> round(res.ci_low, 3), round(res.ci_high, 3)
    (0.457, 0.881)
    """
    n = _count(n, "n", minimum=1)
    k = _count(k, "k", minimum=0)
    if k > n:
        raise ValueError(f"`k` must be at most `n` ({n}), got {k}")
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 < float(p) < 1.0:
        raise ValueError(f"`p` must be a probability strictly between 0 and 1, got {p!r}")
    p = float(p)
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    lo, hi = clopper_pearson(k, n, confidence_level)
    if alternative == "greater":
        pval = _sf(k - 1, n, p)
    elif alternative == "less":
        pval = _cdf(k, n, p)
    elif k == p * n:
        pval = 1.0
    else:  # scipy.stats.binomtest's two-sided rule
        d = float(_pmf(np.array([k]), n, p)[0]) * _RERR
        if k < p * n:
            i = np.arange(math.ceil(p * n), n + 1)
            y = int((_pmf(i, n, p) <= d).sum())
            pval = _cdf(k, n, p) + _sf(n - y, n, p)
        else:
            i = np.arange(math.floor(p * n) + 1)
            y = int((_pmf(i, n, p) <= d).sum())
            pval = _cdf(y - 1, n, p) + _sf(k - 1, n, p)
    h1 = {"two-sided": "≠", "greater": ">", "less": "<"}[alternative]
    return BinomialTestResult(
        statistic=k, pvalue=min(1.0, float(pval)), alternative=alternative, method="exact-binomial", n=n,
        null_hypothesis=(f"H0: each of the n trials succeeds with probability {p:.4g}, independently, against "
                         f"H1: the probability {h1} {p:.4g}"),
        proportion=k / n, p0=p, ci_low=lo, ci_high=hi, confidence_level=float(confidence_level))
