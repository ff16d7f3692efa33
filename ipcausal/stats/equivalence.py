"""Equivalence (TOST): showing that mean(Δ) is negligible, at level α for every bounded distribution.

Failing to reject mean(Δ) = 0 is not evidence that there is no effect (SPEC §8).  With a
margin ε > 0 chosen by the user (the smallest effect that would matter), equivalence is the
alternative: H0: |mean(Δ)| ≥ ε against H1: |mean(Δ)| < ε, rejected at level α when both
one-sided tests reject at level α — "mean ≤ −ε" and "mean ≥ ε" — and the p-value is the larger
of the two.  Equivalently the (1 − 2α) interval lies inside (−ε, ε) (exactly: the interval's
ends follow the two tests' decisions at ±ε).

``ci_method="betting"`` (the default): the one-sided tests are the betting tests of
:func:`ipcausal.stats.bounded_mean_test` at m = ∓ε, valid for *every* distribution of Δ on
[−c, c] (``bound`` = c, which the scorer knows): the size at the margin is at most α whatever
the shape of Δ (measured: ``benchmarks/RESULTS.md``, ``benchmarks/calib_meanci.py``).

``ci_method="shift"``: two one-sided sign-flip tests of Δ ± ε, the unit of randomisation the
pair.  They are exact only when Δ − ε (resp. Δ + ε) is symmetric about 0 — a shift model —
and otherwise not level α at the margin (measured: size 0.127 at α = 0.05 for 0/1 Δ with
n = 20; SPEC §11).  Kept for symmetric data and for comparison, under its name.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ipcausal.stats.results import EquivalenceResult
from ipcausal.stats._validate import as_sample, choice, positive_int, seed_from

__all__ = ["equivalence_test", "CI_METHODS"]

CI_METHODS = ("betting", "shift")
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
    bound: float | None = None,
    alpha: float = 0.05,
    ci_method: str = "betting",
    method: str = "auto",
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
) -> EquivalenceResult:
    """Two one-sided tests of H0: |mean(Δ)| ≥ ``margin`` (equivalence when rejected).

    Parameters
    ----------
    d : array_like, shape (n,)
        Paired differences Δ_k = y_j − y_i (finite; n ≥ 1 for ``"betting"``, n ≥ 2 for ``"shift"``),
        one per unit (a pair, or a cluster's mean Δ).
    margin : float
        The equivalence margin ε > 0: effects smaller than ε in absolute value do not matter.
        Choose it before looking at the data.
    bound : float or None
        The bound c on |Δ| (from the scale: 1 for 0/1 correctness, k − 1 for a k-point rating);
        needed by ``"betting"`` (no interval is valid for the mean of every distribution without
        one), and ε must be below it.  Not used by ``"shift"``.
    alpha : float
        Level of each one-sided test, in (0, 0.5); the interval has level 1 − 2α.
    ci_method : {"betting", "shift"}
        ``"betting"``: level α for every distribution on [−c, c] (the module docstring).
        ``"shift"``: sign-flip tests of Δ ± ε, exact only when Δ ∓ ε is symmetric about 0.
    method : {"auto", "exact", "monte-carlo", "saddlepoint"}
        ``"shift"`` only: the route of the sign-flip law, as in :func:`ipcausal.permutation_test`.
    n_resamples : int or None
        ``"shift"`` only: sign vectors for Monte Carlo (``None``: 100,000), shared by both tests
        and the interval.
    rng : int, numpy.random.Generator or None
        ``"shift"`` only: the Monte Carlo sign vectors (the betting test draws nothing; it bets in
        the order of ``d``, which must not depend on the values).

    Returns
    -------
    EquivalenceResult

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats import equivalence_test
    >>> d = np.tile([0, 1, -1, 0, 0, 1, -1, 0, 1, 0, -1, 0, 0, 1, -1, 0], 40)  # 0/1 outcomes: |Δ| ≤ 1
    >>> res = equivalence_test(d, margin=0.1, bound=1)
    >>> res.equivalent, res.ci_method, res.pvalue < 0.05
    (True, 'betting-fixed-n', True)
    >>> equivalence_test(np.zeros(20), margin=0.1, bound=1).equivalent  # 0.9**20 = 0.12 under mean 0.1
    False
    >>> equivalence_test(np.zeros(20), margin=0.1, ci_method="shift").equivalent  # assumes symmetry: wrong here
    True
    """
    eps = _margin(margin)
    a_level = _alpha(alpha)
    ci_method = choice(ci_method, "ci_method", CI_METHODS)
    if ci_method == "shift":
        return _shift_tost(d, eps, a_level, method, n_resamples, rng)
    if bound is None:
        raise ValueError("`bound` is needed for ci_method='betting': without a bound on |Δ| no interval is valid "
                         "for the mean of every distribution; pass bound=c (the scorer's bound, |Δ| ≤ c), or "
                         "ci_method='shift' for the sign-flip TOST, which assumes Δ ∓ margin symmetric about 0")
    if method != "auto":
        raise ValueError(f"`method` applies to ci_method='shift' only (the betting test has one route); got {method!r}")
    if n_resamples is not None:
        raise ValueError("`n_resamples` applies to ci_method='shift' only (the betting test draws no resamples)")
    seed_from(rng)  # validated (not used: the betting test draws nothing)
    return _betting_tost(d, eps, bound, a_level)


def _betting_tost(d: Any, eps: float, bound: Any, a_level: float) -> EquivalenceResult:
    from ipcausal.stats.meanci import CI_METHOD, _Scaled, as_bounds, side_ends, side_pvalues, snap

    x = as_sample(d, "d", min_size=1)
    lo, hi = as_bounds(bound)
    if not (lo < -eps and eps < hi):
        raise ValueError(f"`margin` ({eps:g}) must be smaller than `bound` ({hi:g}): the mean of Δ lies in "
                         f"[{lo:g}, {hi:g}]")
    sc = _Scaled(x, lo, hi, "d")
    probes = (sc.to_y(-eps), sc.to_y(eps))
    p_lower, p_upper, lam = side_pvalues(sc.y, a_level, probes)  # "mean ≤ −ε" by K⁺, "mean ≥ ε" by K⁻
    ci_lo, ci_hi = side_ends(sc, lam, a_level, probes, (True, True))
    ci_lo = snap(ci_lo, -eps, p_lower <= a_level, True)
    ci_hi = snap(ci_hi, eps, p_upper <= a_level, False)
    p = max(p_lower, p_upper)
    return EquivalenceResult(
        statistic=float(np.clip(float(np.mean(x / sc.s)) * sc.s, lo, hi)), pvalue=p, equivalent=bool(p <= a_level),
        margin=eps, alpha=a_level, pvalue_lower=p_lower, pvalue_upper=p_upper, ci_low=ci_lo, ci_high=ci_hi,
        confidence_level=1.0 - 2.0 * a_level, method="betting", ci_method=CI_METHOD, n=int(x.size), n_resamples=None,
        null_hypothesis=(f"H0: |mean(Δ)| ≥ {eps:g} for any distribution of Δ on [{lo:g}, {hi:g}] (two one-sided "
                         f"betting tests at ∓{eps:g}, values independent draws in an order that does not depend "
                         f"on them) against H1: |mean(Δ)| < {eps:g}"),
        bound=hi)


def _shift_tost(d: Any, eps: float, a_level: float, method: Any, n_resamples: Any, rng: Any) -> EquivalenceResult:
    """The sign-flip TOST of Δ ± ε (a shift model: exact when Δ ∓ ε is symmetric about 0)."""
    from ipcausal.stats import intervals
    from ipcausal.stats.permutation import METHODS, lattice_units, permutation_test

    x = as_sample(d, "d")
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
        null_hypothesis=(f"H0: |mean(Δ)| ≥ {eps:g}, tested in a shift model (Δ ∓ {eps:g} symmetric about 0: two "
                         f"one-sided sign-flip tests, pairs flipped independently) against H1: |mean(Δ)| < {eps:g}"),
    )
