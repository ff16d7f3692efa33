"""Exact sign-flip distributions: enumeration (small n) and the lattice DP / tail."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

@njit(cache=True)
def exact_enumeration_counts(tab, n, t_obs, eps):
    """Counts over all 2**n sign vectors (n <= 30): |T*| >= |t|, T* >= t, T* <= t."""
    groups = tab.shape[0]
    total = 1 << n
    t_abs = abs(t_obs)
    out = np.zeros(3, dtype=np.int64)
    for mask in range(total):
        acc = 0.0
        m = mask
        for g in range(groups):
            acc += tab[g, m & 255]
            m >>= 8
        if abs(acc) >= t_abs - eps:
            out[0] += 1
        if acc >= t_obs - eps:
            out[1] += 1
        if acc <= t_obs + eps:
            out[2] += 1
    return out


@njit(cache=True)
def lattice_null(k):
    """Null distribution of W = sum of the k's whose sign is +, each sign fair and independent.

    ``k`` holds positive integers; returns f with ``f[w] = P(W = w)`` for w = 0..sum(k).
    Entries below about 1e-300 (far tails past double range) come out as 0.
    """
    ks = np.sort(k)  # small steps first keeps the running support short
    total = 0
    for i in range(ks.shape[0]):
        total += ks[i]
    f = np.zeros(total + 1, dtype=np.float64)
    g = np.zeros(total + 1, dtype=np.float64)
    f[0] = 1.0
    cur = 0
    log2scale = 0  # f holds counts * 2**log2scale
    for i in range(ks.shape[0]):
        ki = ks[i]
        for w in range(ki):
            g[w] = f[w]
        for w in range(ki, cur + 1):
            g[w] = f[w] + f[w - ki]
        for w in range(max(cur + 1, ki), cur + ki + 1):
            g[w] = f[w - ki]
        cur += ki
        f, g = g, f
        log2scale -= 1
        if (i & 31) == 31:  # renormalize: keep the peak near 1, flush dust to 0
            peak = 0.0
            for w in range(cur + 1):
                peak = max(peak, f[w])
            e = np.int64(np.floor(np.log2(peak)))
            fac = 2.0 ** (-e)
            for w in range(cur + 1):
                v = f[w] * fac
                f[w] = v if v > 1e-300 else 0.0
            log2scale += e
    fac = 2.0 ** log2scale
    for w in range(total + 1):
        f[w] = f[w] * fac if f[w] > 0.0 else 0.0
    return f


@njit(cache=True)
def _binom_half_pmf(c):
    """P(B = j), B ~ Binomial(c, 1/2), j = 0..c (lgamma at the mode, then exact ratios)."""
    out = np.zeros(c + 1, dtype=np.float64)
    mode = c // 2
    out[mode] = math.exp(math.lgamma(c + 1.0) - math.lgamma(mode + 1.0) - math.lgamma(c - mode + 1.0)
                         - c * math.log(2.0))
    for j in range(mode, c):
        out[j + 1] = out[j] * (c - j) / (j + 1.0)
        if out[j + 1] < 1e-300:
            out[j + 1] = 0.0
            break
    for j in range(c - mode, c + 1):  # symmetry: P(B = j) = P(B = c - j)
        out[c - j] = out[j]
    # normalise: the mode's exp(lgamma …) carries a relative error of up to ~|lgamma| ulps (1e-12 at
    # c = 2,000); the ratios and the sum carry ~c ulps, which the certified bound of the tail covers
    total = 0.0
    for j in range(c + 1):
        total += out[j]
    for j in range(c + 1):
        out[j] /= total
    return out


@njit(cache=True)
def _class_convolution(vals, cnts):
    """Distribution of Σ_c v_c · B_c, B_c ~ Binomial(n_c, 1/2) independent (stride convolutions)."""
    total = 0
    for i in range(vals.shape[0]):
        total += vals[i] * cnts[i]
    f = np.zeros(total + 1, dtype=np.float64)
    g = np.zeros(total + 1, dtype=np.float64)
    f[0] = 1.0
    cur = 0
    for i in range(vals.shape[0]):
        v = vals[i]
        b = _binom_half_pmf(cnts[i])
        for w in range(cur + v * cnts[i] + 1):
            g[w] = 0.0
        for j in range(cnts[i] + 1):
            bj = b[j]
            if bj == 0.0:
                continue
            off = v * j
            for w in range(cur + 1):
                g[off + w] += f[w] * bj
        cur += v * cnts[i]
        for w in range(cur + 1):
            x = g[w]
            f[w] = x if x > 1e-300 else 0.0
    return f


@njit(cache=True)
def lattice_tail(k, w0):
    """P(W >= w0), W = Σ of the k's whose sign is +, signs fair and independent (exact).

    Equal values are grouped (a Binomial(count, 1/2) at stride value), the groups are split in
    two halves of balanced support, each half's distribution is built by stride convolutions,
    and the tail is ``Σ_x f_A(x) · P(W_B >= w0 - x)``.  Terms below 1e-300 are dropped.
    Every step adds non-negative terms, so the relative rounding error is at most
    :func:`lattice_tail_bound` (the caller inflates by it: an exact p is never below the exact value).
    """
    ks = np.sort(k)
    n = ks.shape[0]
    vals = np.empty(n, dtype=np.int64)
    cnts = np.empty(n, dtype=np.int64)
    nc = 0
    for i in range(n):
        if nc > 0 and vals[nc - 1] == ks[i]:
            cnts[nc - 1] += 1
        else:
            vals[nc] = ks[i]
            cnts[nc] = 1
            nc += 1
    order = np.argsort(-(vals[:nc] * cnts[:nc]))
    side = np.zeros(nc, dtype=np.int64)
    load_a = 0
    load_b = 0
    for idx in order:  # greedy balance of the two halves' supports
        if load_a <= load_b:
            load_a += vals[idx] * cnts[idx]
        else:
            side[idx] = 1
            load_b += vals[idx] * cnts[idx]
    na = 0
    for i in range(nc):
        na += side[i] == 0
    va = np.empty(na, dtype=np.int64)
    ca = np.empty(na, dtype=np.int64)
    vb = np.empty(nc - na, dtype=np.int64)
    cb = np.empty(nc - na, dtype=np.int64)
    ia = 0
    ib = 0
    for i in range(nc):
        if side[i] == 0:
            va[ia] = vals[i]
            ca[ia] = cnts[i]
            ia += 1
        else:
            vb[ib] = vals[i]
            cb[ib] = cnts[i]
            ib += 1
    fa = _class_convolution(va, ca)
    fb = _class_convolution(vb, cb)
    # survival of W_B: sb[y] = P(W_B >= y), y = 0..len(fb)
    nb = fb.shape[0]
    sb = np.zeros(nb + 1, dtype=np.float64)
    for y in range(nb - 1, -1, -1):
        sb[y] = sb[y + 1] + fb[y]
    p = 0.0
    for x in range(fa.shape[0]):
        fx = fa[x]
        if fx == 0.0:
            continue
        y = w0 - x
        if y <= 0:
            p += fx
        elif y < nb:
            p += fx * sb[y]
    return p


def lattice_tail_bound(k):
    """A certified relative error bound of :func:`lattice_tail` for the magnitudes ``k``.

    Sums and products of non-negative floats: each of the m terms of a sum adds at most one
    rounding (relative u = 2⁻⁵³) to the result.  The binomials: c ratios and a normalising sum
    of c + 1 terms (≤ 3(c + 2) u); each stride convolution: c + 1 terms per output and one
    product (≤ (c + 3) u); the tail: a suffix sum and an outer sum over at most Σk + 1 terms.
    First-order terms, doubled for the second-order ones.
    """
    _, counts = np.unique(k, return_counts=True)
    u = 2.0**-53
    total = float(np.sum(k))
    g = float(np.sum(4.0 * counts + 9.0)) + 2.0 * (total + 1.0) + 4.0
    return 2.0 * g * u
