"""Kernels of the trend test and the heterogeneity test: per-prompt relabelings of k labels.

Both tests randomise as the joint test does (:mod:`.labels`): each prompt's k responses are
permuted across the k labels, prompts grouped ``group`` at a time, a group's joint relabeling
one uniform draw of :func:`.labels.bounded` and its contribution one row of a
:func:`.labels.label_tables` table.  The random stream is the joint test's, read in the same
order (:func:`.labels._relabel`), so the counts depend only on ``(seed, chunk)`` and the
serial and the parallel kernels agree bitwise.

* **Trend** (:func:`trend_counts`): the table (:func:`value_tables`) has one column, the
  group's contribution to ``T = Σ_p Σ_b w_b · y[p, π_p(b)]``, built from each prompt's value
  under each relabeling (see :func:`ipcausal.stats.ordered.trend_test`); a
  resample's statistic is one sum of table rows, tallied as ``(|T*| ≥ xa, T* ≥ xg, T* ≤ xl)``.
* **Heterogeneity** (:func:`het_counts`): the joint test's own table (column sums
  ``A_c = Σ_p (y[p, π_p(c)] − y[p, π_p(0)])``, ``A_0 = 0``); a resample's statistic is
  ``Σ_c (A_c − Ā)²`` (n² times the spread of the relabelled column means), tallied as ``≥ thr``.

The exact kernels walk every relabeling with an odometer over the groups (as
:func:`.labels.wy_exact_counts` does), keeping prefix sums so that a step adds only the groups it changed.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from ipcausal.stats._kernels.labels import _relabel
from ipcausal.stats._kernels.stream import CHUNK, LANES, _fill_lane, _seed_lanes, _tally


@njit(cache=True)
def value_tables(v, group):
    """The one-column table of :func:`.labels.label_tables` from per-prompt values.

    ``v``: (n, P) float64, ``v[p, d]`` prompt p's contribution under relabeling d.  Row
    ``g * R + combo`` (R = P**group) holds ``Σ_t v[p_t, (combo // P**t) % P]`` over the prompts
    ``p_t = g * group + t`` of group g, the layout :func:`.labels._relabel` reads.
    """
    n, n_perm = v.shape
    n_groups = (n + group - 1) // group
    rmax = n_perm**group
    tab = np.zeros(n_groups * rmax, dtype=np.float64)
    radix = np.empty(n_groups, dtype=np.uint64)
    for g in range(n_groups):
        lo = g * group
        size = min(n, lo + group) - lo
        rg = n_perm**size
        radix[g] = uint64(rg)
        for combo in range(rg):
            c = combo
            acc = 0.0
            for t in range(size):
                acc += v[lo + t, c % n_perm]
                c //= n_perm
            tab[g * rmax + combo] = acc
    return tab, radix


@njit(cache=True)
def _trend_chunk(tab, radix, rmax, xa, xg, xl, seed, chunk, count):
    n_words = (radix.shape[0] + 3) // 4
    buf = np.empty(n_words, dtype=np.uint64)
    spare = np.empty(1, dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    acc = np.zeros(2, dtype=np.float64)
    ge_abs = 0
    ge = 0
    le = 0
    for r in range(count):
        lane = r % LANES
        _fill_lane(buf, n_words, st, lane)
        _relabel(buf, tab, radix, rmax, 1, spare, st, lane, acc)
        a, g, l_ = _tally(acc[1], xa, xg, xl)
        ge_abs += a
        ge += g
        le += l_
    return ge_abs, ge, le


@njit(cache=True)
def trend_counts(tab, radix, rmax, xa, xg, xl, n_resamples, seed):
    """Counts of ``|T*| ≥ xa``, ``T* ≥ xg``, ``T* ≤ xl`` over ``n_resamples`` relabelings (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    out = np.zeros(3, dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _trend_chunk(tab, radix, rmax, xa, xg, xl, seed, c, count)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out


@njit(cache=True, parallel=True)
def trend_counts_parallel(tab, radix, rmax, xa, xg, xl, n_resamples, seed):
    """As :func:`trend_counts`, chunks spread over threads (identical counts)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _trend_chunk(tab, radix, rmax, xa, xg, xl, seed, c, count)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0)


@njit(cache=True, inline="always")
def _advance(digits, radix):
    """Step the odometer ``digits`` (group g counts up to ``radix[g]``, the last group fastest);
    the first group whose digit changed, or −1 once every relabeling has been visited."""
    g = digits.shape[0] - 1
    while g >= 0:
        digits[g] += 1
        if digits[g] < np.int64(radix[g]):
            return g
        digits[g] = 0
        g -= 1
    return -1


@njit(cache=True, inline="always")
def _prefix(part, tab, rmax, km1, digits, start):
    """Prefix sums ``part[h + 1] = part[h] + row(h, digits[h])`` from group ``start`` on."""
    for h in range(start, digits.shape[0]):
        row = (h * rmax + digits[h]) * km1
        for j in range(km1):
            part[h + 1, j + 1] = part[h, j + 1] + tab[row + j]


@njit(cache=True)
def trend_exact_counts(tab, radix, rmax, xa, xg, xl):
    """The three counts over every relabeling (odometer over the groups, prefix sums)."""
    out = np.zeros(3, dtype=np.int64)
    part = np.zeros((radix.shape[0] + 1, 2), dtype=np.float64)
    digits = np.zeros(radix.shape[0], dtype=np.int64)
    g = 0
    while g >= 0:
        _prefix(part, tab, rmax, 1, digits, g)
        a, ge, le = _tally(part[-1, 1], xa, xg, xl)
        out[0] += a
        out[1] += ge
        out[2] += le
        g = _advance(digits, radix)
    return out


@njit(cache=True, inline="always")
def _spread(acc, k):
    """``Σ_c (acc[c] − mean(acc))²`` over the k entries (``acc[0]`` is 0)."""
    m = 0.0
    for c in range(k):
        m += acc[c]
    m /= k
    s = 0.0
    for c in range(k):
        d = acc[c] - m
        s += d * d
    return s


@njit(cache=True)
def _het_chunk(tab, radix, rmax, k, thr, seed, chunk, count):
    n_words = (radix.shape[0] + 3) // 4
    buf = np.empty(n_words, dtype=np.uint64)
    spare = np.empty(1, dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    acc = np.zeros(k, dtype=np.float64)
    hits = 0
    for r in range(count):
        lane = r % LANES
        _fill_lane(buf, n_words, st, lane)
        _relabel(buf, tab, radix, rmax, k - 1, spare, st, lane, acc)
        if _spread(acc, k) >= thr:
            hits += 1
    return hits


@njit(cache=True)
def het_counts(tab, radix, rmax, k, thr, n_resamples, seed):
    """Relabelings (of ``n_resamples``) whose spread ``Σ_c (A_c − Ā)²`` reaches ``thr`` (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    hits = 0
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        hits += _het_chunk(tab, radix, rmax, k, thr, seed, c, count)
    return hits


@njit(cache=True, parallel=True)
def het_counts_parallel(tab, radix, rmax, k, thr, n_resamples, seed):
    """As :func:`het_counts`, chunks spread over threads (identical count)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros(n_chunks, dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        per[c] = _het_chunk(tab, radix, rmax, k, thr, seed, c, count)
    return per.sum()


@njit(cache=True)
def het_exact_count(tab, radix, rmax, k, thr):
    """Relabelings, of all of them, whose spread reaches ``thr`` (odometer as in :func:`trend_exact_counts`)."""
    hits = 0
    part = np.zeros((radix.shape[0] + 1, k), dtype=np.float64)
    digits = np.zeros(radix.shape[0], dtype=np.int64)
    g = 0
    while g >= 0:
        _prefix(part, tab, rmax, k - 1, digits, g)
        if _spread(part[-1], k) >= thr:
            hits += 1
        g = _advance(digits, radix)
    return hits
