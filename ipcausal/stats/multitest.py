"""Multiple-testing corrections across background pairs (SPEC §3), one family or many at once.

Family-wise error: ``"bonferroni"``, ``"sidak"``, ``"holm"``, ``"holm-sidak"``, ``"hochberg"``.
False discovery rate: ``"bh"`` (Benjamini–Hochberg), ``"by"`` (Benjamini–Yekutieli).
``"none"`` returns the p-values unchanged.  Adjusted p-values keep the input order and are
capped at 1; they agree with ``statsmodels.stats.multitest.multipletests`` operation by
operation (ties included).  The ranking kernels are in ``_kernels/multitest.py`` (numba, one
pass to validate and build sort keys, numpy's SIMD sort, one pass to accumulate);
``docs/performance.md`` has the design and the timings.
"""

from __future__ import annotations

import numbers
from functools import lru_cache
from typing import Any

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats import _small
from ipcausal.stats._validate import as_array, choice

K = lazy_module("ipcausal.stats._kernels")  # numba is imported on the first kernel call

__all__ = ["adjust_pvalues", "CORRECTIONS"]

CORRECTIONS = ("bonferroni", "sidak", "holm", "holm-sidak", "hochberg", "bh", "by", "none")
_STEP_DOWN = {"holm": True, "hochberg": False, "bh": False, "by": False}
# p-values in a multi-family call from which chunks of rows run on several threads (the numba
# row kernels release the GIL, and so does numpy's sort): ~3 ms of work on one thread, far above
# the cost of starting the threads.  Rows are independent: identical values either way.
PARALLEL_MIN_VALUES = 1 << 18


def _as_pvalues(p: Any) -> np.ndarray:
    if isinstance(p, np.ndarray):
        arr = p  # the fast path: no checks for raggedness needed
    else:
        arr = as_array(p, "p", "an array of p-values (rectangular when N-D)")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`p` must hold numbers, got dtype {arr.dtype}")
    if arr.dtype != np.float64:
        arr = arr.astype(np.float64)
    if arr.ndim == 0:
        raise ValueError("`p` must be an array of p-values (at least 1-D), got a scalar")
    if arr.size == 0:
        raise ValueError("`p` must not be empty")
    return arr


def _invalid(x: np.ndarray) -> ValueError:
    """The error for p-values that failed the kernels' [0, 1] check (slow path, errors only)."""
    if not np.isfinite(x).all():
        return ValueError("`p` must be finite (no NaN or inf)")
    return ValueError("`p` must lie in [0, 1]")


def _axis(axis: Any, ndim: int) -> int | None:
    if type(axis) is int and -ndim <= axis < ndim:  # the common case, cheaply
        return axis % ndim
    if axis is None:
        return None
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"`axis` must be an int or None, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"`axis` {axis} is out of bounds for `p` with {ndim} dimension(s)")
    return int(axis) % ndim


def _factors(method: str, m: int) -> np.ndarray:
    """Per-rank factors, computed as statsmodels computes them (so the results agree bitwise)."""
    return _factors_cached(method, m) if m <= 1 << 16 else _compute_factors(method, m)


@lru_cache(maxsize=64)  # at most 64 × 512 KiB
def _factors_cached(method: str, m: int) -> np.ndarray:
    return _compute_factors(method, m)


def _compute_factors(method: str, m: int) -> np.ndarray:
    if method in ("holm", "hochberg"):
        f = np.arange(m, 0, -1).astype(np.float64)  # statsmodels multiplies by this int range
    else:
        f = np.arange(1, m + 1) / float(m)  # statsmodels' _ecdf
        if method == "by":
            f = f / np.sum(1.0 / np.arange(1, m + 1))
    f.setflags(write=False)
    return f


def _rank_based(rows: np.ndarray, method: str, out: np.ndarray) -> bool:
    """Holm, Hochberg, BH, BY or Holm–Šidák of every row of ``rows`` into ``out``; False if invalid."""
    m = rows.shape[1]
    keys = np.empty(rows.shape, dtype=np.uint64)
    if not K.mt_keys(rows, keys):
        return False
    keys.sort(axis=-1)
    if method != "holm-sidak":
        K.mt_stepwise(rows, keys, _factors(method, m), _STEP_DOWN[method], method in ("bh", "by"), out)
        return True
    # Holm–Šidák: exp/log are numpy's (SIMD) ufuncs, as in statsmodels
    xs = np.empty(rows.shape)
    idx = np.empty(rows.shape, dtype=np.int64)
    K.mt_order(rows, keys, xs, idx)
    with np.errstate(divide="ignore"):  # p = 1: log1p(-1) = -inf, adjusted = 1
        np.log1p(np.negative(xs, out=xs), out=xs)
    np.multiply(_factors("holm", m), xs, out=xs)
    np.negative(np.expm1(xs, out=xs), out=xs)
    np.maximum.accumulate(xs, axis=-1, out=xs)
    K.mt_scatter(np.minimum(xs, 1.0, out=xs), idx, out)
    return True


