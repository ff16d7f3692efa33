"""Portable Monte Carlo kernels: byte tables for continuous data, popcount for lattice data."""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from ipcausal.stats._kernels.stream import CHUNK, LANES, _fill_lane, _popcount, _seed_lanes, _tally

@njit(cache=True)
def byte_tables(a):
    """Signed partial sums, float64: ``tab[g, b] = Σ_j ±a[8g + j]`` (+ where bit j of b is 1)."""
    n = a.shape[0]
    groups = (n + 7) // 8
    tab = np.zeros((groups, 256), dtype=np.float64)
    for g in range(groups):
        for b in range(256):
            acc = 0.0
            for k in range(8):
                idx = 8 * g + k
                if idx < n:
                    if (b >> k) & 1:
                        acc += a[idx]
                    else:
                        acc -= a[idx]
            tab[g, b] = acc
    return tab


@njit(cache=True)
def word_tables(a):
    """Flat float64 byte tables padded to whole 64-bit words (8 groups per word).

    ``tab[(g << 8) | b]`` is as in :func:`byte_tables`; padding groups are all zero.
    Returns ``(tab, n_words)``.
    """
    n = a.shape[0]
    n_words = (n + 63) // 64
    groups = 8 * n_words
    x = np.zeros(groups * 8, dtype=np.float64)
    for i in range(n):
        x[i] = a[i]
    tab = np.empty(groups * 256, dtype=np.float64)
    for g in range(groups):
        for b in range(256):
            acc = 0.0
            for k in range(8):
                if (b >> k) & 1:
                    acc += x[8 * g + k]
                else:
                    acc -= x[8 * g + k]
            tab[(g << 8) | b] = acc
    return tab, n_words


@njit(cache=True)
def _table_chunk(tab, n_words, xa, xg, xl, seed, chunk, count):
    buf = np.empty(n_words, dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    ge_abs = 0
    ge = 0
    le = 0
    for r in range(count):
        _fill_lane(buf, n_words, st, r % LANES)
        # four accumulators break the 4-cycle float-add latency chain; unsigned indices
        # skip numba's negative-index wraparound
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for j in range(n_words):
            w = buf[j]
            base = uint64(j) << uint64(11)
            a0 += tab[base + (w & uint64(255))]
            a1 += tab[base + uint64(256) + ((w >> uint64(8)) & uint64(255))]
            a2 += tab[base + uint64(512) + ((w >> uint64(16)) & uint64(255))]
            a3 += tab[base + uint64(768) + ((w >> uint64(24)) & uint64(255))]
            a0 += tab[base + uint64(1024) + ((w >> uint64(32)) & uint64(255))]
            a1 += tab[base + uint64(1280) + ((w >> uint64(40)) & uint64(255))]
            a2 += tab[base + uint64(1536) + ((w >> uint64(48)) & uint64(255))]
            a3 += tab[base + uint64(1792) + (w >> uint64(56))]
        t = (a0 + a1) + (a2 + a3)
        a, g, l_ = _tally(t, xa, xg, xl)
        ge_abs += a
        ge += g
        le += l_
    return ge_abs, ge, le


@njit(cache=True)
def mc_counts_table(tab, n_words, xa, xg, xl, n_resamples, seed):
    """Counts of |T*| >= xa, T* >= xg, T* <= xl over ``n_resamples`` resamples (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    out = np.zeros(3, dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _table_chunk(tab, n_words, xa, xg, xl, seed, c, count)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out


@njit(cache=True, parallel=True)
def mc_counts_table_parallel(tab, n_words, xa, xg, xl, n_resamples, seed):
    """As :func:`mc_counts_table`, chunks spread over threads (identical result)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _table_chunk(tab, n_words, xa, xg, xl, seed, c, count)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0)


def popcount_segments(k_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(word index, bit mask, value) per segment of equal values in ascending integer ``k``."""
    n = k_sorted.size
    n_words = (n + 63) // 64
    starts = np.flatnonzero(np.r_[True, k_sorted[1:] != k_sorted[:-1]])
    ends = np.r_[starts[1:], n]
    seg_w, seg_m, seg_v = [], [], []
    for s, e, v in zip(starts.tolist(), ends.tolist(), k_sorted[starts].tolist()):
        for wi in range(s // 64, (e - 1) // 64 + 1):
            lo = max(s, 64 * wi) - 64 * wi
            hi = min(e, 64 * wi + 64) - 64 * wi  # bits lo..hi-1
            mask = ((1 << hi) - 1) ^ ((1 << lo) - 1)
            seg_w.append(wi)
            seg_m.append(mask)
            seg_v.append(int(v))
    return (np.array(seg_w, dtype=np.int64), np.array(seg_m, dtype=np.uint64),
            np.array(seg_v, dtype=np.int64), n_words)


@njit(cache=True, inline="always")
def _segment_weight(buf, seg_w, seg_m, seg_v):
    """W = Σ_v v · popcount(bits of value v) of one resample's words ``buf``."""
    w = np.int64(0)
    for i in range(seg_w.shape[0]):
        w += seg_v[i] * np.int64(_popcount(buf[seg_w[i]] & seg_m[i]))
    return w


@njit(cache=True)
def _pop_chunk(seg_w, seg_m, seg_v, n_words, total, t_int, seed, chunk, count):
    buf = np.empty(n_words, dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    t_abs = abs(t_int)
    ge_abs = 0
    ge = 0
    le = 0
    for r in range(count):
        _fill_lane(buf, n_words, st, r % LANES)
        t = 2 * _segment_weight(buf, seg_w, seg_m, seg_v) - total
        a, g, l_ = _tally(t, t_abs, t_int, t_int)
        ge_abs += a
        ge += g
        le += l_
    return ge_abs, ge, le


@njit(cache=True)
def mc_counts_popcount(seg_w, seg_m, seg_v, n_words, total, t_int, n_resamples, seed):
    """Counts of |T*| >= |t|, T* >= t, T* <= t for integer lattice data (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    out = np.zeros(3, dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _pop_chunk(seg_w, seg_m, seg_v, n_words, total, t_int, seed, c, count)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out


@njit(cache=True, parallel=True)
def mc_counts_popcount_parallel(seg_w, seg_m, seg_v, n_words, total, t_int, n_resamples, seed):
    """As :func:`mc_counts_popcount`, chunks spread over threads (identical result)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _pop_chunk(seg_w, seg_m, seg_v, n_words, total, t_int, seed, c, count)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0)
