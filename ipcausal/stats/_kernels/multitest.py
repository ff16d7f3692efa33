"""Kernels for the multiple-testing corrections (``ipcausal/stats/multitest.py``)."""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

# =============================================================================================
# Multiple-testing corrections (used by ipcausal/stats/multitest.py only; independent of the
# sign-flip kernels above).  Arrays are C-contiguous float64, one family per row.  The row
# kernels release the GIL: big multi-family calls run chunks of rows on Python threads.
#
# Rank order without argsort: numpy's SIMD sort of uint64 is ~2.5x faster than np.argsort of
# the float64 p-values.  A p-value in [0, 1] is >= 0, so its IEEE bit pattern orders like the
# value and its two top bits are 0: key = (bits << 2) with the low b = ceil(log2 m) bits replaced
# by the position.  Sorted keys list the values in order except among values that agree in all
# but their lowest b - 2 mantissa bits; ``_mt_fix_order`` puts those few back in exact order by
# insertion sort (O(m) for rare near-ties; past a budget it falls back to a full argsort).
# (-0.0 passes the [0, 1] check and its key is that of +0.0: the shift drops the sign bit.)
# Equal values may come out in any order: a step-down method gives a tie group the value at its
# smallest rank and a step-up method the value at its largest, so the result does not depend on
# it (and matches statsmodels, whose argsort is not stable either).
# =============================================================================================


@njit(cache=True)
def _mt_index_bits(m):
    b = 0
    while (np.int64(1) << b) < m:
        b += 1
    return b


@njit(cache=True)
def mt_elementwise(x, fm, bonferroni, out):
    """Bonferroni ``min(p * fm, 1)`` (or a plain copy) of flat ``x`` into ``out``; False if any p ∉ [0, 1]."""
    ok = True
    if bonferroni:
        for i in range(x.shape[0]):
            v = x[i]
            ok &= (v >= 0.0) & (v <= 1.0)
            out[i] = min(v * fm, 1.0)
    else:
        for i in range(x.shape[0]):
            v = x[i]
            ok &= (v >= 0.0) & (v <= 1.0)
            out[i] = v
    return ok


@njit(cache=True)
def mt_check(x):
    """0 if some entry of flat ``x`` is outside [0, 1] or NaN, else 2 if some entry is 1, else 1."""
    ok = True
    one = False
    for i in range(x.shape[0]):
        v = x[i]
        ok &= (v >= 0.0) & (v <= 1.0)
        one |= v == 1.0
    return 0 if not ok else (2 if one else 1)


@njit(cache=True, inline="always")
def _mt_keys_row(xr, br, clear, kr):
    ok = True
    for i in range(xr.shape[0]):
        v = xr[i]
        ok &= (v >= 0.0) & (v <= 1.0)
        kr[i] = ((br[i] << uint64(2)) & clear) | uint64(i)
    return ok


@njit(cache=True, nogil=True)
def mt_keys(x, keys):
    """Sort keys (see above) of each row of ``x`` (K, m) into ``keys``; False if any p ∉ [0, 1]."""
    clear = ~uint64((np.int64(1) << _mt_index_bits(x.shape[1])) - 1)
    bits = x.view(np.uint64)
    ok = True
    for r in range(x.shape[0]):
        ok &= _mt_keys_row(x[r], bits[r], clear, keys[r])
    return ok


@njit(cache=True)
def _mt_fix_order(xr, kr, mask, xs, idx):
    """Exact ascending order from sorted keys: insertion sort of the near-ties (or a full argsort)."""
    m = xr.shape[0]
    for i in range(m):
        j = np.int64(kr[i] & mask)
        idx[i] = j
        xs[i] = xr[j]
    budget = 4 * m + 64
    moves = 0
    for i in range(1, m):
        v = xs[i]
        if v < xs[i - 1]:
            j = idx[i]
            k = i
            while k > 0 and xs[k - 1] > v:
                xs[k] = xs[k - 1]
                idx[k] = idx[k - 1]
                k -= 1
            xs[k] = v
            idx[k] = j
            moves += i - k
            if moves > budget:  # adversarial near-ties: sort exactly instead
                o = np.argsort(xr)
                for t in range(m):
                    idx[t] = o[t]
                    xs[t] = xr[o[t]]
                return


@njit(cache=True)
def _mt_order(xr, kr, mask, xs, idx):
    """From a row's sorted keys: its values ascending (``xs``) and their positions (``idx``)."""
    m = xr.shape[0]
    for i in range(m):  # three simple loops: faster than one fused loop (measured)
        idx[i] = np.int64(kr[i] & mask)
    for i in range(m):
        xs[i] = xr[idx[i]]
    bad = False
    for i in range(1, m):
        bad |= xs[i] < xs[i - 1]
    if bad:
        _mt_fix_order(xr, kr, mask, xs, idx)


@njit(cache=True, nogil=True)
def mt_order(x, keys, xs, idx):
    """Each row of ``x`` sorted ascending into ``xs`` with its positions in ``idx`` (from sorted keys)."""
    mask = uint64((np.int64(1) << _mt_index_bits(x.shape[1])) - 1)
    for r in range(x.shape[0]):
        _mt_order(x[r], keys[r], mask, xs[r], idx[r])


@njit(cache=True, nogil=True)
def mt_scatter(vals, idx, out):
    """``out[r, idx[r, i]] = vals[r, i]`` for every row r (sorted order back to input order)."""
    for r in range(vals.shape[0]):
        for i in range(vals.shape[1]):
            out[r, idx[r, i]] = vals[r, i]


@njit(cache=True)
def _mt_step_row(xr, kr, mask, fac, step_down, divide, xs, idx, outr):
    m = xr.shape[0]
    _mt_order(xr, kr, mask, xs, idx)
    if step_down:
        run = -np.inf
        if divide:
            for i in range(m):
                run = max(run, xs[i] / fac[i])
                outr[idx[i]] = min(run, 1.0)
        else:
            for i in range(m):
                run = max(run, xs[i] * fac[i])
                outr[idx[i]] = min(run, 1.0)
    else:
        run = np.inf
        if divide:
            for i in range(m - 1, -1, -1):
                run = min(run, xs[i] / fac[i])
                outr[idx[i]] = min(run, 1.0)
        else:
            for i in range(m - 1, -1, -1):
                run = min(run, xs[i] * fac[i])
                outr[idx[i]] = min(run, 1.0)


@njit(cache=True, nogil=True)
def mt_stepwise(x, keys, fac, step_down, divide, out):
    """Step-down / step-up adjusted p-values of each row of ``x`` (K, m) into ``out``.

    With the row sorted ascending (``xs``, rank i = 0..m-1) the raw value is ``xs[i] / fac[i]``
    (``divide``) or ``xs[i] * fac[i]``; step-down takes the running maximum from the smallest p
    (Holm), step-up the running minimum from the largest (Hochberg, BH, BY); capped at 1 and
    written back to the input positions.  The arithmetic is statsmodels' operation by operation.
    """
    m = x.shape[1]
    mask = uint64((np.int64(1) << _mt_index_bits(m)) - 1)
    xs = np.empty(m)
    idx = np.empty(m, np.int64)
    for r in range(x.shape[0]):
        _mt_step_row(x[r], keys[r], mask, fac, step_down, divide, xs, idx, out[r])
