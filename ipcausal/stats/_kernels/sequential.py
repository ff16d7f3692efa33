"""Betting e-processes and the empirical-Bernstein confidence sequence, one observation at a time.

The whole state of one monitored stream is a flat float64 vector (O(1) memory in the stream
length; ``grid`` slots more for the mixture bet).  :func:`seq_update` feeds a batch of
observations into a state in place; feeding a stream in batches performs exactly the same
floating-point operations as feeding it at once.  :func:`seq_monitor_many` runs many independent
streams from a fresh state each (calibration).

Observations are scaled: ``x = Δ / bound`` in [−1, 1], tested for mean 0.  The wealth of the
"greater" side is Π (1 + λ⁺ₜ xₜ), of the "less" side Π (1 − λ⁻ₜ xₜ), each λ ∈ [0, max_bet] and
predictable (fixed before xₜ is seen), so each side is a non-negative martingale with initial
value 1 under H0 (a supermartingale when the mean is on the null side).  The two-sided e-process
is their average.  Bets (``method``):

* 0 = aGRAPA: λ⁺ = clip(μ̂ / q̂, 0, max_bet), λ⁻ = clip(−μ̂ / q̂, 0, max_bet), where μ̂ and q̂
  are shrunk running means of x and x² (the approximate Kelly bet μ / E[x²]);
* 1 = ONS: online Newton step on −log(1 + λ x), one per side, clipped to [0, max_bet];
* 2 = mixture: the average of the wealths of the constant bets ``lams`` (λ_1..λ_G, given).

The confidence sequence for the mean of x (two-sided, level 1 − α, intersected over time) is
either (``ms`` empty) the predictable plug-in empirical-Bernstein CS of Waudby-Smith & Ramdas
(JRSS-B 2024, Thm 2) on y = (x + 1) / 2 ∈ [0, 1], or (``ms`` a grid of candidate means
m_j = −1 + 2(j + 1)/(M + 1)) the betting CS: for each m the mixture wealths
K⁺(m) = mean_g Π (1 + λ_g (x − m)/(1 + m)) and K⁻(m) = mean_g Π (1 − λ_g (x − m)/(1 − m)), the
same bets as the mixture test at m = 0.  K⁺(m) is non-increasing and K⁻(m) non-decreasing in m,
so when K⁺(m_j) reaches 2/α every m ≤ m_j is excluded (and likewise above for K⁻): the CS is
[largest m_j excluded from below, smallest m_j excluded from above], which covers the true mean
with probability ≥ 1 − α at every time at once (each side errs with probability ≤ α/2 by Ville).
Only the grid points strictly inside the current CS are updated.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# slots of the state vector
N, LOG_UP, LOG_DOWN, LOG_MAX, STOP, LOG_STOP, CS_LO_STOP, CS_HI_STOP = 0, 1, 2, 3, 4, 5, 6, 7
SUM_X, SUM_X2 = 8, 9
ONS_L_UP, ONS_A_UP, ONS_L_DOWN, ONS_A_DOWN = 10, 11, 12, 13
CS_SUM_L, CS_SUM_LY, CS_SUM_VPSI, CS_SUM_Y, CS_SUM_DEV, CS_LO, CS_HI = 14, 15, 16, 17, 18, 19, 20
LOG_E, SUM_STOP, RUN_MAX, OFF_UP, OFF_DOWN, GRID0 = 21, 22, 23, 24, 25, 26
AGRAPA, ONS, MIXTURE = 0, 1, 2
TWO_SIDED, GREATER, LESS = 0, 1, 2
_ONS_STEP = 2.0 / (2.0 - math.log(3.0))
_Q0 = 0.25  # prior pseudo-observation of E[x²] for aGRAPA (one pseudo-observation, mean 0)
_LOG2 = math.log(2.0)


def new_state_vector(grid: int, cs_grid: int = 0, cs_bets: int = 0) -> np.ndarray:
    """A fresh state: wealth 1 on both sides, nothing seen, the CS the whole range [−1, 1].

    ``grid`` bets for the mixture test; ``cs_grid`` candidate means with ``cs_bets`` bets each
    for the betting CS (0: the empirical-Bernstein CS).  The betting CS block starts at
    ``GRID0 + 2 * grid``: the linear wealths (2 · cs_bets per mean), then 2 log offsets per mean.
    """
    cs0 = GRID0 + 2 * grid
    st = np.zeros(cs0 + cs_grid * (2 * cs_bets + 2), dtype=np.float64)
    st[GRID0:cs0 + cs_grid * 2 * cs_bets] = 1.0  # linear wealths relative to exp(their offset)
    st[STOP] = -1.0
    st[CS_LO_STOP] = -1.0
    st[CS_HI_STOP] = 1.0
    st[ONS_A_UP] = 1.0
    st[ONS_A_DOWN] = 1.0
    st[CS_LO] = -1.0
    st[CS_HI] = 1.0
    return st


@njit(cache=True, inline="always")
def _mix(st, start, off, lams, sign, x):
    """Multiply the grid's wealths by (1 + sign·λ_g·x); returns log of their mean (with the offset).

    The wealths are kept linear relative to exp(st[off]) and rescaled by their maximum when it
    leaves [1e-100, 1e100] (a bet whose wealth falls 1e308 below the best one's is lost: it
    could never matter).  Every factor is ≥ 1 − max λ > 0.
    """
    grid = lams.size
    total = 0.0
    top = 0.0
    for g in range(grid):
        w = st[start + g] * (1.0 + sign * lams[g] * x)
        st[start + g] = w
        total += w
        if w > top:
            top = w
    if top > 1e100 or top < 1e-100:
        for g in range(grid):
            st[start + g] /= top
        total /= top
        st[off] += math.log(top)
    return st[off] + math.log(total / grid)


@njit(cache=True, inline="always")
def _cs_eb(st, x0, n, cs_log):
    """The predictable plug-in empirical-Bernstein CS (WSR Thm 2) on y = (x0 + 1)/2 ∈ [0, 1]."""
    y = 0.5 * (x0 + 1.0)
    t = n + 1.0
    mu_prev = (0.5 + st[CS_SUM_Y]) / t
    var_prev = (0.25 + st[CS_SUM_DEV]) / t
    lam_cs = min(math.sqrt(2.0 * cs_log / (var_prev * t * math.log(t + 1.0))), 0.5)
    v = 4.0 * (y - mu_prev) ** 2
    psi = (-math.log1p(-lam_cs) - lam_cs) / 4.0
    st[CS_SUM_L] += lam_cs
    st[CS_SUM_LY] += lam_cs * y
    st[CS_SUM_VPSI] += v * psi
    st[CS_SUM_Y] += y
    mu_now = (0.5 + st[CS_SUM_Y]) / (t + 1.0)
    st[CS_SUM_DEV] += (y - mu_now) ** 2
    centre = st[CS_SUM_LY] / st[CS_SUM_L]
    half = (cs_log + st[CS_SUM_VPSI]) / st[CS_SUM_L]
    lo = 2.0 * (centre - half) - 1.0
    hi = 2.0 * (centre + half) - 1.0
    if lo > st[CS_LO]:
        st[CS_LO] = lo
    if hi < st[CS_HI]:
        st[CS_HI] = hi


@njit(cache=True, inline="always")
def _cs_bet(st, x0, ms, cs_lams, cs0, cs_log):
    """The betting CS on the grid ``ms`` (see the module docstring); ``cs_log`` = log(2/α)."""
    m_count = ms.size
    g = cs_lams.size
    lo = st[CS_LO]
    hi = st[CS_HI]
    half_cells = 0.5 * (m_count + 1)
    j_first = int(math.floor((lo + 1.0) * half_cells + 0.5))  # first grid index with m > lo
    j_last = int(math.ceil((hi + 1.0) * half_cells - 0.5)) - 2  # last grid index with m < hi
    offs = cs0 + m_count * 2 * g
    for j in range(max(j_first, 0), min(j_last, m_count - 1) + 1):
        m = ms[j]
        if _mix(st, cs0 + 2 * j * g, offs + 2 * j, cs_lams, 1.0, (x0 - m) / (1.0 + m)) >= cs_log:
            if m > st[CS_LO]:
                st[CS_LO] = m
        if _mix(st, cs0 + (2 * j + 1) * g, offs + 2 * j + 1, cs_lams, -1.0, (x0 - m) / (1.0 - m)) >= cs_log:
            if m < st[CS_HI]:
                st[CS_HI] = m


@njit(cache=True, inline="always")
def _step(st, x0, method, alt, max_bet, lams, cs_log, log_threshold, symmetric, ms, cs_lams, cs0):
    """One observation x0 ∈ [−1, 1] into the state; returns True at the first crossing of 1/α.

    With ``symmetric`` the bets are placed on x0 / max(|x0|, |x_s| for s < t) instead of x0:
    valid when, given the past and |x0|, the sign of x0 is a fair coin (the sign-flip null).
    """
    n = st[N]
    x = x0
    if symmetric:
        a = abs(x0)
        if a > st[RUN_MAX]:
            st[RUN_MAX] = a
        x = x0 / st[RUN_MAX] if st[RUN_MAX] > 0.0 else 0.0
    up = alt != LESS
    down = alt != GREATER
    # --- the e-process (bets fixed before x is used); x = 0 leaves every bet's wealth as it is
    if x == 0.0:
        pass
    elif method == AGRAPA:
        mu = st[SUM_X] / (n + 1.0)
        q = (_Q0 + st[SUM_X2]) / (n + 1.0)
        r = mu / q
        if up:
            lam = min(max(r, 0.0), max_bet)
            st[LOG_UP] += math.log1p(lam * x)
        if down:
            lam = min(max(-r, 0.0), max_bet)
            st[LOG_DOWN] += math.log1p(-lam * x)
    elif method == ONS:
        if up:
            lam = st[ONS_L_UP]
            st[LOG_UP] += math.log1p(lam * x)
            gr = x / (1.0 + lam * x)
            st[ONS_A_UP] += gr * gr
            st[ONS_L_UP] = min(max(lam + _ONS_STEP * gr / st[ONS_A_UP], 0.0), max_bet)
        if down:
            lam = st[ONS_L_DOWN]
            st[LOG_DOWN] += math.log1p(-lam * x)
            gr = -x / (1.0 - lam * x)
            st[ONS_A_DOWN] += gr * gr
            st[ONS_L_DOWN] = min(max(lam + _ONS_STEP * gr / st[ONS_A_DOWN], 0.0), max_bet)
    else:
        if up:
            st[LOG_UP] = _mix(st, GRID0, OFF_UP, lams, 1.0, x)
        if down:
            st[LOG_DOWN] = _mix(st, GRID0 + lams.size, OFF_DOWN, lams, -1.0, x)
    if alt == GREATER:
        loge = st[LOG_UP]
    elif alt == LESS:
        loge = st[LOG_DOWN]
    else:
        a = st[LOG_UP]
        b = st[LOG_DOWN]
        hi = max(a, b)
        loge = hi + math.log1p(math.exp(min(a, b) - hi)) - _LOG2 if hi > -np.inf else hi
    st[LOG_E] = loge
    st[SUM_X] += x0
    st[SUM_X2] += x0 * x0
    if loge > st[LOG_MAX]:  # the running max starts at log K_0 = 0
        st[LOG_MAX] = loge
    # --- the confidence sequence
    if ms.size:
        _cs_bet(st, x0, ms, cs_lams, cs0, cs_log)
    else:
        _cs_eb(st, x0, n, cs_log)
    t = n + 1.0
    st[N] = t
    if st[STOP] < 0.0 and loge >= log_threshold:
        st[STOP] = t
        st[LOG_STOP] = loge
        st[CS_LO_STOP] = st[CS_LO]
        st[CS_HI_STOP] = st[CS_HI]
        st[SUM_STOP] = st[SUM_X]
        return True
    return False


@njit(cache=True)
def seq_update(st, x, method, alt, max_bet, lams, cs_log, log_threshold, stop_early, symmetric, ms, cs_lams, cs0):
    """Feed ``x`` (scaled to [−1, 1]) into ``st`` in place; returns how many values were used
    (all of them unless ``stop_early`` and the e-process crossed 1/α inside this batch)."""
    for i in range(x.size):
        if _step(st, x[i], method, alt, max_bet, lams, cs_log, log_threshold, symmetric, ms, cs_lams, cs0) \
                and stop_early:
            return i + 1
    return x.size


@njit(cache=True)
def seq_monitor_many(xs, mean, method, alt, max_bet, lams, cs_log, log_threshold, template, symmetric, ms, cs_lams,
                     cs0):
    """Each row of ``xs`` a stream from a fresh state (a copy of ``template``), monitored after
    every value.  Returns (stopped_at per row, −1 if never; 1 if the running-intersection CS
    contained ``mean`` at every time, else 0 — strictly inside for the betting CS, whose
    reported ends are excluded grid points; log of the running-max e-value per row)."""
    rows = xs.shape[0]
    stop = np.full(rows, -1, dtype=np.int64)
    covered = np.zeros(rows, dtype=np.int8)
    logmax = np.empty(rows, dtype=np.float64)
    st = template.copy()
    for r in range(rows):
        st[:] = template
        for i in range(xs.shape[1]):
            _step(st, xs[r, i], method, alt, max_bet, lams, cs_log, log_threshold, symmetric, ms, cs_lams, cs0)
        stop[r] = np.int64(st[STOP])
        if ms.size:
            covered[r] = 1 if (st[CS_LO] < mean < st[CS_HI]) else 0
        else:
            covered[r] = 1 if (st[CS_LO] <= mean <= st[CS_HI]) else 0
        logmax[r] = st[LOG_MAX]
    return stop, covered, logmax
