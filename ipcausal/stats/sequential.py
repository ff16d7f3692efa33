"""Anytime-valid sequential tests by betting (SPEC §9): look after every pair, stop at any time.

A stream of paired differences Δ₁, Δ₂, … with |Δ| ≤ ``bound`` is turned into a wealth process
K_t = Π (1 + λ_s Δ_s / bound) whose bets λ_s are fixed before Δ_s is seen.  Under H0 (every Δ
has conditional mean 0 given the pairs before it — e.g. pairs drawn in a random order) K is a
non-negative martingale with K₀ = 1, so by Ville's inequality P(sup_t K_t ≥ 1/α) ≤ α: the
auditor may look after every pair, stop whenever they like (at the first crossing, or for any
other reason), and the verdict "reject when K reached 1/α" keeps its size α.  The anytime-valid
p-value is 1 / max_{s ≤ t} K_s.  Two-sided: the average of the "greater" and "less" wealths.

The unit of randomisation is the pair, one observation of the stream (a cluster, averaged,
is one observation too).  The state of a stream is an O(1) :class:`SequentialState`
(:func:`sequential_state`, :func:`sequential_update`, in :mod:`ipcausal.stats.betting`): the audit
feeds it one batch of scored pairs at a time.

Bets (``method``), compared on the study's own released echo-chamber outputs in
``benchmarks/SEQUENTIAL.txt`` — the mixture stopped first, so it is the default:

* ``"mixture"``: the average wealth of 20 constant bets λ = 0.75·g/20, g = 1..20 (a discrete
  uniform prior on the bet; the mixture is itself a martingale);
* ``"agrapa"``: the approximate growth-rate-adaptive plug-in bet μ̂ / (σ̂² + μ̂²), clipped to
  [0, 1/2] (Waudby-Smith & Ramdas, JRSS-B 2024);
* ``"ons"``: online Newton step on the log wealth, clipped to [0, 1/2] (Cutkosky & Orabona 2018;
  Shekhar & Ramdas 2023).

The confidence sequence for mean(Δ) (``ci_method``) is by default the betting CS: the same
mixture bets placed against every candidate mean on a grid of step 0.01 · bound, a mean being
excluded once its wealth reaches 2/α; it covers the mean at every t at once with probability
≥ 1 − α.  It excludes m once *one* side's wealth at m reaches 2/α, while the two-sided test
rejects once the *average* of the two sides' wealths at 0 reaches 1/α: a CS without 0 implies a
rejection, not the converse (with wealth on both sides the test can reject while 0 is still
inside the CS: rare — 0 of 311 rejections in ``tests/stats/test_sequential.py``'s setting —
but possible).
``ci_method="empirical-bernstein"`` is Waudby-Smith & Ramdas' predictable plug-in
empirical-Bernstein CS (Thm 2), closed form, a few floats of state, wider.
"""


from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ipcausal.stats._validate import as_sample
from ipcausal.stats.betting import (
    CI_METHODS,
    METHODS,
    NULLS,
    SequentialState,
    _feed,
    sequential_sign_state,
    sequential_state,
    sequential_update,
)
from ipcausal.stats.results import SequentialSignResult, SequentialTestResult

__all__ = ["METHODS", "NULLS", "CI_METHODS", "SequentialState", "sequential_state", "sequential_sign_state", "sequential_update",
           "sequential_test", "sequential_sign_test"]


