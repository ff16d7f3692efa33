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

