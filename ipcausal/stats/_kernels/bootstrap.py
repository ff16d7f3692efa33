"""Kernels of the PB bootstrap (:func:`ipcausal.stats.summary.personalization_bias`).

**The draws** (:func:`boot_sums`): resample r of a table with ``n`` rows draws ``n`` row indices
uniformly with replacement from its own generator of the counter-based stream (:mod:`.stream`):
xoshiro256** seeded by splitmix64 of ``seed ^ ((offset + r) * 0x94D049BB133111EB)``.  Each 64-bit
word gives two 32-bit numbers (low half first), each turned into an index below ``n`` by Lemire's
multiply with rejection (``x · n`` split into index = high 32 bits and a remainder; a remainder
below ``2**32 mod n`` is rejected and the next 32-bit number taken), so every index is exactly
uniform.  A resample's result depends on ``(seed, offset + r)`` only: the same on 1 or N threads.
The drawn rows are added in draw order.

**The sums.**  :func:`boot_sums` adds the drawn rows in draw order.  :func:`boot_type_sums` serves
tables with few distinct rows (ratings: a prompt's per-background counts and totals take a few
hundred values): row i has type ``types[i]``, a draw of i counts one for its type, and the total is
Σ_t count_t · rows[t] — the same draws, summed by type (exact for integer-valued tables, and a
lookup in a small type array instead of a cache miss in a large table per draw).

The former draws (numpy's ``Generator.integers`` per resample, added by :func:`gather_sums` /
:func:`draw_counts`) are kept for ``personalization_bias(..., bootstrap="numpy")``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from ipcausal.stats._kernels.stream import _fill, _seed_stream

_LOW32 = uint64(0xFFFFFFFF)
_TWO32 = uint64(1) << uint64(32)
MAX_ROWS = 1 << 32  # a draw covers at most 2**32 rows
_BLOCK = 64  # words drawn at a time (128 indices)


@njit(cache=True, inline="always")
def _draw(buf, pos, s0, s1, s2, s3, nn, t):
    """The next index below ``nn`` (see the module) and the generator's new position and state."""
    while True:
        if pos == 2 * _BLOCK:
            s0, s1, s2, s3 = _fill(buf, _BLOCK, s0, s1, s2, s3)
            pos = 0
        w = buf[pos >> 1]
        x = (w >> uint64(32)) if (pos & 1) else (w & _LOW32)
        pos += 1
        m = x * nn
        if (m & _LOW32) >= t:  # remainders below t = 2**32 mod n are rejected
            return np.int64(m >> uint64(32)), pos, s0, s1, s2, s3


@njit(cache=True, inline="always")
def _resample(table, n, out, row, seed, stream, buf):
    """Row ``row`` of ``out``: the column totals of ``n`` rows of ``table`` drawn from generator ``stream``."""
    cols = table.shape[1]
    s0, s1, s2, s3 = _seed_stream(seed, stream)
    nn = uint64(n)
    t = (_TWO32 - nn) % nn
    acc = np.zeros(cols)
    pos = 2 * _BLOCK
    for _ in range(n):
        i, pos, s0, s1, s2, s3 = _draw(buf, pos, s0, s1, s2, s3, nn, t)
        for c in range(cols):
            acc[c] += table[i, c]
    for c in range(cols):
        out[row, c] = acc[c]


@njit(cache=True)
def boot_sums(table, n_resamples, seed, offset):
    """``out[r, :]``: the column totals of ``table.shape[0]`` rows drawn with replacement for
    resample ``r`` (its generator: stream ``offset + r``; see the module).  One thread."""
    n, cols = table.shape
    out = np.empty((n_resamples, cols))
    buf = np.empty(_BLOCK, dtype=np.uint64)
    for r in range(n_resamples):
        _resample(table, n, out, r, seed, offset + r, buf)
    return out


@njit(cache=True, parallel=True)
def boot_sums_parallel(table, n_resamples, seed, offset):
    """As :func:`boot_sums`, resamples spread over threads in blocks of 16 (identical result)."""
    n, cols = table.shape
    out = np.empty((n_resamples, cols))
    n_blocks = (n_resamples + 15) // 16
    for b in prange(n_blocks):
        buf = np.empty(_BLOCK, dtype=np.uint64)
        for r in range(16 * b, min(16 * b + 16, n_resamples)):
            _resample(table, n, out, r, seed, offset + r, buf)
    return out