def sequential_test(d: Any, *, bound: float, alpha: float = 0.05, alternative: str = "two-sided",
                    method: str = "mixture", null: str = "mean", ci_method: str = "betting") -> SequentialTestResult:
    """Anytime-valid test of mean(Δ) = 0 for a stream of paired differences, |Δ| ≤ ``bound``.

    Replays ``d`` in the given order as an auditor looking after every pair would, and reports
    at the first time the e-process reached 1/α (or at the end).  H0: every Δ has conditional
    mean 0 given the pairs before it (true when pairs with no effect come in a random order);
    the unit of randomisation is the pair.  Size ≤ α under any stopping rule and any number of
    looks (Ville's inequality); see :mod:`ipcausal.stats.sequential`.

    Parameters
    ----------
    d : array_like, shape (n,)
        Paired differences, in the order they arrived.
    bound : float
        Known bound on |Δ| (from the scale: 1 for correctness, k − 1 for a k-point rating).
        A value outside [−bound, bound] raises ``ValueError``.
    alpha : float
        Level (reject when the e-value reaches 1/α); the confidence sequence has level 1 − α.
    alternative : {"two-sided", "greater", "less"}
        Direction of H1.
    method : {"mixture", "agrapa", "ons"}
        The bet; ``"mixture"`` stopped earliest on the study's data.
    null : {"mean", "symmetry"}
        ``"symmetry"`` tests the sign-flip null of :func:`ipcausal.permutation_test` and scales
        the bets by the largest |Δ| seen so far instead of ``bound`` (see :func:`sequential_state`):
        the choice when ``bound`` is loose (e.g. essay scores on a 0–60 scale).
    ci_method : {"betting", "empirical-bernstein"}
        The confidence sequence (see :func:`sequential_state`).

    Returns
    -------
    SequentialTestResult

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats import sequential_test
    >>> d = np.tile([1.0, 0.0, 1.0, -1.0, 1.0, 0.0], 20)  # mean 1/3, |Δ| ≤ 1
    >>> res = sequential_test(d, bound=1)
    >>> res.reject, res.stopped_at, round(res.e_value, 1), round(res.pvalue, 4)
    (True, 45, 22.2, 0.0451)
    >>> round(res.statistic, 3), res.ci_low, res.ci_high  # here the CS ends at 0 too
    (0.356, 0.0, 0.65)
    """
    state = sequential_state(bound=bound, alpha=alpha, alternative=alternative, method=method, null=null,
                             ci_method=ci_method)
    x = as_sample(d, "d", min_size=1)
    return _replay(state, x, "d")


def sequential_sign_test(s: Any, *, m0: float = 0.0, alpha: float = 0.05, alternative: str = "two-sided",
                         method: str = "mixture", ci_method: str = "betting") -> SequentialSignResult:
    """Anytime-valid twin of :func:`ipcausal.sign_test`: H0 median(s) = ``m0``, monitored after every value.

    Bets on 1{s < m0} among the values that differ from m0 (ties dropped): under H0 each untied
    value is below m0 with probability 1/2 given the values before it.  The unit of
    randomisation is the value (one pair's similarity).  The study's similarity test is
    ``m0=0.8, alternative="less"``.

    Parameters
    ----------
    s : array_like, shape (n,)
        Similarities in the order they arrived.
    m0 : float
        The hypothesised median.
    alpha : float
        Level.
    alternative : {"two-sided", "less", "greater"}
        Direction of H1 for the median.
    method : {"mixture", "agrapa", "ons"}
        The bet.
    ci_method : {"betting", "empirical-bernstein"}
        The confidence sequence for the share below m0 (see :func:`sequential_state`).

    Returns
    -------
    SequentialSignResult

    Examples
    --------
    >>> from ipcausal.stats import sequential_sign_test
    >>> res = sequential_sign_test([0.2, 0.5, 0.8, 0.4, 0.9] * 12, m0=0.8, alternative="less")
    >>> res.reject, res.stopped_at, res.n, res.n_ties, res.n_below
    (True, 29, 23, 6, 18)
    """
    state = sequential_sign_state(m0=m0, alpha=alpha, alternative=alternative, method=method, ci_method=ci_method)
    x = as_sample(s, "s", min_size=1)
    return _replay(state, x, "s")


def _replay(state: SequentialState, x: np.ndarray, name: str) -> Any:
    """Feed ``x`` and stop at the first crossing (the values after it are not used)."""
    res = _feed(state, x, name, True).result()
    return dataclasses.replace(res, n_available=int(x.size))
