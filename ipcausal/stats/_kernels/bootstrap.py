"""Kernels of the PB bootstrap (:func:`ipcausal.stats.summary.personalization_bias`)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def gather_sums(idx, table, out, row0):
    """``out[row0 + r, :] = Σ_j table[idx[r, j], :]``: the column totals of the clusters drawn in
    resample ``r`` (``idx``: one row of cluster indices per resample; ``table``: one row per
    cluster).  Sums in draw order, one resample at a time."""
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
    longer fits in cache)."""
    rows, draws = idx.shape
    out = np.zeros((rows, n_c))
    for r in range(rows):
        for j in range(draws):
            out[r, idx[r, j]] += 1.0
    return out
