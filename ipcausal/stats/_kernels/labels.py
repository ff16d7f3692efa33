"""Kernels of the joint test across backgrounds: per-prompt relabelings of k background labels.

Prompts are grouped ``group`` at a time; a group's relabelings (one of the P = k! permutations
per prompt, ``P**group`` combinations) are one uniform integer drawn by :func:`bounded`, and
its contribution to the ``k - 1`` column sums ``A_c = Σ_p (y[p, π_p(c)] − y[p, π_p(0)])`` is
one row of a precomputed table.  The pair statistic is ``S_ab = A_b − A_a`` (``A_0 = 0``).

Random stream: resample r of chunk c reads lane ``r % LANES`` of :func:`.stream._seed_lanes`
``(seed, c)``; group i takes bits ``16 (i % 4)`` .. ``16 (i % 4) + 15`` of word ``i // 4`` of the
resample's ``ceil(n_groups / 4)`` words; a rejected draw (probability below ``bound / 2**16``)
takes the low 16 bits of the lane's next word.  Counts depend only on ``(seed, chunk)``, so
the serial and the parallel kernels agree bitwise.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from ipcausal.stats._kernels.stream import CHUNK, LANES, _fill_lane, _seed_lanes

_LOW16 = uint64(0xFFFF)
_TWO16 = uint64(65536)
MAX_BOUND = 65536  # the largest range one draw covers


@njit(cache=True, inline="always")
def bounded(x16, bound, spare, st, lane):
    """A uniform integer in ``[0, bound)`` (``bound`` ≤ 2**16) from a uniform 16-bit ``x16``
    (Lemire's multiply with rejection, so exactly uniform); a rejection (probability below
    ``bound / 2**16``) draws the lane's next word into ``spare`` and uses its low 16 bits."""
    m = x16 * bound
    low = m & _LOW16
    if low < bound:
        t = (_TWO16 - bound) % bound
        while low < t:
            _fill_lane(spare, 1, st, lane)
            m = (spare[0] & _LOW16) * bound
            low = m & _LOW16
    return m >> uint64(16)


@njit(cache=True, inline="always")
def field(buf, i):
    """The i-th 16-bit field of ``buf`` (bits 16 (i % 4) .. of word i // 4)."""
    return (buf[i >> 2] >> uint64(16 * (i & 3))) & _LOW16


@njit(cache=True)
def label_tables(y, perms, group):
    """Flat table of group contributions and the radix of each group.

    ``y``: (n, k) float64; ``perms``: (P, k) int64, every permutation of ``range(k)``.  Row
    ``(g * R + combo)`` (R = P**group) holds ``Σ_t (y[p_t, π(c)] − y[p_t, π(0)])`` for
    c = 1..k−1, where prompt ``p_t = g * group + t`` takes permutation ``(combo // P**t) % P``.
    """
    n, k = y.shape
    n_perm = perms.shape[0]
    km1 = k - 1
    n_groups = (n + group - 1) // group
    rmax = n_perm**group
    tab = np.zeros(n_groups * rmax * km1, dtype=np.float64)
    radix = np.empty(n_groups, dtype=np.uint64)
    for g in range(n_groups):
        lo = g * group
        size = min(n, lo + group) - lo
        rg = n_perm**size
        radix[g] = uint64(rg)
        for combo in range(rg):
            c = combo
            row = (g * rmax + combo) * km1
            for t in range(size):
                d = c % n_perm
                c //= n_perm
                p = lo + t
                base = y[p, perms[d, 0]]
                for j in range(km1):
                    tab[row + j] += y[p, perms[d, j + 1]] - base
    return tab, radix


@njit(cache=True, inline="always")
def _wy_tally(acc, pa, pb, two_sided, sigma, pool, fam, thr, hist, sd):
    """One relabeling's contribution to the counts.

    ``thr`` holds the family's observed statistics in descending order (less the tie
    tolerance).  A pool value x adds 1 to ``hist[q]``, q = the number of thresholds above x (so
    the raw count of threshold j is ``hist[:j + 1].sum()``); ``sd[i]`` counts the step-down
    maximum over the family's pairs ranked i..last reaching ``thr[i]``.
    """
    m_all = pa.shape[0]
    for l in range(m_all):
        s = acc[pb[l]] - acc[pa[l]]
        if two_sided:
            pool[l] = abs(s)
        else:
            pool[l] = sigma * s
            pool[m_all + l] = -sigma * s
    mf = thr.shape[0]
    for q in range(pool.shape[0]):
        x = pool[q]
        pos = 0
        while pos < mf and thr[pos] > x:
            pos += 1
        hist[pos] += 1
    u = -np.inf
    for i in range(mf - 1, -1, -1):
        v = pool[fam[i]]
        if v > u:
            u = v
        if u >= thr[i]:
            sd[i] += 1