def _rank_based_threads(rows: np.ndarray, method: str, out: np.ndarray) -> bool:
    """:func:`_rank_based` with the rows split over threads when the call is big enough."""
    threads = 1
    if rows.shape[0] > 1 and rows.size >= PARALLEL_MIN_VALUES:
        from ipcausal.stats._threads import n_threads

        threads = min(n_threads(), rows.shape[0])
    if threads == 1:
        return _rank_based(rows, method, out)
    from concurrent.futures import ThreadPoolExecutor

    bounds = np.linspace(0, rows.shape[0], threads + 1).astype(int).tolist()
    chunks = list(zip(bounds[:-1], bounds[1:]))
    with ThreadPoolExecutor(threads) as pool:
        done = list(pool.map(lambda ab: _rank_based(rows[ab[0]:ab[1]], method, out[ab[0]:ab[1]]), chunks))
    return all(done)


def adjust_pvalues(p: Any, method: str = "bonferroni", *, axis: int | None = -1) -> np.ndarray:
    """Adjust p-values for multiple testing, one family or many families at once.

    Parameters
    ----------
    p : array_like
        Raw p-values in [0, 1].  1-D: one family.  N-D: every 1-D slice along ``axis`` is its
        own family (for example ``K`` models × ``m`` background pairs, or ``K`` simulated
        replications), all adjusted in one vectorized call.
    method : str
        One of ``CORRECTIONS`` (module docstring).
    axis : int or None, keyword-only
        The axis along which a family runs; default ``-1`` (each row of a 2-D array is a
        family; note that ``scipy.stats.false_discovery_control`` defaults to ``axis=0``).
        ``None``: all entries form a single family, whatever the shape.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values (float64), same shape and order as ``p``; reject H0_k when
        ``adjusted[k] <= alpha``.  Each family equals ``statsmodels``'
        ``multipletests(family, method=...)[1]``.

    Raises
    ------
    TypeError
        ``p`` is a string or does not hold numbers; ``axis`` is not an int or None.
    ValueError
        ``p`` is a scalar, empty, not finite or outside [0, 1]; ``axis`` is out of bounds;
        ``method`` is unknown.

    Examples
    --------
    >>> from ipcausal import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh").round(3).tolist()
    [0.03, 0.04, 0.04]

    Two families (rows) in one call, and the same numbers laid out in columns:

    >>> P = [[0.01, 0.04, 0.03], [0.20, 0.01, 0.02]]
    >>> adjust_pvalues(P, "holm").round(3).tolist()
    [[0.03, 0.06, 0.06], [0.2, 0.03, 0.04]]
    >>> import numpy as np
    >>> adjust_pvalues(np.transpose(P), "holm", axis=0).T.round(3).tolist()
    [[0.03, 0.06, 0.06], [0.2, 0.03, 0.04]]
    """
    x = _as_pvalues(p)
    method = choice(method, "method", CORRECTIONS)
    ax = _axis(axis, x.ndim)
    m = x.size if ax is None else x.shape[ax]

    if method in ("bonferroni", "none", "sidak"):  # elementwise: the layout does not matter
        order = "F" if x.flags.f_contiguous and not x.flags.c_contiguous else "C"
        flat = np.ravel(x, order=order)  # a view unless x is neither C- nor F-contiguous
        out = np.empty(x.shape, order=order)
        if method == "sidak":
            state = K.mt_check(flat)
            if state == 0:
                raise _invalid(x)
            if state == 2:  # some p = 1: log1p(-1) = -inf, adjusted = 1 (errstate costs µs)
                with np.errstate(divide="ignore"):
                    return np.negative(np.expm1(m * np.log1p(-x)), out=out)
            return np.negative(np.expm1(m * np.log1p(-x)), out=out)
        if method == "bonferroni" and flat.size <= _small.ELEMENTWISE:  # numpy, bit-identical (no numba dispatch)
            if not _small.bonferroni(flat, float(m), np.ravel(out, order=order)):
                raise _invalid(x)
            return out
        if not K.mt_elementwise(flat, float(m), method == "bonferroni", np.ravel(out, order=order)):
            raise _invalid(x)
        return out

    # families as the C-contiguous rows of a (n_families, m) array
    if ax is None or ax == x.ndim - 1:
        moved = x
    else:
        moved = np.moveaxis(x, ax, -1)
    rows = np.ascontiguousarray(moved).reshape(-1, m)
    out = np.empty(rows.shape)
    if not _rank_based_threads(rows, method, out):
        raise _invalid(x)
    if ax is None:
        return out.reshape(x.shape)
    out = out.reshape(moved.shape)
    return out if moved is x else np.moveaxis(out, -1, ax)
