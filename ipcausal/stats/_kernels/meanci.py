"""The fixed-n betting test and interval for the mean of a bounded variable (:mod:`ipcausal.stats.meanci`).

Observations are scaled to y ∈ [0, 1].  The bets are the predictable plug-in bets of
Waudby-Smith & Ramdas (JRSS-B 2024) tuned for a fixed n: λ_t = sqrt(2 log(1/a) / (n σ̂²_{t−1}))
with σ̂²_{t−1} the shrunk running variance of y_1..y_{t−1} (one pseudo-observation of variance
1/4 about 1/2), the same for every candidate mean m.  For a candidate m the two capitals are

    K⁺_t(m) = Π_{s≤t} (1 + min(λ_s, c/m) (y_s − m)),
    K⁻_t(m) = Π_{s≤t} (1 − min(λ_s, c/(1 − m)) (y_s − m)),

with the truncation c < 1 (every factor ≥ 1 − c > 0).  Under E y = m each is a non-negative
martingale with K_0 = 1 (a supermartingale for E y ≤ m, resp. ≥ m), so by Ville's inequality
P(max_{t≤n} K⁺_t(m) ≥ 1/a) ≤ a.  K⁺_t(m) is non-increasing in m and K⁻_t(m) non-decreasing
(each factor is), so the m rejected by one side form an interval that ends at the bound:
the lower end of the interval is where max_t K⁺_t(m) crosses 1/a, found by bisection.

Every function takes and returns logs: ``log_max_capital`` is log max_{t≤n} K_t (≥ 0: K_0 = 1).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def plugin_bets(y, log_inv_a, n_total):
    """λ_t for t = 1..n (predictable: λ_t uses y_1..y_{t−1} only)."""
    n = y.size
    lam = np.empty(n)
    total = 0.5  # prior mean 1/2 as one pseudo-observation
    dev = 0.25  # prior variance 1/4 as one pseudo-observation
    for t in range(n):
        var_prev = dev / (t + 1.0)
        lam[t] = math.sqrt(2.0 * log_inv_a / (n_total * var_prev))
        total += y[t]
        mu = total / (t + 2.0)
        dev += (y[t] - mu) ** 2
    return lam


@njit(cache=True)
def log_max_capital(y, lam, m, side, trunc):
    """log max_{t≤n} K_t(m), K⁺ for ``side`` = +1, K⁻ for −1 (0 when the capital never rises)."""
    if side > 0:
        cap = trunc / m if m > 0.0 else np.inf
    else:
        cap = trunc / (1.0 - m) if m < 1.0 else np.inf
    logk = 0.0
    best = 0.0
    for t in range(y.size):
        lt = lam[t] if lam[t] < cap else cap
        z = y[t] - m
        if z != 0.0:
            logk += math.log1p(side * lt * z)
        if logk > best:
            best = logk
    return best


@njit(cache=True)
def crossing(y, lam, side, trunc, log_thr, probes):
    """The end of the interval on one side, in y's units: the bracket (inside, outside) of the
    crossing of log max K = ``log_thr``, narrowed to adjacent floats.

    ``side`` = +1: the lower end (K⁺ rejects every m at or below it); −1: the upper end.  The
    ``probes`` (values of m in [0, 1]) are evaluated first, so the answer agrees with the test at
    each of them whatever the rounding.  Returns (inside, outside, whether the bound itself is
    rejected); with nothing rejected ``inside`` is the bound (0 or 1).
    """
    inside = 1.0 if side > 0 else 0.0  # K⁺(1) ≤ 1 and K⁻(0) ≤ 1: never rejected
    outside = 0.0 if side > 0 else 1.0
    if log_max_capital(y, lam, outside, side, trunc) < log_thr:
        return outside, outside, False
    for i in range(probes.size):
        p = probes[i]
        if (p - outside) * (inside - p) > 0.0:  # strictly inside the bracket
            if log_max_capital(y, lam, p, side, trunc) >= log_thr:
                outside = p
            else:
                inside = p
    for _ in range(1100):
        mid = 0.5 * (inside + outside)
        if mid == inside or mid == outside:
            break
        if log_max_capital(y, lam, mid, side, trunc) >= log_thr:
            outside = mid
        else:
            inside = mid
    return inside, outside, True


@njit(cache=True)
def log_capitals_many(ys, ms, log_inv_a, trunc):
    """Per row of ``ys`` (one data set each, in y units): log max K⁺ and log max K⁻ at ``ms[row]``
    (the calibration's one evaluation per set: the interval covers m exactly when neither crosses)."""
    rows = ys.shape[0]
    n = ys.shape[1]
    out = np.empty((rows, 2))
    for r in range(rows):
        lam = plugin_bets(ys[r], log_inv_a, float(n))
        out[r, 0] = log_max_capital(ys[r], lam, ms[r], 1.0, trunc)
        out[r, 1] = log_max_capital(ys[r], lam, ms[r], -1.0, trunc)
    return out
