"""Multiple-testing corrections across background pairs (SPEC §3), vectorized numpy.

Family-wise error: ``"bonferroni"``, ``"sidak"``, ``"holm"``, ``"holm-sidak"``, ``"hochberg"``.
False discovery rate: ``"bh"`` (Benjamini–Hochberg), ``"by"`` (Benjamini–Yekutieli).
``"none"`` returns the p-values unchanged.  Adjusted p-values keep the input order and are
capped at 1; they agree with ``statsmodels.stats.multitest.multipletests``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipcausal.stats._validate import choice

__all__ = ["adjust_pvalues", "CORRECTIONS"]

CORRECTIONS = ("bonferroni", "sidak", "holm", "holm-sidak", "hochberg", "bh", "by", "none")


def _as_pvalues(p: Any) -> np.ndarray:
    if isinstance(p, (str, bytes)):
        raise TypeError("`p` must be an array of p-values, got a string")
    arr = np.asarray(p)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`p` must hold numbers, got dtype {arr.dtype}")
    if arr.dtype != np.float64:
        arr = arr.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(f"`p` must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("`p` must not be empty")
    # one pass for the common case (NaN fails both comparisons); details only on failure
    if not np.logical_and(arr >= 0.0, arr <= 1.0).all():
        if not np.isfinite(arr).all():
            raise ValueError("`p` must be finite (no NaN or inf)")
        raise ValueError("`p` must lie in [0, 1]")
    return arr


def adjust_pvalues(p: Any, method: str = "bonferroni") -> np.ndarray:
    """Adjust p-values for multiple testing.

    Parameters
    ----------
    p : array_like, shape (m,)
        Raw p-values in [0, 1].
    method : str
        One of ``CORRECTIONS`` (module docstring).

    Returns
    -------
    numpy.ndarray
        Adjusted p-values in the input order; reject H0_k when ``adjusted[k] <= alpha``.

    Examples
    --------
    >>> from ipcausal import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    x = _as_pvalues(p)
    method = choice(method, "method", CORRECTIONS)
    m = x.size
    if method == "none":
        return x.copy()
    if method == "bonferroni":
        return np.minimum(x * m, 1.0)
    if method == "sidak":
        with np.errstate(divide="ignore"):
            return -np.expm1(m * np.log1p(-x))

    order = np.argsort(x, kind="stable")
    xs = x[order]
    out = np.empty(m, dtype=np.float64)
    if method in ("holm", "holm-sidak"):
        k = m - np.arange(m)  # m, m-1, ..., 1
        if method == "holm":
            adj = xs * k
        else:
            with np.errstate(divide="ignore"):
                adj = -np.expm1(k * np.log1p(-xs))
        adj = np.minimum(np.maximum.accumulate(adj), 1.0)
    elif method == "hochberg":
        k = m - np.arange(m)
        adj = np.minimum(np.minimum.accumulate((xs * k)[::-1])[::-1], 1.0)
    else:  # bh, by
        ranks = np.arange(1, m + 1)
        factor = m / ranks
        if method == "by":
            factor = factor * np.sum(1.0 / ranks)
        adj = np.minimum(np.minimum.accumulate((xs * factor)[::-1])[::-1], 1.0)
    out[order] = adj
    return out