@njit(cache=True, inline="always")
def _relabel(buf, tab, radix, rmax, km1, spare, st, lane, acc):
    """One random relabeling of every prompt: the column sums ``acc[1:]`` (``acc[0]`` stays 0).

    Group g draws from 16-bit field g of ``buf``; table indices are unsigned (no
    negative-index wraparound code in the loop).
    """
    n_groups = radix.shape[0]
    rm = uint64(rmax)
    if km1 == 2:  # three backgrounds, the common case: scalar accumulators, two sets
        a1 = 0.0
        a2 = 0.0
        b1 = 0.0
        b2 = 0.0
        base = uint64(0)
        for i in range(n_groups >> 2):
            w = buf[i]
            g = 4 * i
            row = (base + bounded(w & _LOW16, radix[g], spare, st, lane)) << uint64(1)
            a1 += tab[row]
            a2 += tab[row + uint64(1)]
            base += rm
            row = (base + bounded((w >> uint64(16)) & _LOW16, radix[g + 1], spare, st, lane)) << uint64(1)
            b1 += tab[row]
            b2 += tab[row + uint64(1)]
            base += rm
            row = (base + bounded((w >> uint64(32)) & _LOW16, radix[g + 2], spare, st, lane)) << uint64(1)
            a1 += tab[row]
            a2 += tab[row + uint64(1)]
            base += rm
            row = (base + bounded(w >> uint64(48), radix[g + 3], spare, st, lane)) << uint64(1)
            b1 += tab[row]
            b2 += tab[row + uint64(1)]
            base += rm
        for g in range(4 * (n_groups >> 2), n_groups):
            row = (base + bounded(field(buf, g), radix[g], spare, st, lane)) << uint64(1)
            a1 += tab[row]
            a2 += tab[row + uint64(1)]
            base += rm
        acc[1] = a1 + b1
        acc[2] = a2 + b2
    elif km1 == 1:
        a1 = 0.0
        base = uint64(0)
        for g in range(n_groups):
            a1 += tab[base + bounded(field(buf, g), radix[g], spare, st, lane)]
            base += rm
        acc[1] = a1
    else:
        width = uint64(km1)
        for j in range(km1 + 1):
            acc[j] = 0.0
        base = uint64(0)
        for g in range(n_groups):
            row = (base + bounded(field(buf, g), radix[g], spare, st, lane)) * width
            for j in range(km1):
                acc[j + 1] += tab[row + uint64(j)]
            base += rm


