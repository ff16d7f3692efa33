"""Model comparisons: does one model personalize more than another? (SPEC §10)

Data: for one background pair of one case, the effect Δ of every model on the pairs every model
answered: ``delta`` of shape (n pairs, m models), column c holding Δ^c (the same pair in every
column).  The difference of models a and b on pair k is D_k = Δ_k^a − Δ_k^b.

H0 (the joint null "no model differs"): each pair's m effects are exchangeable across the models.
The randomisation permutes the m model labels of each pair, all m! relabelings equally likely,
independently per pair; the unit of randomisation is the pair, or the cluster when ``clusters``
are given (every pair of a cluster takes the same relabeling, so a cluster is relabelled whole).

**This is the randomisation of the joint test across backgrounds, with models in place of
backgrounds.**  :func:`ipcausal.stats.joint.westfall_young` takes one row per prompt and one
column per background and permutes each row's labels; here the rows are pairs and the columns
models, and its statistic mean(y_b − y_a) is the mean of D.  So :func:`compare_models` calls it
unchanged (no new kernel): on Δ itself, or, with clusters, on the per-cluster column sums — the
statistic is a sum over rows, and a cluster whose pairs share one relabeling contributes its
column sums relabelled, so a cluster is exactly one row of sums.

Outputs (:class:`ModelComparisonResult`), per model pair (a, b) with a before b in ``models``:

* ``differences``: mean D_ab = mean(Δ^a − Δ^b) over the pairs;
* ``raw_pvalues`` / ``adjusted_pvalues``: Westfall–Young step-down max-|T| over the C(m, 2)
  model pairs (family-wise error controlled exactly under the complete null, never less powerful
  than Bonferroni on the same randomisation; ``procedure="closed"`` for strong control under
  any partial null, see :mod:`ipcausal.stats.joint`);
* ``pair_pvalues`` and ``ci_low``/``ci_high``: each model pair's own paired sign-flip test of D
  (:func:`ipcausal.stats.permutation.permutation_test`, whole clusters where given) and its
  inverted interval at ``confidence_level`` (per comparison, not simultaneous);
* ``pvalue``: the omnibus p of "no model differs" (the smallest adjusted p).

When the kernel's relabeling tables would not fit (more than 8 models, or 7–8 models on hundreds of
pairs: (m!) table rows per pair), the same relabelings are drawn in numpy (uniform random
permutations per row, the same raw and step-down formulas; Monte Carlo only, step-down only).

With two models the relabeling of a pair is "keep or swap", which flips the sign of D: the joint
test is the paired sign-flip test of D, computed by ``permutation_test`` (exact at any n for
lattice data such as ratings or 0/1 correctness), and every p above is that test's p.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipcausal.stats._validate import ALTERNATIVES, as_array, as_generator, choice, open_unit, positive_int
from ipcausal.stats.multitest import adjust_pvalues
from ipcausal.stats.joint import DEFAULT_RESAMPLES, METHODS, PROCEDURES, _plan, westfall_young
from ipcausal.stats.clusters import INTERVAL_SEED, unequal_cluster_interval
from ipcausal.stats.permutation import permutation_test
from ipcausal.stats.results import Result, SignFlipResult

__all__ = ["compare_models", "ModelComparisonResult"]

_INTERVAL_SEED = INTERVAL_SEED  # fixed sign vectors for the unequal-cluster inversion (as in study/groups)


@dataclass(frozen=True)
class ModelComparisonResult(Result):
    """Result of :func:`compare_models`: the joint and pairwise comparison of m models.

    ``pvalue`` is the omnibus p of "no model differs" and ``statistic`` its statistic (the largest
    |mean D| over the model pairs; the largest oriented mean D one-sided).  Per model pair, in the
    order of ``pairs`` (names (a, b), D = Δ^a − Δ^b): ``differences`` (mean D per pair of
    observations), ``raw_pvalues`` and ``adjusted_pvalues`` (Westfall–Young, the joint
    randomisation), ``pair_pvalues`` (the pair's own sign-flip test of D) and its interval
    ``ci_low``/``ci_high`` at ``confidence_level`` (``ci_method`` says how it was inverted).
    ``pair_pvalues_holm`` are the pair tests' p adjusted by Holm: valid for each "mean D = 0" claim
    even when the models are not exchangeable (unequal spread), where the step-down's pair-level
    claims can over-reject (``benchmarks/CALIB_compare.txt``).
    ``n`` pairs, ``n_clusters`` clusters (``None`` without clusters), ``m`` models; ``unit`` is
    what a relabeling acts on; ``pvalue_se`` the Monte Carlo standard error of ``pvalue``.
    ``ranks`` is the :class:`~ipcausal.stats.ranks.RankSetResult` (simultaneous rank sets by the
    size of each model's effect, and tie groups) where the caller added it
    (:func:`ipcausal.study.compare.compare_runs` with ``ranks=True``), else ``None``.
    """

    statistic: float
    pvalue: float
    alternative: str
    method: str
    n: int
    m: int
    null_hypothesis: str
    n_resamples: int | None
    pvalue_se: float
    models: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    differences: tuple[float, ...]
    raw_pvalues: tuple[float, ...]
    adjusted_pvalues: tuple[float, ...]
    pair_pvalues: tuple[float, ...]
    ci_low: tuple[float, ...]
    ci_high: tuple[float, ...]
    confidence_level: float
    ci_method: str
    procedure: str
    pair_pvalues_holm: tuple[float, ...] = ()
    unit: str = "pairs"
    n_clusters: int | None = None
    ranks: Any = None

    def rows(self) -> list[dict[str, Any]]:
        """One plain dict per model pair: ``model_a, model_b, difference, ci_low, ci_high, pvalue,
        pvalue_adjusted`` (the columns of the bench's ``comparisons.csv``; ``pvalue`` is the raw
        Westfall–Young p, ``pair_pvalue`` the pair's own sign-flip test, ``pair_pvalue_holm`` it by Holm)."""
        return [dict(model_a=a, model_b=b, difference=d, ci_low=lo, ci_high=hi, pvalue=p, pvalue_adjusted=q,
                     pair_pvalue=pp, pair_pvalue_holm=ph)
                for (a, b), d, lo, hi, p, q, pp, ph in zip(self.pairs, self.differences, self.ci_low, self.ci_high,
                                                          self.raw_pvalues, self.adjusted_pvalues, self.pair_pvalues,
                                                          self.pair_pvalues_holm)]


def _null_text(alternative: str, unit: str) -> str:
    h1 = {"two-sided": "some pair of models differs (mean Δ^a − Δ^b ≠ 0)",
          "greater": "mean(Δ^a − Δ^b) > 0 for some pair of models (a, b)",
          "less": "mean(Δ^a − Δ^b) < 0 for some pair of models (a, b)"}[alternative]
    return (f"H0: no model differs (each {unit[:-1]}'s effects Δ are exchangeable across the models; all m! "
            f"relabelings of the models per {unit[:-1]} equally likely) against H1: {h1}")


def _as_delta(delta: Any) -> np.ndarray:
    arr = as_array(delta, "delta", "a 2-D array of effects Δ (pairs × models)")
    if arr.dtype.kind not in "iufb":
        raise TypeError(f"`delta` must hold numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"`delta` must be 2-D (pairs × models), got an array of shape {arr.shape}")
    n, m = arr.shape
    if m < 2:
        raise ValueError(f"`delta` needs at least 2 models (columns), got {m}")
    if n < 2:
        raise ValueError(f"`delta` needs at least 2 pairs (rows), got {n}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise ValueError(f"`delta` must be finite: keep only the pairs every model answered; {rows.size} row(s) "
                         f"lack a finite Δ, e.g. rows {rows[:10].tolist()}")
    return arr


def _names(models: Any, m: int) -> tuple[str, ...]:
    if models is None:
        return tuple(f"model {c}" for c in range(m))
    if isinstance(models, (str, bytes)) or not hasattr(models, "__iter__"):
        raise TypeError("`models` must be a sequence of model names, one per column of `delta`")
    names = tuple(str(x) for x in models)
    if len(names) != m:
        raise ValueError(f"`models` must name each of the {m} columns of `delta`, got {len(names)} names")
    if len(set(names)) != m:
        raise ValueError(f"`models` names a model twice: {list(names)}")
    return names


def _cluster_codes(clusters: Any, n: int) -> np.ndarray | None:
    if clusters is None:
        return None
    if isinstance(clusters, (str, bytes)) or not hasattr(clusters, "__len__"):
        raise TypeError("`clusters` must be a sequence of labels, one per row of `delta`")
    if len(clusters) != n:
        raise ValueError(f"`clusters` must have one label per row of `delta` ({n}), got {len(clusters)}")
    _, codes = np.unique(np.asarray([str(c) for c in clusters], dtype=object), return_inverse=True)
    if codes.max() + 1 < 2:
        raise ValueError("`clusters` puts every pair in one cluster; a test needs >= 2 clusters")
    return codes.astype(np.int64)


def _unequal_interval(v: np.ndarray, w: np.ndarray, span: float, method: str, n_resamples: int,
                      level: float, pvalue: float | None = None) -> tuple[float, float]:
    """Interval for the per-pair mean of D with clusters of unequal sizes ``w``: the inverted
    cluster-sum test (:func:`ipcausal.stats.clusters.unequal_cluster_interval`); ``pvalue``, the
    pair's reported two-sided p, decides δ = 0 (on the Monte Carlo route the inversion's own sign
    vectors could decide it otherwise)."""
    mc = "monte-carlo" if method == "monte-carlo" else "auto"
    return unequal_cluster_interval(v, w, span, method=mc, n_resamples=n_resamples, level=level,
                                    seed=_INTERVAL_SEED, pvalue=pvalue)


def compare_models(
    delta: Any,
    *,
    models: Any = None,
    clusters: Any = None,
    alternative: str = "two-sided",
    method: str = "auto",
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    confidence_level: float = 0.95,
    procedure: str = "step-down",
) -> ModelComparisonResult:
    """Compare m models' effects on the same pairs: the joint test and every pair of models.

    H0 (joint): no model differs, i.e. each pair's m effects are exchangeable across the models.
    The unit of randomisation is the pair (the cluster with ``clusters``): its m model labels are
    permuted, all m! relabelings equally likely — the Westfall–Young joint test of
    :func:`ipcausal.stats.westfall_young` with models in place of backgrounds (module docstring).  Per
    model pair (a, b): D = Δ^a − Δ^b, its Westfall–Young adjusted p, and the paired sign-flip
    test of D with its inverted interval.  With two models everything is the paired sign-flip
    test of D (exact at any n on a lattice).

    Parameters
    ----------
    delta : array_like, shape (n, m)
        Δ per pair (row) and model (column), finite: only the pairs every model answered.
    models : sequence of str, optional
        The models' names, one per column (default ``"model 0"``, ``"model 1"``, …).
    clusters : sequence, optional
        A cluster label per row (e.g. the question of each pair); a cluster is relabelled whole.
    alternative : {"two-sided", "greater", "less"}
        H1 per model pair (a, b): mean(Δ^a − Δ^b) ≠ 0, > 0 or < 0.
    method : {"auto", "exact", "monte-carlo"}
        ``"exact"`` enumerates all (m!)^n relabelings (two models: the exact sign-flip routes);
        ``"auto"`` does so when cheap, else Monte Carlo with p = (b + 1)/(L + 1).  With m ≥ 3,
        ``"exact"`` binds the joint test; each pair's own test is exact where feasible.
    n_resamples : int, optional
        Monte Carlo relabelings L (default 100,000).
    rng : int, numpy.random.Generator or None
        Seed or generator for Monte Carlo.
    confidence_level : float
        Level of each model pair's interval for mean D (per comparison).
    procedure : {"step-down", "closed"}
        The Westfall–Young form for m ≥ 3 (:func:`ipcausal.stats.westfall_young`).

    Returns
    -------
    ModelComparisonResult

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats.models import compare_models
    >>> rng = np.random.default_rng(0)
    >>> delta = rng.normal(size=(60, 3))   # Δ of three models on the same 60 pairs
    >>> delta[:, 2] += 1.0                  # the third model personalizes more
    >>> res = compare_models(delta, models=["A", "B", "C"], rng=1, n_resamples=9_999)
    >>> res.pairs
    (('A', 'B'), ('A', 'C'), ('B', 'C'))
    >>> [p < 0.05 for p in res.adjusted_pvalues]
    [False, True, True]
    >>> ratings = np.rint(2 * delta[:, :2])  # integer Δ: the exact lattice route at any n
    >>> two = compare_models(ratings, models=["A", "B"], method="exact")
    >>> two.method, two.pvalue == two.pair_pvalues[0]
    ('exact-lattice', True)
    """
    arr = _as_delta(delta)
    n, m = arr.shape
    names = _names(models, m)
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    method = choice(method, "method", METHODS)
    procedure = choice(procedure, "procedure", PROCEDURES)
    n_resamples = DEFAULT_RESAMPLES if n_resamples is None else positive_int(n_resamples, "n_resamples")
    level = open_unit(confidence_level, "confidence_level")
    gen = as_generator(rng)
    codes = _cluster_codes(clusters, n)

    if codes is None:
        rows, sizes, unit, n_clusters = arr, np.ones(n), "pairs", None
    else:  # a cluster relabelled whole is one row of its column sums
        n_clusters = int(codes.max()) + 1
        rows = np.zeros((n_clusters, m))
        np.add.at(rows, codes, arr)
        sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
        unit = "clusters"
    equal = bool(np.all(sizes == sizes[0]))
    fam = list(itertools.combinations(range(m), 2))

    tests: list[SignFlipResult] = []
    lows: list[float] = []
    highs: list[float] = []
    # with m >= 3 the pair tests are exact where feasible ("exact" binds the joint test)
    pair_method = method if m == 2 or method == "monte-carlo" else "auto"
    for a, b in fam:
        v = rows[:, a] - rows[:, b]
        res = permutation_test(v, alternative=alternative, method=pair_method, n_resamples=n_resamples, rng=gen,
                               confidence_level=level)
        tests.append(res)
        if equal:
            lows.append(res.ci_low / sizes[0])
            highs.append(res.ci_high / sizes[0])
        else:
            span = float(np.max(np.abs(arr[:, a] - arr[:, b]))) + 1e-12
            lo, hi = _unequal_interval(v, sizes, span, method, n_resamples, level,
                                       pvalue=res.pvalue if alternative == "two-sided" else None)
            lows.append(lo)
            highs.append(hi)
    ci_method = tests[0].ci_method if equal else "inversion of the cluster-sum test (bisection, fixed sign vectors)"
    diffs = tuple(float(np.mean(arr[:, a] - arr[:, b])) for a, b in fam)
    own = tuple(float(t.pvalue) for t in tests)
    holm = tuple(float(p) for p in adjust_pvalues(np.array(own), method="holm"))
    common = dict(alternative=alternative, n=n, m=m, null_hypothesis=_null_text(alternative, unit), models=names,
                  pairs=tuple((names[a], names[b]) for a, b in fam), differences=diffs, pair_pvalues=own,
                  pair_pvalues_holm=holm,
                  ci_low=tuple(lows), ci_high=tuple(highs), confidence_level=level, ci_method=ci_method,
                  unit=unit, n_clusters=n_clusters)
    if m == 2:  # keep-or-swap per unit = the sign flip of D: the paired test is the joint test
        t = tests[0]
        stat = abs(diffs[0]) if alternative == "two-sided" else (diffs[0] if alternative == "greater" else -diffs[0])
        return ModelComparisonResult(statistic=stat, pvalue=t.pvalue, method=t.method, n_resamples=t.n_resamples,
                                     pvalue_se=t.pvalue_se, raw_pvalues=own, adjusted_pvalues=own,
                                     procedure="paired sign-flip", **common)
    if _fits_kernel(rows):
        # westfall_young's pair (b, a) has statistic mean(y_a − y_b): D oriented a − b
        wy = westfall_young(rows, pairs=[(b, a) for a, b in fam], alternative=alternative, n_resamples=n_resamples,
                            rng=gen, method=method, procedure=procedure)
        stat, p_omni, route, L, se = float(wy.statistic), float(wy.pvalue), wy.method, wy.n_resamples, wy.pvalue_se
        raw, adj = wy.raw_pvalues, wy.adjusted_pvalues
    else:  # too many models for the kernel's tables: the same randomisation drawn in numpy
        if method == "exact" or procedure == "closed":
            raise ValueError(f"`delta` has {m} models: (m!)^n relabelings cannot be enumerated and the closed "
                             "form needs the joint test's tables; use method='auto' or 'monte-carlo' with "
                             "procedure='step-down'")
        raw, adj = _step_down_numpy(rows, fam, alternative, n_resamples, gen)
        p_omni, route, L = float(min(adj)), "monte-carlo", n_resamples
        se = math.sqrt(p_omni * (1 - p_omni) / (L + 1))
        stat = float(np.max(_oriented(rows.sum(0), fam, alternative))) / rows.shape[0]
    stat *= rows.shape[0] / n  # the joint statistic is per row (cluster): per pair here
    return ModelComparisonResult(statistic=stat, pvalue=p_omni, method=route, n_resamples=L, pvalue_se=float(se),
                                 raw_pvalues=tuple(float(p) for p in raw),
                                 adjusted_pvalues=tuple(float(p) for p in adj),
                                 procedure="step-down" if procedure == "step-down" else "closed", **common)


def _fits_kernel(rows: np.ndarray) -> bool:
    """Whether :func:`westfall_young`'s relabeling tables fit (at most 8 models, 64 MiB of tables)."""
    n_inf = int((np.ptp(rows, axis=1) > 0).sum())
    if rows.shape[1] > 8:
        return False
    try:
        _plan(rows.shape[1], n_inf)
    except ValueError:
        return False
    return True


def _oriented(colsum: np.ndarray, fam: list[tuple[int, int]], alternative: str) -> np.ndarray:
    """Σ (Δ^a − Δ^b) per model pair, oriented: |·| two-sided, −· for "less" (last axis = models)."""
    s = np.stack([colsum[..., a] - colsum[..., b] for a, b in fam], axis=-1)
    return np.abs(s) if alternative == "two-sided" else (s if alternative == "greater" else -s)


def _step_down_numpy(rows: np.ndarray, fam: list[tuple[int, int]], alternative: str, n_resamples: int,
                     gen: np.random.Generator, chunk: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Westfall–Young step-down (raw pooled, adjusted) p by Monte Carlo relabelings drawn in numpy.

    The formulas of :func:`westfall_young` (raw p pooled over every model pair's statistic, which
    share one null law; adjusted p monotone and never below raw), with each relabeling a uniform
    random permutation of every row's m entries (argsort of uniforms).
    """
    n, m = rows.shape
    obs = _oriented(rows.sum(0), fam, alternative)
    eps = 1e-9 * max(float(np.ptp(rows, axis=1).sum()), np.finfo(np.float64).tiny)
    order = np.argsort(-obs, kind="stable")
    thr = obs[order] - eps
    all_pairs = list(itertools.combinations(range(m), 2))
    two = alternative == "two-sided"

    def pool(colsum: np.ndarray) -> np.ndarray:  # every pair's statistic (both orientations one-sided)
        s = _oriented(colsum, all_pairs, "greater")
        return np.abs(s) if two else np.concatenate([s, -s], axis=-1)

    c_obs = (pool(rows.sum(0))[None, :] >= thr[:, None]).sum(1).astype(np.float64)
    hits = np.zeros(len(fam))
    sd = np.zeros(len(fam))
    done = 0
    while done < n_resamples:
        c = min(chunk, n_resamples - done)
        perm = np.argsort(gen.random((c, n, m)), axis=2)
        colsum = np.take_along_axis(np.broadcast_to(rows, (c, n, m)), perm, axis=2).sum(1)  # (c, m)
        pl = pool(colsum)
        hits += (pl[:, None, :] >= thr[None, :, None]).sum((0, 2))
        t = _oriented(colsum, fam, alternative)[:, order]
        u = np.maximum.accumulate(t[:, ::-1], axis=1)[:, ::-1]  # max over the pairs ranked i..last
        sd += (u >= thr[None, :]).sum(0)
        done += c
    size = len(all_pairs) * (1 if two else 2)
    raw_sorted = np.minimum((c_obs + hits) / (size * (n_resamples + 1.0)), 1.0)
    adj_sorted = np.maximum(np.minimum(np.maximum.accumulate((1.0 + sd) / (n_resamples + 1.0)), 1.0), raw_sorted)
    raw = np.empty(len(fam))
    adj = np.empty(len(fam))
    raw[order] = raw_sorted
    adj[order] = adj_sorted
    return raw, adj

