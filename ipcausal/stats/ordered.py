"""Tests over each prompt's k responses: an ordered trend across levels, heterogeneity across cues.

Both take ``y`` with one row per prompt and one column per label (a level of an ordered
background, or a cue that signals the background) and share the joint test's randomisation
(:func:`ipcausal.stats.joint.westfall_young`, SPEC §8 and §10): under H0 each prompt's k
responses are exchangeable across the k labels, the unit of randomisation is the prompt, and
every prompt's labels are permuted independently (all k! relabelings equally likely).  The
relabeling tables and the random stream are the joint test's (:mod:`._kernels.labels`); the
p-value is exact by enumeration of the (k!)^n relabelings when there are few of them, else
Monte Carlo with p = (b + 1)/(L + 1), b the relabelings at least as extreme of L.

* :func:`trend_test` — ordered levels with scores c_1 < … < c_k: statistic
  ``T = Σ_prompts Σ_b (c_b − c̄) · y[prompt, b]`` (a Page-type test).  It spends all its power
  on one direction of change along the order, where the C(k, 2) pairwise tests spread theirs.
* :func:`heterogeneity_test` — several cues for one background, ``y[prompt, cue]`` the Δ of
  that prompt under that cue: statistic ``Σ_cues (mean_cue − overall mean)²``, H0 "the cue
  does not matter".

Prompts whose k responses are all equal add the same to every relabeling and are dropped
before the tables are built (reported as ``n_constant``).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats import joint as _joint
from ipcausal.stats._threads import n_threads
from ipcausal.stats._validate import ALTERNATIVES, MAX_RESAMPLES, as_array, as_generator, choice, positive_int, seed_from
from ipcausal.stats.results_ordered import HeterogeneityTestResult, TrendTestResult

_K = lazy_module("ipcausal.stats._kernels.ordered")  # numba is imported on the first kernel call
_L = lazy_module("ipcausal.stats._kernels.labels")

__all__ = ["trend_test", "heterogeneity_test", "METHODS"]

METHODS = _joint.METHODS
DEFAULT_RESAMPLES = _joint.DEFAULT_RESAMPLES
MAX_LABELS = 8  # 8! relabelings per prompt is the most one draw of the kernels covers
_REL_TOL = 1e-9


def _as_matrix(y: Any, what: str) -> np.ndarray:
    """``y`` as a finite float64 (n ≥ 1, 2 ≤ k ≤ 8) array; ``what`` names the columns."""
    arr = as_array(y, "y", f"a 2-D array (prompts × {what})")
    if arr.dtype.kind not in "iufb":
        raise TypeError(f"`y` must hold numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"`y` must be 2-D (prompts × {what}), got an array of shape {arr.shape}")
    n, k = arr.shape
    if not 2 <= k <= MAX_LABELS:
        raise ValueError(f"`y` needs between 2 and {MAX_LABELS} {what} (columns), got {k}")
    if n < 1:
        raise ValueError("`y` needs at least one prompt (row)")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise ValueError(f"`y` must be finite; NaN or inf in {rows.size} row(s), by index {rows[:10].tolist()}")
    return arr


def _as_level_scores(scores: Any, k: int) -> np.ndarray:
    if scores is None:
        return np.arange(1.0, k + 1.0)
    c = as_array(scores, "scores", f"a 1-D array of {k} increasing numbers")
    if c.dtype.kind not in "iuf":
        raise TypeError(f"`scores` must hold numbers, got dtype {c.dtype}")
    if c.ndim != 1 or c.size != k:
        raise ValueError(f"`scores` must hold one number per level of `y` ({k}), got shape {c.shape}")
    c = c.astype(np.float64)
    if not np.isfinite(c).all() or not (np.diff(c) > 0).all():
        raise ValueError(f"`scores` must be finite and strictly increasing (c_1 < … < c_k), got {c.tolist()}")
    return c


def _spread(a: np.ndarray) -> float:
    """max |a| (1 when a is all zero): the unit the tests standardise by."""
    m = float(np.max(np.abs(a))) if a.size else 0.0
    return m if m > 0 else 1.0


def _col_means(arr: np.ndarray) -> np.ndarray:
    """Column means without overflow near the float maximum."""
    s = _spread(arr)
    return (arr / s).mean(axis=0) * s


def _finite(value: float, what: str) -> float:
    if not math.isfinite(value):
        raise ValueError(f"`y`: {what} overflows the float range at this scale of `y` and `scores`; "
                         "divide them by a constant (the p-value does not change)")
    return value


def _common(method: Any, n_resamples: Any, rng: Any) -> tuple[str, int, np.random.Generator]:
    method = choice(method, "method", METHODS)
    L = DEFAULT_RESAMPLES if n_resamples is None else positive_int(n_resamples, "n_resamples", maximum=MAX_RESAMPLES)
    return method, L, as_generator(rng)  # validated here, drawn from only on the Monte Carlo route


def _group(k: int, n_inf: int, perms: np.ndarray, what: str, *, width: int) -> int:
    """Prompts per table group (the joint test's plan), after checking the tables' size."""
    try:
        return _joint._plan(width + 1, n_inf, perms)[1]
    except ValueError:
        raise ValueError(f"`y` with {k} {what} and {n_inf} prompts needs relabeling tables over "
                         f"{_joint.MAX_TABLE_BYTES >> 20} MiB; use fewer prompts or {what}") from None


def _parallel(threads: int | None, n_resamples: int, radix: np.ndarray) -> bool:
    if threads is not None:
        return threads > 1
    return n_resamples * radix.size >= _joint.PARALLEL_MIN_STEPS and n_threads() > 1


def _trend_null(alternative: str) -> str:
    h1 = {"two-sided": "the responses trend with the level's score (up or down)",
          "greater": "the responses rise with the level's score",
          "less": "the responses fall with the level's score"}[alternative]
    return ("H0: the level does not matter (each prompt's k responses are exchangeable across the ordered "
            f"levels; all k! relabelings per prompt equally likely) against H1: {h1}")


def trend_test(
    y: Any,
    *,
    scores: Any = None,
    alternative: str = "two-sided",
    method: str = "auto",
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    _threads: int | None = None,
) -> TrendTestResult:
    """Test for a monotone trend across ordered levels, within prompts (a Page-type test).

    H0: the level does not matter — each prompt's k responses are exchangeable across the
    levels.  The unit of randomisation is the prompt: each prompt's k responses are permuted
    across the levels independently (all k! relabelings equally likely).  Statistic
    ``T = Σ_prompts Σ_b (c_b − c̄) · y[prompt, b]`` with the levels' scores ``c``.  Use it when
    the background is ordinal (learner English at increasing strength, a belief stated with
    increasing certainty): against a monotone effect it has more power than the C(k, 2)
    pairwise tests with a correction.  With k = 2 it is the paired sign-flip test of
    ``y[:, 1] − y[:, 0]``.

    Parameters
    ----------
    y : array_like, shape (n, k)
        One response score per prompt (row) and level (column, in the order of the levels),
        2 ≤ k ≤ 8, finite.
    scores : array_like of k numbers, optional
        The levels' scores c_1 < … < c_k (default 1, 2, …, k).
    alternative : {"two-sided", "greater", "less"}
        H1: the responses trend with the scores in either direction, rise, or fall.
    method : {"auto", "exact", "monte-carlo"}
        ``"exact"`` enumerates all (k!)^n relabelings (at most 10^8, counting only prompts
        whose responses are not all equal); ``"auto"`` does so up to 200,000, else Monte Carlo.
    n_resamples : int, optional
        Monte Carlo relabelings L (default 100,000); p = (b + 1)/(L + 1).
    rng : int, numpy.random.Generator or None
        Seed or generator for Monte Carlo (an int makes the result reproducible, identical on
        any number of threads).

    Returns
    -------
    TrendTestResult
        ``statistic`` T, ``pvalue``, ``slope`` (the mean within-prompt least-squares slope of
        y on the scores), ``level_means``, ``method``, ``n_resamples``, ``seed``.

    See Also
    --------
    ipcausal.stats.joint.westfall_young : the pairwise tests of the same data, jointly.

    Notes
    -----
    For the study layer: a PairSet whose backgrounds are ordered becomes ``y`` by putting
    each prompt's score under each level in one row (``prompt_id`` × background, columns in
    the levels' order); the trend row of a Report is this function's result.

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats.ordered import trend_test
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=(60, 3)) + rng.normal(size=(60, 1))  # a prompt effect
    >>> y += 0.3 * np.arange(3)                                   # responses rise with the level
    >>> res = trend_test(y, rng=1, n_resamples=9_999)
    >>> res.method, res.pvalue < 0.01, round(res.slope, 2) > 0
    ('monte-carlo', True, True)
    >>> res = trend_test([[1, 2, 3], [2, 3, 1]], method="exact")  # all 6² = 36 relabelings
    >>> res.statistic, round(res.pvalue * 36)                      # T = 2 − 1; 26 reach |T*| ≥ 1
    (1.0, 26)
    """
    arr = _as_matrix(y, "levels")
    n, k = arr.shape
    c = _as_level_scores(scores, k)
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    method, L, gen = _common(method, n_resamples, rng)
    # standardised scores and responses (p(a·y) = p(y) at any scale: no square over- or underflows)
    ws, ys = _spread(c - c.mean()), _spread(arr)
    w = (c - c.mean()) / ws
    t_std = float(((arr / ys) @ w).sum())
    if 1e-100 <= ws * ys <= 1e100 and 1e-100 <= ws <= 1e100:  # as written, in the data's units
        t, slope = float((arr @ (c - c.mean())).sum()), float((arr @ (c - c.mean())).sum()) / (
            n * float((c - c.mean()) @ (c - c.mean())))
    else:
        t = _finite(t_std * ws * ys, "the trend statistic T")
        slope = _finite(t_std / (n * float(w @ w)) * ys / ws, "the slope")
    common = dict(statistic=t, alternative=alternative, n=n, k=k, null_hypothesis=_trend_null(alternative),
                  scores=tuple(c.tolist()), slope=slope,
                  level_means=tuple(_col_means(arr).tolist()))
    informative = np.ptp(arr, axis=1) > 0
    yi = arr[informative] / ys
    n_inf = int(yi.shape[0])
    if n_inf == 0:
        return TrendTestResult(pvalue=1.0, method="exact-enumeration", n_resamples=None, pvalue_se=0.0,
                               n_constant=n, **common)
    perms = np.array(list(itertools.permutations(range(k))), dtype=np.int64)
    n_perm = perms.shape[0]
    n_total, use_exact = _joint._n_relabelings(n_perm, n_inf, method)
    group = _group(k, n_inf, perms, "levels", width=1)
    v = np.zeros((n_inf, n_perm))  # each prompt's contribution to T under each relabeling
    for b in range(k):
        v += w[b] * yi[:, perms[:, b]]
    tab, radix = _K.value_tables(v, group)
    rmax = n_perm**group
    t_inf = float(v[:, 0].sum())  # perms[0] is the identity
    eps = _REL_TOL * max(float(np.ptp(v, axis=1).sum()), np.finfo(np.float64).tiny)
    xa, xg, xl = abs(t_inf) - eps, t_inf - eps, t_inf + eps
    pick = {"two-sided": 0, "greater": 1, "less": 2}[alternative]
    if use_exact:
        counts = _K.trend_exact_counts(tab, radix, rmax, xa, xg, xl)
        p, se, L_used, seed = float(counts[pick]) / float(n_total), 0.0, None, None
    else:
        seed = seed_from(gen)
        kern = _K.trend_counts_parallel if _parallel(_threads, L, radix) else _K.trend_counts
        counts = kern(tab, radix, rmax, xa, xg, xl, L, seed)
        p = (1.0 + float(counts[pick])) / (L + 1.0)
        se, L_used = math.sqrt(p * (1.0 - p) / (L + 1.0)), L
    return TrendTestResult(pvalue=min(p, 1.0), method="exact-enumeration" if use_exact else "monte-carlo",
                           n_resamples=L_used, pvalue_se=se, n_constant=n - n_inf, seed=seed, **common)


def heterogeneity_test(
    y: Any,
    *,
    method: str = "auto",
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    _threads: int | None = None,
) -> HeterogeneityTestResult:
    """Test whether the effect differs between cues, within prompts.

    For designs where each prompt carries every cue once (the background signalled by
    spelling, by vocabulary, by dialect grammar, by a stated origin …): ``y[prompt, cue]`` is
    that prompt's Δ under that cue.  H0: the cue does not matter — each prompt's k values are
    exchangeable across the cues.  The unit of randomisation is the prompt: the cue labels of
    each prompt are permuted independently (all k! relabelings equally likely).  Statistic
    ``Σ_cues (mean_cue − overall mean)²``; large values speak against H0.  A small p says
    which cue carries the effect matters: report the effect per cue, not one pooled number.

    Parameters
    ----------
    y : array_like, shape (n, k)
        One value per prompt (row) and cue (column), 2 ≤ k ≤ 8, finite.
    method : {"auto", "exact", "monte-carlo"}
        As in :func:`trend_test`.
    n_resamples : int, optional
        Monte Carlo relabelings L (default 100,000); p = (b + 1)/(L + 1).
    rng : int, numpy.random.Generator or None
        Seed or generator for Monte Carlo.

    Returns
    -------
    HeterogeneityTestResult
        ``statistic``, ``pvalue``, ``cue_means``, ``overall_mean``, ``method``, ``n_resamples``.

    Notes
    -----
    For the study layer: with a cue column in the PairSet, ``y`` has one row per prompt and
    one column per cue (the Δ of that prompt's pair under that cue); prompts that lack a cue
    cannot enter (the design needs every cue once per prompt).

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats.ordered import heterogeneity_test
    >>> rng = np.random.default_rng(0)
    >>> d = rng.normal(size=(80, 2)) + rng.normal(size=(80, 1))  # Δ under two cues
    >>> d[:, 1] += 0.6                                             # the second cue moves Δ more
    >>> res = heterogeneity_test(d, rng=1, n_resamples=9_999)
    >>> res.pvalue < 0.01, res.cue_means[1] > res.cue_means[0]
    (True, True)
    >>> heterogeneity_test([[0, 1], [0, 1]], method="exact").pvalue  # 4 relabelings listed
    0.5
    """
    arr = _as_matrix(y, "cues")
    n, k = arr.shape
    method, L, gen = _common(method, n_resamples, rng)
    ys = _spread(arr)  # the test runs on y / ys: p(a·y) = p(y) at any scale
    means = _col_means(arr)
    overall = float(means.mean())
    stat = float(((means - overall) ** 2).sum()) if 1e-100 <= ys <= 1e100 else _finite(
        float(((means / ys - overall / ys) ** 2).sum()) * ys * ys, "the statistic (a sum of squares)")
    common = dict(statistic=stat, n=n, k=k,
                  cue_means=tuple(means.tolist()), overall_mean=overall,
                  null_hypothesis=("H0: the cue does not matter (each prompt's k values are exchangeable across "
                                   "the cues; all k! relabelings per prompt equally likely) against H1: the cues' "
                                   "mean values differ"))
    informative = np.ptp(arr, axis=1) > 0
    yi = np.ascontiguousarray(arr[informative] / ys)
    n_inf = int(yi.shape[0])
    if n_inf == 0:
        return HeterogeneityTestResult(pvalue=1.0, method="exact-enumeration", n_resamples=None, pvalue_se=0.0,
                                       n_constant=n, **common)
    perms = np.array(list(itertools.permutations(range(k))), dtype=np.int64)
    n_total, use_exact = _joint._n_relabelings(perms.shape[0], n_inf, method)
    group = _group(k, n_inf, perms, "cues", width=k - 1)
    tab, radix = _L.label_tables(yi, perms, group)
    rmax = perms.shape[0] ** group
    colsum = yi.sum(axis=0)
    a = colsum - colsum[0]
    s_obs = float(((a - a.mean()) ** 2).sum())  # n² times the statistic, on the informative prompts
    scale = float(np.ptp(yi, axis=1).sum())
    thr = s_obs - _REL_TOL * max(scale * scale, np.finfo(np.float64).tiny)
    if use_exact:
        p, se, L_used, seed = float(_K.het_exact_count(tab, radix, rmax, k, thr)) / float(n_total), 0.0, None, None
    else:
        seed = seed_from(gen)
        kern = _K.het_counts_parallel if _parallel(_threads, L, radix) else _K.het_counts
        p = (1.0 + float(kern(tab, radix, rmax, k, thr, L, seed))) / (L + 1.0)
        se, L_used = math.sqrt(p * (1.0 - p) / (L + 1.0)), L
    return HeterogeneityTestResult(pvalue=min(p, 1.0), method="exact-enumeration" if use_exact else "monte-carlo",
                                   n_resamples=L_used, pvalue_se=se, n_constant=n - n_inf, seed=seed, **common)
