"""Effect summaries: the mean difference with its interval, and the PB metric (SPEC §4)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats import _bootstrap
from ipcausal.stats.results import MeanCIResult, PBResult
from ipcausal.stats._validate import (
    MAX_RESAMPLES,
    as_array,
    as_generator,
    as_sample,
    choice,
    mean_sd,
    open_unit,
    positive_int,
    seed_from,
)

_special = lazy_module("scipy.special")  # imported on first use (mean_ci only)
K = lazy_module("ipcausal.stats._kernels")  # numba is imported on the first kernel call

#: Largest bootstrap table (resamples x backgrounds x dimensions) kept in memory: 2 GiB of float64.
MAX_BOOTSTRAP_CELLS = 2**28

__all__ = ["mean_ci", "personalization_bias"]


def mean_ci(d: Any, *, confidence_level: float = 0.95) -> MeanCIResult:
    """Mean of ``d`` with a Student t confidence interval.

    Examples
    --------
    >>> from ipcausal.stats import mean_ci
    >>> res = mean_ci([1.0, 2.0, 3.0, 4.0])
    >>> res.statistic, round(res.ci_low, 3), round(res.ci_high, 3)
    (2.5, 0.446, 4.554)
    """
    x = as_sample(d, "d")
    level = open_unit(confidence_level, "confidence_level")
    m, sd = mean_sd(x)  # no overflow for values near the float maximum
    half = float(_special.stdtrit(x.size - 1, 0.5 + level / 2)) * sd / math.sqrt(x.size)
    return MeanCIResult(statistic=m, ci_low=m - half, ci_high=m + half, confidence_level=level, n=int(x.size))


def _pb(means: np.ndarray) -> np.ndarray:
    # means: (..., n_backgrounds, dims) -> sqrt of the summed population variances, on means / max|means|
    # so that no square over- or underflows (a score of 1e300 gave PB = inf)
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.max(np.abs(means), axis=(-2, -1), keepdims=True)
        ok = (scale > 1e-100) & (scale < 1e100) | ~np.isfinite(scale)  # as written where nothing can overflow
        scale = np.where(ok | (scale == 0), 1.0, scale)
        return np.sqrt(np.sum(np.var(means / scale, axis=-2, ddof=0), axis=-1)) * scale[..., 0, 0]


def personalization_bias(
    values: Any,
    backgrounds: Any,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    rng: int | np.random.Generator | None = None,
    clusters: Any = None,
    bootstrap: str = "stream",
) -> PBResult:
    """Personalization bias PB(U) = sqrt(E_u ‖f̄(u) − μ(U)‖²) with a bootstrap interval.

    f̄(u) is the mean outcome of background u and μ(U) the mean of the f̄(u): PB is the
    population standard deviation (ddof = 0) of the per-background means; for a vector
    outcome, the square root of the summed per-dimension variances.  The interval is a
    percentile bootstrap: with ``clusters`` (e.g. the prompt of each response) it resamples whole
    clusters, so the responses of one prompt stay together; without, it resamples outcomes
    within each background.

    Parameters
    ----------
    values : array_like, shape (n,) or (n, dims)
        One outcome per response.
    backgrounds : array_like of str, shape (n,)
        The background of each response (at least two distinct ones).
    confidence_level : float
        Confidence level of the bootstrap interval.
    n_resamples : int
        Bootstrap resamples.
    rng : int, numpy.random.Generator or None
    clusters : array_like, shape (n,), optional
        The unit each response belongs to (its prompt); the bootstrap resamples these units.
    bootstrap : {"stream", "numpy"}
        Where the resamples' draws come from.  ``"stream"`` (the default; new after 0.1.0): one
        integer seed is drawn from ``rng`` and a numba kernel draws each resample from its own
        generator of the counter-based stream (xoshiro256**, :mod:`ipcausal.stats._kernels.bootstrap`),
        on all threads, with the same result on any number of threads.  ``"numpy"``: the draws of
        ipcausal 0.1.0 (``rng.integers`` for every resample; slower; kept for one release to
        reproduce earlier intervals).  The statistic does not depend on it; the interval's ends
        move by the bootstrap's own Monte Carlo error.

    Examples
    --------
    >>> from ipcausal import personalization_bias
    >>> pb = personalization_bias([1, 2, 3, 4, 5, 6], ["a", "a", "b", "b", "c", "c"], rng=0)
    >>> round(pb.statistic, 4)
    1.633
    """
    v = as_array(values, "values", "numeric, of shape (n,) or (n, dims)")
    if v.dtype.kind not in "iufb":
        raise TypeError(f"`values` must be numeric, got dtype {v.dtype}")
    v = v.astype(np.float64)
    if v.ndim == 1:
        v = v[:, None]
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError(f"`values` must have shape (n,) or (n, dims) with n >= 1, got {np.shape(values)}")
    if not np.all(np.isfinite(v)):
        raise ValueError("`values` must be finite (no NaN or inf)")
    if isinstance(backgrounds, (str, bytes)):
        raise TypeError("`backgrounds` must be a sequence of labels, one per value")
    try:
        b = np.asarray(backgrounds, dtype=object)
    except ValueError:
        raise ValueError("`backgrounds` is ragged: it must be a flat sequence of labels, one per value") from None
    if b.shape != (v.shape[0],):
        raise ValueError(f"`backgrounds` must have one label per value ({v.shape[0]}), got shape {b.shape}")
    if any(issubclass(t, (list, tuple, dict, set, np.ndarray)) for t in set(map(type, b.tolist()))):
        raise ValueError("`backgrounds` must be a flat sequence of labels (text or numbers), not of lists")
    level = open_unit(confidence_level, "confidence_level")
    n_resamples = positive_int(n_resamples, "n_resamples", maximum=MAX_RESAMPLES)
    bootstrap = choice(bootstrap, "bootstrap", ("stream", "numpy"))
    gen = as_generator(rng)

    labels = sorted(set(map(str, b.tolist())))
    if len(labels) < 2:
        raise ValueError(f"`backgrounds` must name at least two backgrounds, got {labels}")
    if n_resamples * len(labels) * v.shape[1] > MAX_BOOTSTRAP_CELLS:
        most = MAX_BOOTSTRAP_CELLS // (len(labels) * v.shape[1])
        raise ValueError(f"`n_resamples` must be at most {most:,} here (the bootstrap keeps every resample of "
                         f"{len(labels)} backgrounds x {v.shape[1]} dimension(s) in memory), got {n_resamples:,}")
    keys = b.astype(str)  # the labels as text (a C loop, not a Python one)
    lab_idx = np.searchsorted(np.asarray(labels), keys)
    groups = [v[lab_idx == u] for u in range(len(labels))]
    means = np.stack([g.mean(axis=0) for g in groups])  # (U, dims)
    value = float(_pb(means))

    if clusters is None and bootstrap == "stream":
        boot = _bootstrap.within_means([np.ascontiguousarray(g) for g in groups], n_resamples, seed_from(gen))
    elif clusters is None:
        boot = np.empty((n_resamples, len(labels), v.shape[1]))
        for u, g in enumerate(groups):
            for start, rows in _row_chunks(n_resamples, g.shape[0]):  # the same draws as one big call
                idx = gen.integers(0, g.shape[0], size=(rows, g.shape[0]))
                sums = np.empty((rows, v.shape[1]))
                K.gather_sums(idx, np.ascontiguousarray(g), sums, 0)
                boot[start:start + rows, u, :] = sums / g.shape[0]
    else:
        boot = _cluster_bootstrap(v, lab_idx, len(labels), clusters, n_resamples, gen, bootstrap)
    dist = _pb(boot)
    dist = dist[np.isfinite(dist)]  # a resample that lost a background entirely says nothing
    lo, hi = np.quantile(dist, [(1 - level) / 2, (1 + level) / 2])
    dims = v.shape[1]
    mean_out = {lab: (float(means[u, 0]) if dims == 1 else means[u].tolist()) for u, lab in enumerate(labels)}
    return PBResult(
        statistic=value,
        ci_low=float(lo),
        ci_high=float(hi),
        confidence_level=level,
        n_resamples=n_resamples,
        means=mean_out,
        counts={lab: int(g.shape[0]) for lab, g in zip(labels, groups)},
    )


_CHUNK_DRAWS = 1 << 22  # random indices drawn at a time (16 MB): bounded memory for any n
_CACHE_BYTES = 1 << 21  # per-cluster tables up to this size are gathered from directly


def _row_chunks(n_resamples: int, width: int) -> list[tuple[int, int]]:
    """(first row, rows) blocks of resamples with about ``_CHUNK_DRAWS`` draws each."""
    step = max(1, _CHUNK_DRAWS // max(width, 1))
    return [(r, min(step, n_resamples - r)) for r in range(0, n_resamples, step)]


def _codes(c: np.ndarray) -> tuple[np.ndarray, int]:
    """Each label's index among the sorted distinct labels (as text), as ``np.unique(c.astype(str),
    return_inverse=True)`` gives it, by hashing (no sort of every label)."""
    text = list(map(str, c.tolist()))
    index = {v: i for i, v in enumerate(sorted(set(text)))}
    return np.fromiter(map(index.__getitem__, text), dtype=np.int64, count=len(text)), len(index)


def _cluster_bootstrap(v: np.ndarray, lab_idx: np.ndarray, n_labels: int, clusters: Any, n_resamples: int,
                       gen: np.random.Generator, bootstrap: str = "stream") -> np.ndarray:
    """Per-background means (B, U, dims) over resamples of whole clusters (drawn with replacement).

    Each cluster is aggregated once (per background: its count and its totals).  ``"stream"``: the
    kernel draws and adds the clusters (:func:`ipcausal.stats._bootstrap.table_sums`).  ``"numpy"``
    (the former draws): a resample draws n_c cluster indices (the same draws, in the same order, as
    one ``gen.integers(0, n_c,
    size=(B, n_c))``, taken a block of rows at a time; int32 draws are the same numbers) and adds up
    the drawn clusters' rows (:func:`ipcausal.stats._kernels.gather_sums`) while the table fits in
    cache, else counts the draws per cluster and multiplies by the table (one BLAS product; random
    reads of a large table cost a cache miss each): O(B · n_c) time, O(n_c + chunk) memory.
    """
    if isinstance(clusters, (str, bytes)):
        raise TypeError("`clusters` must be a sequence of labels, one per value")
    c = np.asarray(clusters, dtype=object)
    if c.shape != (v.shape[0],):
        raise ValueError(f"`clusters` must have one label per value ({v.shape[0]}), got shape {c.shape}")
    ids, n_c = _codes(c)
    dims = v.shape[1]
    table = np.zeros((n_c, n_labels * (1 + dims)))  # per cluster: counts of each background, then totals
    for u in range(n_labels):
        mask = lab_idx == u
        table[:, u] = np.bincount(ids[mask], minlength=n_c)
        for d in range(dims):
            table[:, n_labels + u * dims + d] = np.bincount(ids[mask], weights=v[mask, d], minlength=n_c)
    if bootstrap == "stream":
        sums = _bootstrap.table_sums(table, n_resamples, seed_from(gen))
    else:
        sums = _numpy_sums(table, n_resamples, gen)
    count = sums[:, :n_labels]
    total = sums[:, n_labels:].reshape(n_resamples, n_labels, dims)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count[:, :, None]


def _numpy_sums(table: np.ndarray, n_resamples: int, gen: np.random.Generator) -> np.ndarray:
    """The former draws: ``gen.integers(0, n_c, size=(B, n_c))`` a block of rows at a time, added up."""
    n_c = table.shape[0]
    sums = np.empty((n_resamples, table.shape[1]))
    small = n_c < 2**31 and table.nbytes <= _CACHE_BYTES  # gather from a cached table, else count + BLAS
    for start, rows in _row_chunks(n_resamples, n_c):
        idx = gen.integers(0, n_c, size=(rows, n_c), dtype=np.int32 if n_c < 2**31 else np.int64)  # same draws
        if small:
            K.gather_sums(idx, table, sums, start)
        else:
            sums[start:start + rows] = K.draw_counts(idx, n_c) @ table
    return sums