@njit(cache=True)
def _wy_chunk(tab, radix, rmax, k, pa, pb, two_sided, sigma, fam, thr, seed, chunk, count, hist, sd):
    n_words = (radix.shape[0] + 3) // 4
    buf = np.empty(n_words, dtype=np.uint64)
    spare = np.empty(1, dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    acc = np.zeros(k, dtype=np.float64)
    pool = np.empty(pa.shape[0] * (1 if two_sided else 2), dtype=np.float64)
    for r in range(count):
        lane = r % LANES
        _fill_lane(buf, n_words, st, lane)
        _relabel(buf, tab, radix, rmax, k - 1, spare, st, lane, acc)
        _wy_tally(acc, pa, pb, two_sided, sigma, pool, fam, thr, hist, sd)


@njit(cache=True)
def wy_counts(tab, radix, rmax, k, pa, pb, two_sided, sigma, fam, thr, n_resamples, seed):
    """Monte Carlo counts ``(hist, sd)`` over ``n_resamples`` relabelings (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    hist = np.zeros(thr.shape[0] + 1, dtype=np.int64)
    sd = np.zeros(thr.shape[0], dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        _wy_chunk(tab, radix, rmax, k, pa, pb, two_sided, sigma, fam, thr, seed, c, count, hist, sd)
    return hist, sd


@njit(cache=True, parallel=True)
def wy_counts_parallel(tab, radix, rmax, k, pa, pb, two_sided, sigma, fam, thr, n_resamples, seed):
    """As :func:`wy_counts`, chunks spread over threads (identical counts)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    mf = thr.shape[0]
    hist = np.zeros((n_chunks, mf + 1), dtype=np.int64)
    sd = np.zeros((n_chunks, mf), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        _wy_chunk(tab, radix, rmax, k, pa, pb, two_sided, sigma, fam, thr, seed, c, count, hist[c], sd[c])
    return hist.sum(axis=0), sd.sum(axis=0)


@njit(cache=True)
def wy_exact_counts(tab, radix, rmax, k, pa, pb, two_sided, sigma, fam, thr):
    """Counts ``(hist, sd)`` over every relabeling (odometer over the groups; prefix sums are
    added in the same order as the Monte Carlo kernel, so equal relabelings give equal sums)."""
    n_groups = radix.shape[0]
    km1 = k - 1
    mf = thr.shape[0]
    hist = np.zeros(mf + 1, dtype=np.int64)
    sd = np.zeros(mf, dtype=np.int64)
    pool = np.empty(pa.shape[0] * (1 if two_sided else 2), dtype=np.float64)
    part = np.zeros((n_groups + 1, k), dtype=np.float64)
    digits = np.zeros(n_groups, dtype=np.int64)
    for g in range(n_groups):
        for j in range(km1):
            part[g + 1, j + 1] = part[g, j + 1] + tab[(g * rmax) * km1 + j]
    while True:
        _wy_tally(part[n_groups], pa, pb, two_sided, sigma, pool, fam, thr, hist, sd)
        g = n_groups - 1
        while g >= 0:
            digits[g] += 1
            if digits[g] < np.int64(radix[g]):
                break
            digits[g] = 0
            g -= 1
        if g < 0:
            break
        for h in range(g, n_groups):
            row = (h * rmax + digits[h]) * km1
            for j in range(km1):
                part[h + 1, j + 1] = part[h, j + 1] + tab[row + j]
    return hist, sd


@njit(cache=True, inline="always")
def _closed_tally(acc, fa, fb, two_sided, sigma, vals, masks, thr, cnt):
    """Closed testing: ``cnt[q]`` counts relabelings whose max statistic over the family pairs in
    subset ``masks[q]`` (bit i = family pair i, oriented (fa[i], fb[i])) reaches ``thr[q]``."""
    for i in range(fa.shape[0]):
        s = acc[fb[i]] - acc[fa[i]]
        vals[i] = abs(s) if two_sided else sigma * s
    for q in range(masks.shape[0]):
        mask = masks[q]
        mx = -np.inf
        i = 0
        while mask:
            if (mask & 1) and vals[i] > mx:
                mx = vals[i]
            mask >>= 1
            i += 1
        if mx >= thr[q]:
            cnt[q] += 1


@njit(cache=True)
def _closed_chunk(tab, radix, rmax, k, fa, fb, two_sided, sigma, masks, thr, seed, chunk, count, cnt):
    n_words = (radix.shape[0] + 3) // 4
    buf = np.empty(n_words, dtype=np.uint64)
    spare = np.empty(1, dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    acc = np.zeros(k, dtype=np.float64)
    vals = np.empty(fa.shape[0], dtype=np.float64)
    for r in range(count):
        lane = r % LANES
        _fill_lane(buf, n_words, st, lane)
        _relabel(buf, tab, radix, rmax, k - 1, spare, st, lane, acc)
        _closed_tally(acc, fa, fb, two_sided, sigma, vals, masks, thr, cnt)


@njit(cache=True)
def closed_counts(tab, radix, rmax, k, fa, fb, two_sided, sigma, masks, thr, n_resamples, seed):
    """Monte Carlo counts per subset (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    cnt = np.zeros(masks.shape[0], dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        _closed_chunk(tab, radix, rmax, k, fa, fb, two_sided, sigma, masks, thr, seed, c, count, cnt)
    return cnt


@njit(cache=True, parallel=True)
def closed_counts_parallel(tab, radix, rmax, k, fa, fb, two_sided, sigma, masks, thr, n_resamples, seed):
    """As :func:`closed_counts`, chunks spread over threads (identical counts)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, masks.shape[0]), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        _closed_chunk(tab, radix, rmax, k, fa, fb, two_sided, sigma, masks, thr, seed, c, count, per[c])
    return per.sum(axis=0)


@njit(cache=True)
def closed_exact_counts(tab, radix, rmax, k, fa, fb, two_sided, sigma, masks, thr):
    """Counts per subset over every relabeling (odometer as in :func:`wy_exact_counts`)."""
    n_groups = radix.shape[0]
    km1 = k - 1
    cnt = np.zeros(masks.shape[0], dtype=np.int64)
    vals = np.empty(fa.shape[0], dtype=np.float64)
    part = np.zeros((n_groups + 1, k), dtype=np.float64)
    digits = np.zeros(n_groups, dtype=np.int64)
    for g in range(n_groups):
        for j in range(km1):
            part[g + 1, j + 1] = part[g, j + 1] + tab[(g * rmax) * km1 + j]
    while True:
        _closed_tally(part[n_groups], fa, fb, two_sided, sigma, vals, masks, thr, cnt)
        g = n_groups - 1
        while g >= 0:
            digits[g] += 1
            if digits[g] < np.int64(radix[g]):
                break
            digits[g] = 0
            g -= 1
        if g < 0:
            break
        for h in range(g, n_groups):
            row = (h * rmax + digits[h]) * km1
            for j in range(km1):
                part[h + 1, j + 1] = part[h, j + 1] + tab[row + j]
    return cnt
