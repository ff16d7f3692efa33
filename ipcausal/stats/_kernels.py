"""Numba kernels for the paired sign-flip tests (the only module that uses numba).

All kernels take validated, contiguous float64/int64 arrays and plain integer seeds.

Random numbers: xoshiro256** (every bit of a 64-bit word becomes one sign, so a generator
with strong low bits is needed), seeded per *chunk* of resamples by splitmix64 of
``(seed, chunk index)``.  The count of a chunk depends only on the seed and the chunk
index, so results are identical on one thread and on many.

Sign flips use byte tables: the n weights are split into groups of 8; for each group a
256-entry table holds the signed partial sum for every sign pattern of its 8 members, so
one random byte adds 8 signed weights with a single lookup.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

CHUNK = 2048  # resamples per counter-based chunk (fixed: it defines the random stream)

_GOLDEN = uint64(0x9E3779B97F4A7C15)
_MIX1 = uint64(0xBF58476D1CE4E5B9)
_MIX2 = uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(cache=True, inline="always")
def _splitmix(state):
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> uint64(30))) * _MIX1
    z = (z ^ (z >> uint64(27))) * _MIX2
    return state, z ^ (z >> uint64(31))


@njit(cache=True)
def _seed_chunk(seed, chunk, s):
    st = uint64(seed) ^ (uint64(chunk) * _MIX2)
    for i in range(4):
        st, v = _splitmix(st)
        s[i] = v


@njit(cache=True, inline="always")
def _next(s):
    result = _rotl(s[1] * uint64(5), 7) * uint64(9)
    t = s[1] << uint64(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@njit(cache=True)
def byte_tables(a):
    """Signed partial sums: ``tab[g, b] = sum_k (+a or -a)`` for the 8 weights of group g."""
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
def _chunk_counts(tab, t_obs, eps, seed, chunk, count):
    groups = tab.shape[0]
    s = np.empty(4, dtype=np.uint64)
    _seed_chunk(seed, chunk, s)
    t_abs = abs(t_obs)
    ge_abs = 0
    ge = 0
    le = 0
    for _ in range(count):
        acc = 0.0
        g = 0
        while g < groups:
            w = _next(s)
            stop = min(groups, g + 8)
            while g < stop:
                acc += tab[g, w & uint64(255)]
                w >>= uint64(8)
                g += 1
        if abs(acc) >= t_abs - eps:
            ge_abs += 1
        if acc >= t_obs - eps:
            ge += 1
        if acc <= t_obs + eps:
            le += 1
    return ge_abs, ge, le


@njit(cache=True)
def mc_counts_serial(tab, t_obs, eps, n_resamples, seed):
    """Counts of resampled statistics with |T*| >= |t|, T* >= t, T* <= t (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    out = np.zeros(3, dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _chunk_counts(tab, t_obs, eps, seed, c, count)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out


@njit(cache=True, parallel=True)
def mc_counts_parallel(tab, t_obs, eps, n_resamples, seed):
    """As :func:`mc_counts_serial`, chunks spread over threads (same result)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _chunk_counts(tab, t_obs, eps, seed, c, count)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0)


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
    """
    total = 0
    for i in range(k.shape[0]):
        total += k[i]
    f = np.zeros(total + 1, dtype=np.float64)
    f[0] = 1.0
    cur = 0
    for i in range(k.shape[0]):
        ki = k[i]
        cur += ki
        for w in range(cur, ki - 1, -1):
            f[w] = 0.5 * (f[w] + f[w - ki])
        for w in range(min(ki - 1, cur), -1, -1):
            f[w] = 0.5 * f[w]
    return f
