"""Equivalence by two one-sided sign-flip tests (TOST): showing that mean(Δ) is negligible.

Failing to reject mean(Δ) = 0 is not evidence that there is no effect (SPEC §8).  With a
margin ε > 0 chosen by the user (the smallest effect that would matter), equivalence is the
alternative: H0: |mean(Δ)| ≥ ε against H1: |mean(Δ)| < ε.  It is rejected at level α when both

* the sign-flip test of Δ + ε rejects "mean ≤ −ε" in favour of "mean > −ε", and
* the sign-flip test of Δ − ε rejects "mean ≥ ε" in favour of "mean < ε",

each at level α; the p-value is the larger of the two.  The unit of randomisation is the pair:
under each boundary null the shifted differences keep or flip their signs with probability
1/2.  Equivalently (exactly, on the exact routes) the (1 − 2α) confidence interval obtained by
inverting the two-sided test lies inside (−ε, ε).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ipcausal.stats.results import EquivalenceResult
from ipcausal.stats._validate import as_sample, choice, positive_int, seed_from

__all__ = ["equivalence_test"]

_LAW_ROUTE = {"exact-enumeration": "exact", "exact-lattice": "lattice", "exact-lattice-fft": "lattice",
              "monte-carlo": "monte-carlo",
              "saddlepoint": "saddlepoint"}


def _margin(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`margin` must be a positive number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"`margin` must be a finite number > 0, got {value!r}")
    return v


def _alpha(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`alpha` must be a number in (0, 0.5), got {type(value).__name__}")
    v = float(value)
    if not 0.0 < v < 0.5:
        raise ValueError(f"`alpha` must lie in (0, 0.5) (the interval has level 1 - 2 alpha), got {value!r}")
    return v


def equivalence_test(
    d: Any,
    *,
    margin: float,
    alpha: float = 0.05,
    method: str = "auto",
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
) -> EquivalenceResult:
    """Two one-sided sign-flip tests of H0: |mean(Δ)| ≥ ``margin`` (equivalence when rejected).

    Parameters
    ----------
    d : array_like, shape (n,)
        Paired differences Δ_k = y_j − y_i (finite, n ≥ 2).
    margin : float
        The equivalence margin ε > 0: effects smaller than ε in absolute value do not matter.
        Choose it before looking at the data.
    alpha : float
        Level of each one-sided test, in (0, 0.5); the interval has level 1 − 2α.
    method : {"auto", "exact", "monte-carlo", "saddlepoint"}
        Route of the sign-flip law, as in :func:`ipcausal.permutation_test`.  Exact routes
        give exact one-sided p-values for any ε (also when Δ ± ε leave the lattice).
    n_resamples : int or None
        Number L of sign vectors for Monte Carlo (``None``: 100,000).  Both one-sided tests
        and the interval use the same L sign vectors.
    rng : int, numpy.random.Generator or None
        Source of randomness for Monte Carlo (an int seed makes the result reproducible).

    Returns
    -------
    EquivalenceResult

    Examples
    --------
    >>> from ipcausal.stats import equivalence_test
    >>> d = [0, 1, -1, 0, 0, 1, -1, 0, 1, 0, -1, 0, 0, 1, -1, 0] * 4
    >>> res = equivalence_test(d, margin=0.5)
    >>> res.equivalent, res.method, res.pvalue < 1e-6
    (True, 'exact-lattice', True)
    >>> round(res.ci_low, 4), round(res.ci_high, 4), res.ci_method  # the 90% inverted interval
    (-0.1481, 0.1481, 'exact-lattice-inversion')
    >>> equivalence_test(d[:8], margin=0.5).equivalent  # too few pairs to show it
    False
    """
    from ipcausal.stats import intervals
    from ipcausal.stats.permutation import METHODS, lattice_units, permutation_test

    x = as_sample(d, "d")
    eps = _margin(margin)
    a_level = _alpha(alpha)
    method = choice(method, "method", METHODS)
    big_l = 100_000 if n_resamples is None else positive_int(n_resamples, "n_resamples")
    seed = seed_from(rng)

    res = permutation_test(x, method=method, n_resamples=big_l, rng=seed, confidence_level=1.0 - 2.0 * a_level)
    k = None
    if res.method in ("exact-lattice", "exact-lattice-fft", "exact-enumeration"):
        absx = np.abs(x)
        scale = float(absx.max())
        if scale > 0:
            a = absx / scale
            k = lattice_units(a[a > 0])
    law = intervals.law(x, _LAW_ROUTE[res.method], lattice=k, n_resamples=big_l, seed=seed_from(seed))
    p_lower = float(law.lower(-eps))  # Δ + ε, H1: mean > −ε
    p_upper = float(law.upper(eps))  # Δ − ε, H1: mean < ε
    p = max(p_lower, p_upper)
    return EquivalenceResult(
        statistic=float(x.mean()),
        pvalue=p,
        equivalent=bool(p <= a_level),
        margin=eps,
        alpha=a_level,
        pvalue_lower=p_lower,
        pvalue_upper=p_upper,
        ci_low=res.ci_low,
        ci_high=res.ci_high,
        confidence_level=res.confidence_level,
        method=res.method,
        ci_method=res.ci_method,
        n=int(x.size),
        n_resamples=res.n_resamples,
        null_hypothesis=(f"H0: |mean(Δ)| ≥ {eps:g} (two one-sided sign-flip tests of Δ ± {eps:g}, pairs "
                         f"flipped independently) against H1: |mean(Δ)| < {eps:g}"),
    )
