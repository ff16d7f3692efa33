"""The PB bootstrap's draws from the counter-based stream (:mod:`ipcausal.stats._kernels.bootstrap`).

A resample of a table with n rows draws n rows with replacement inside a numba kernel; resample r of
background u (or of the cluster table) has its own generator, so the result does not depend on the
number of threads.  Large tables with few distinct rows (ratings) are summed by row type
(:func:`row_types`): the same draws, without a cache miss per draw.
"""

from __future__ import annotations

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats import _small
from ipcausal.stats._threads import n_threads

K = lazy_module("ipcausal.stats._kernels")  # numba is imported on the first kernel call

__all__ = ["table_sums", "within_means", "row_types", "PARALLEL_MIN_DRAWS", "MAX_TYPES", "TYPED_MIN_BYTES"]

PARALLEL_MIN_DRAWS = 4_000_000  # resamples x rows from which the resamples are spread over threads (~10 ms)
MAX_TYPES = 1 << 14  # distinct rows up to which a table is summed by type
TYPED_MIN_BYTES = 1 << 19  # tables smaller than this stay in cache: drawn rows are added directly


def row_types(table: np.ndarray, most: int = MAX_TYPES) -> tuple[np.ndarray, np.ndarray] | None:
    """``(types, rows)`` with ``table == rows[types]`` (``types`` int16 or int32), or ``None`` when the table
    has more than ``most`` distinct rows.  Columns are coded by their distinct values first (one
    sort per column), so a table of ratings is typed in a few sorts of n numbers."""
    n, cols = table.shape
    codes = np.zeros(n, dtype=np.int64)
    mult = 1
    for c in range(cols):
        u, inv = np.unique(table[:, c], return_inverse=True)
        if mult * u.size > 2**62 or u.size > most:
            return None
        codes += inv.ravel().astype(np.int64) * mult
        mult *= u.size
    keys, first, types = np.unique(codes, return_index=True, return_inverse=True)
    if keys.size > most:
        return None
    small = np.int16 if keys.size <= np.iinfo(np.int16).max else np.int32  # half the cache lines
    return types.ravel().astype(small), np.ascontiguousarray(table[first])


def table_sums(table: np.ndarray, n_resamples: int, seed: int, offset: int = 0) -> np.ndarray:
    """``(n_resamples, cols)``: per resample the column totals of ``table.shape[0]`` rows drawn with
    replacement (resample r from generator ``offset + r`` of the stream ``seed``)."""
    table = np.ascontiguousarray(table, dtype=np.float64)
    n = table.shape[0]
    if n <= _small.BOOT_ROWS:  # numpy, bit-identical: spares a short run numba's first dispatch
        return _small.boot_sums(table, n_resamples, seed, offset)
    if n > K.MAX_ROWS:
        raise ValueError(f"the bootstrap draws from at most {K.MAX_ROWS:,} rows, got {n:,}")
    parallel = n_resamples * n >= PARALLEL_MIN_DRAWS and n_threads() > 1
    typed = row_types(table) if table.nbytes >= TYPED_MIN_BYTES else None
    if typed is not None and typed[1].shape[0] * 8 <= n:
        kern = K.boot_type_sums_parallel if parallel else K.boot_type_sums
        return kern(typed[0], typed[1], n_resamples, seed, offset)
    kern = K.boot_sums_parallel if parallel else K.boot_sums
    return kern(table, n_resamples, seed, offset)


def within_means(groups: list[np.ndarray], n_resamples: int, seed: int) -> np.ndarray:
    """``(n_resamples, U, dims)``: per resample the mean of each group resampled within itself
    (group u, resample r: generator ``u · n_resamples + r``)."""
    dims = groups[0].shape[1]
    boot = np.empty((n_resamples, len(groups), dims))
    for u, g in enumerate(groups):
        boot[:, u, :] = table_sums(g, n_resamples, seed, u * n_resamples) / g.shape[0]
    return boot