@njit(cache=True, inline="always")
def _type_resample(types, rows, out, row, seed, stream, buf, counts):
    """Row ``row`` of ``out``: Σ_t (draws of type t) · rows[t] for ``types.size`` draws from ``stream``."""
    n = types.shape[0]
    n_types, cols = rows.shape
    s0, s1, s2, s3 = _seed_stream(seed, stream)
    nn = uint64(n)
    t = (_TWO32 - nn) % nn
    for k in range(n_types):
        counts[k] = 0
    pos = 2 * _BLOCK
    for _ in range(n):
        i, pos, s0, s1, s2, s3 = _draw(buf, pos, s0, s1, s2, s3, nn, t)
        counts[types[i]] += 1
    for c in range(cols):
        acc = 0.0
        for k in range(n_types):
            acc += np.float64(counts[k]) * rows[k, c]
        out[row, c] = acc


@njit(cache=True)
def boot_type_sums(types, rows, n_resamples, seed, offset):
    """As :func:`boot_sums` for the table ``rows[types]`` (the same draws), summed by type."""
    out = np.empty((n_resamples, rows.shape[1]))
    buf = np.empty(_BLOCK, dtype=np.uint64)
    counts = np.empty(rows.shape[0], dtype=np.int64)
    for r in range(n_resamples):
        _type_resample(types, rows, out, r, seed, offset + r, buf, counts)
    return out


@njit(cache=True, parallel=True)
def boot_type_sums_parallel(types, rows, n_resamples, seed, offset):
    """As :func:`boot_type_sums`, resamples spread over threads in blocks of 16 (identical result)."""
    out = np.empty((n_resamples, rows.shape[1]))
    n_blocks = (n_resamples + 15) // 16
    for b in prange(n_blocks):
        buf = np.empty(_BLOCK, dtype=np.uint64)
        counts = np.empty(rows.shape[0], dtype=np.int64)
        for r in range(16 * b, min(16 * b + 16, n_resamples)):
            _type_resample(types, rows, out, r, seed, offset + r, buf, counts)
    return out


def boot_indices(n: int, n_resamples: int, seed: int, offset: int, draws: int | None = None) -> np.ndarray:
    """The row indices :func:`boot_sums` draws from a table of ``n`` rows, ``(n_resamples, draws)``
    (``draws``: the first that many of each resample, all ``n`` by default; the reference for tests)."""
    return _boot_indices(np.int64(n), np.int64(n_resamples), np.int64(seed), np.int64(offset),
                         np.int64(n if draws is None else draws))


@njit(cache=True)
def _boot_indices(n, n_resamples, seed, offset, draws):
    out = np.empty((n_resamples, draws), dtype=np.int64)
    buf = np.empty(_BLOCK, dtype=np.uint64)
    nn = uint64(n)
    t = (_TWO32 - nn) % nn
    for r in range(n_resamples):
        s0, s1, s2, s3 = _seed_stream(seed, offset + r)
        pos = 2 * _BLOCK
        for j in range(draws):
            out[r, j], pos, s0, s1, s2, s3 = _draw(buf, pos, s0, s1, s2, s3, nn, t)
    return out


@njit(cache=True)
def gather_sums(idx, table, out, row0):
    """``out[row0 + r, :] = Σ_j table[idx[r, j], :]``: the column totals of the clusters drawn in
    resample ``r`` (``idx``: one row of cluster indices per resample; ``table``: one row per
    cluster).  Sums in draw order, one resample at a time (the former draws)."""
    rows, draws = idx.shape
    cols = table.shape[1]
    acc = np.zeros(cols)
    for r in range(rows):
        for c in range(cols):
            acc[c] = 0.0
        for j in range(draws):
            i = idx[r, j]
            for c in range(cols):
                acc[c] += table[i, c]
        for c in range(cols):
            out[row0 + r, c] = acc[c]


@njit(cache=True)
def draw_counts(idx, n_c):
    """``out[r, c]`` = how often cluster ``c`` is drawn in resample ``r`` (float64, for one BLAS
    product with the per-cluster table: cheaper than :func:`gather_sums` once the table no
    longer fits in cache; the former draws)."""
    rows, draws = idx.shape
    out = np.zeros((rows, n_c))
    for r in range(rows):
        for j in range(draws):
            out[r, idx[r, j]] += 1.0
    return out
