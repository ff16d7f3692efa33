"""The interval of a cluster-sum test with clusters of unequal sizes (one implementation for the
background tests of :mod:`ipcausal.study.groups` and the model comparisons of :mod:`ipcausal.stats.models`).

With cluster sums ``v`` and cluster weights ``w`` (pairs, or pairs × samples, per cluster), the
shift δ of the per-pair mean is in the set when the two-sided sign-flip test of ``v − w·δ``
has p > 1 − level.  The statistic is not a mean of one shifted sample, so the lattice and
subset-law inversions do not apply; the two ends are found by bisection, every evaluation with
one fixed set of sign vectors (``seed``), so the set is an interval.
"""

from __future__ import annotations

import numpy as np

from ipcausal.stats.permutation import permutation_test

__all__ = ["INTERVAL_SEED", "unequal_cluster_interval"]

#: The fixed sign vectors of every evaluation of the inversion.
INTERVAL_SEED = 20241201


def unequal_cluster_interval(v: np.ndarray, w: np.ndarray, span: float, *, method: str, n_resamples: int,
                             level: float, seed: int = INTERVAL_SEED,
                             pvalue: float | None = None) -> tuple[float, float]:
    """The ends (low, high) of the inverted cluster-sum test; ``span`` sets the bisection's scale.

    δ = 0 is in the interval exactly when the test of the cluster sums ``v`` has two-sided
    p > 1 − level: ``pvalue`` (the p the caller reports for ``v``) or, when not given, the p
    of the same call as every other evaluation.  The bisection starts there, so rounding or
    the route (the sums may be exact on a lattice, shifted ones are not) cannot split them.

    Examples
    --------
    >>> import numpy as np
    >>> v, w = np.array([2.0, 3.0, -1.0, 4.0, 1.0, 2.0]), np.array([1.0, 2.0, 1.0, 2.0, 1.0, 1.0])
    >>> lo, hi = unequal_cluster_interval(v, w, 4.0, method="auto", n_resamples=2000, level=0.9)
    >>> bool(lo < v.sum() / w.sum() < hi)
    True
    """
    alpha = 1.0 - level

    def p(delta: float) -> float:
        return permutation_test(v - w * delta, method=method, n_resamples=min(n_resamples, 20_000), rng=seed).pvalue

    centre = float(v.sum() / w.sum())
    p_zero = p(0.0) if pvalue is None else float(pvalue)  # the test of the cluster sums themselves
    ends = []
    for sign in (-1.0, 1.0):
        inside, outside = centre, centre + sign * span
        if sign * (0.0 - centre) > 0:  # δ = 0 lies on this side: it is decided by the test's own p there
            if p_zero <= alpha:
                outside = 0.0
            else:
                inside, outside = 0.0, sign * span
        while outside != 0.0 and p(outside) > alpha and abs(outside - centre) < 1e6 * span:
            outside = inside + 2.0 * (outside - inside)
        for _ in range(60):
            mid = 0.5 * (inside + outside)
            inside, outside = (mid, outside) if p(mid) > alpha else (inside, mid)
            if abs(outside - inside) <= 1e-9 * span:
                break
        ends.append(inside)
    return ends[0], ends[1]
