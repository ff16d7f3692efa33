"""Kernels of the distribution test: random splits of each pair's 2r responses into two sides of r.

A split is a bit mask of the responses on side X; fixing response 0 on side X lists each
unordered split once (the statistic is symmetric in the sides), ``C(2r − 1, r − 1)`` of them.
Table route: ``tab[p, s]`` is pair p's statistic under split s, a resample draws one uniform
split per pair (:func:`.labels.bounded` on 16-bit field p of the resample's words, as in
:mod:`.labels`).  Direct route (large r): a partial Fisher–Yates shuffle
per pair, the statistic summed from the similarities.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from ipcausal.stats._kernels.labels import _LOW16, bounded, field
from ipcausal.stats._kernels.stream import CHUNK, LANES, _fill_lane, _seed_lanes


@njit(cache=True)
def split_tables(upper, masks, a_coef, b_coef):
    """``tab[p, s] = a_coef · w_s − b_coef · W`` for pair p and split ``masks[s]``.

    ``upper``: (n, 2r, 2r) similarities (only i < j is read); ``w_s``: the sum of the
    similarities of responses on the same side; ``W``: the sum over all responses i < j.
    """
    n, m, _ = upper.shape
    n_split = masks.shape[0]
    tab = np.empty((n, n_split), dtype=np.float64)
    for p in range(n):
        total = 0.0
        for i in range(m):
            for j in range(i + 1, m):
                total += upper[p, i, j]
        for s in range(n_split):
            mask = masks[s]
            w = 0.0
            for i in range(m):
                bi = (mask >> i) & 1
                for j in range(i + 1, m):
                    if ((mask >> j) & 1) == bi:
                        w += upper[p, i, j]
            tab[p, s] = a_coef * w - b_coef * total
    return tab


@njit(cache=True)
def _split_chunk(tab, bound, thr, seed, chunk, count):
    n = tab.shape[0]
    flat = tab.ravel()  # unsigned flat indices: no negative-index wraparound code in the loop
    n_words = (n + 3) // 4
    buf = np.empty(n_words, dtype=np.uint64)
    spare = np.empty(1, dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    ge = 0
    for r in range(count):
        lane = r % LANES
        _fill_lane(buf, n_words, st, lane)
        # four accumulators hide the float-add latency (pairs 4i .. 4i + 3 read word i)
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        t3 = 0.0
        base = uint64(0)
        for i in range(n >> 2):
            w = buf[i]
            t0 += flat[base + bounded(w & _LOW16, bound, spare, st, lane)]
            base += bound
            t1 += flat[base + bounded((w >> uint64(16)) & _LOW16, bound, spare, st, lane)]
            base += bound
            t2 += flat[base + bounded((w >> uint64(32)) & _LOW16, bound, spare, st, lane)]
            base += bound
            t3 += flat[base + bounded(w >> uint64(48), bound, spare, st, lane)]
            base += bound
        for p in range(4 * (n >> 2), n):
            t0 += flat[base + bounded(field(buf, p), bound, spare, st, lane)]
            base += bound
        t = (t0 + t1) + (t2 + t3)
        if t >= thr:
            ge += 1
    return ge


@njit(cache=True)
def split_counts(tab, thr, n_resamples, seed):
    """How many of ``n_resamples`` random splits give a total statistic >= ``thr`` (one thread)."""
    bound = uint64(tab.shape[1])
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    ge = 0
    for c in range(n_chunks):
        ge += _split_chunk(tab, bound, thr, seed, c, min(CHUNK, n_resamples - c * CHUNK))
    return ge


@njit(cache=True, parallel=True)
def split_counts_parallel(tab, thr, n_resamples, seed):
    """As :func:`split_counts`, chunks spread over threads (identical count)."""
    bound = uint64(tab.shape[1])
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros(n_chunks, dtype=np.int64)
    for c in prange(n_chunks):
        per[c] = _split_chunk(tab, bound, thr, seed, c, min(CHUNK, n_resamples - c * CHUNK))
    return per.sum()


@njit(cache=True)
def split_exact_count(tab, thr):
    """How many of the ``n_split ** n`` joint splits give a total statistic >= ``thr``."""
    n, n_split = tab.shape
    part = np.zeros(n + 1, dtype=np.float64)
    digits = np.zeros(n, dtype=np.int64)
    for p in range(n):
        part[p + 1] = part[p] + tab[p, 0]
    ge = 0
    while True:
        if part[n] >= thr:
            ge += 1
        p = n - 1
        while p >= 0:
            digits[p] += 1
            if digits[p] < n_split:
                break
            digits[p] = 0
            p -= 1
        if p < 0:
            break
        for h in range(p, n):
            part[h + 1] = part[h] + tab[h, digits[h]]
    return ge


@njit(cache=True)
def _direct_chunk(upper, totals, r, a_coef, b_coef, thr, seed, chunk, count):
    n, m, _ = upper.shape
    n_words = (n * r + 3) // 4
    buf = np.empty(n_words, dtype=np.uint64)
    spare = np.empty(1, dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    idx = np.empty(m, dtype=np.int64)
    side = np.empty(m, dtype=np.int64)
    ge = 0
    for rs in range(count):
        lane = rs % LANES
        _fill_lane(buf, n_words, st, lane)
        t = 0.0
        q = 0
        for p in range(n):
            for i in range(m):
                idx[i] = i
                side[i] = 1
            for i in range(r):  # partial Fisher–Yates: the first r of idx go to side X
                j = i + np.int64(bounded(field(buf, q), uint64(m - i), spare, st, lane))
                q += 1
                tmp = idx[i]
                idx[i] = idx[j]
                idx[j] = tmp
                side[idx[i]] = 0
            w_in = 0.0
            for i in range(m):
                for j in range(i + 1, m):
                    if side[i] == side[j]:
                        w_in += upper[p, i, j]
            t += a_coef * w_in - b_coef * totals[p]
        if t >= thr:
            ge += 1
    return ge


@njit(cache=True, parallel=True)
def split_counts_direct(upper, totals, r, a_coef, b_coef, thr, n_resamples, seed):
    """As :func:`split_counts` without a table (large r): the statistic from the similarities."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros(n_chunks, dtype=np.int64)
    for c in prange(n_chunks):
        per[c] = _direct_chunk(upper, totals, r, a_coef, b_coef, thr, seed, c,
                               min(CHUNK, n_resamples - c * CHUNK))
    return per.sum()
