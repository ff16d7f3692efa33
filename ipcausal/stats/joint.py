"""The joint test across backgrounds: Westfall–Young step-down max-T on per-prompt relabelings (SPEC §8).

Data: one score per prompt and background, ``y`` of shape (n prompts, k backgrounds).  The
background pairs (a, b) share responses (SAE–AAE and SAE–ESL both use the SAE essay), so their
tests are dependent.  Under H0 "no background matters" the k scores of a prompt are
exchangeable; the randomisation permutes each prompt's k labels independently (all k!
relabelings per prompt equally likely, the unit of randomisation is the prompt).

Statistic of pair (a, b): the mean difference ``mean(y[:, b] − y[:, a])`` (its absolute value
two-sided).  Not studentized, on purpose: a relabeling treats every background alike, so every
pair's statistic has the same null distribution, and max-|T| already weighs the pairs equally;
it is also the statistic of the per-pair sign-flip test (so integer scores stay integer).

Outputs (``WestfallYoungResult``):

* raw p per pair, from the same randomisation.  Since all pairs' statistics share one null
  law (relabeling the columns maps one pair onto another), each relabeling yields m (two-sided;
  2m one-sided, both orientations) draws from it, and the raw p of pair j is
  ``(c_j + #{pooled draws ≥ T_j}) / (pool · (L + 1))`` with ``c_j`` the observed statistics
  ≥ T_j.  This is an exact Monte Carlo p-value: the draws are the cosets of the column
  relabelings, and the observed data are uniform among them under H0.
* adjusted p (step-down max-T, Westfall & Young 1993, algorithm 2.8):
  ``(1 + #{max over the pairs ranked ≥ j of T* ≥ T_(j)}) / (L + 1)``, made monotone and never
  below the pair's raw p (on the exact route it never is; Monte Carlo noise could make it so).
* omnibus p for "no background matters" = the smallest adjusted p (single-step max-T).

Never less powerful than Bonferroni: on the exact route always, and on the Monte Carlo route
for the default family (all pairs, two-sided) for every sample of relabelings, adjusted p_j ≤
min(1, m · raw p_j) (the max over pairs is reached by at least one pair; ``c_j ≥ 1``).

The family-wise error is controlled exactly under the complete null.  Under a partial null
(some backgrounds equal, others not) the step-down rests on subset pivotality, which
relabelings across all k backgrounds do not guarantee: a background that differs strongly
widens the null of the pairs that do not involve it, so those pairs lose power (measured in
``benchmarks/CALIB_joint.txt``; conservative there, not anti-conservative).
``procedure="closed"`` avoids the assumption: closed testing over every intersection of the
pairs' nulls, each tested by permuting labels only within the backgrounds it declares
exchangeable (the connected components of its pairs), statistic max-T over its pairs;
adjusted p_j = max over the intersections containing pair j.  Its raw p_j is the pair's own
sign-flip test (labels a, b swapped per prompt).  It controls the family-wise error in the
strong sense under any configuration, costs one Monte Carlo run per partition of the
backgrounds (4 for k = 3) and is limited to 10 pairs (2^m − 1 intersections).
"""

from __future__ import annotations

import itertools
import math
import numbers
from typing import Any

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats._threads import n_threads
from ipcausal.stats._validate import ALTERNATIVES, as_array, as_generator, choice, positive_int, seed_from
from ipcausal.stats.results import WestfallYoungResult

K = lazy_module("ipcausal.stats._kernels")  # numba is imported on the first kernel call

__all__ = ["westfall_young", "METHODS"]

METHODS = ("auto", "exact", "monte-carlo")
DEFAULT_RESAMPLES = 100_000
AUTO_EXACT_MAX = 200_000  # relabelings "auto" still enumerates
MAX_EXACT = 100_000_000  # the most "exact" enumerates
MAX_TABLE_BYTES = 64 << 20
MAX_CLOSED_PAIRS = 10  # closed testing runs 2^m − 1 intersection tests
PROCEDURES = ("step-down", "closed")
GROUP_RADIX_MAX = 256  # prompts per table group: P**group <= this
PARALLEL_MIN_STEPS = 4_000_000  # resamples x groups from which two threads pay off
_REL_TOL = 1e-9


def _null_text(alternative: str) -> str:
    h1 = {"two-sided": "some pair's mean difference ≠ 0",
          "greater": "mean(y_b − y_a) > 0 for some pair (a, b)",
          "less": "mean(y_b − y_a) < 0 for some pair (a, b)"}[alternative]
    return ("H0: no background matters (each prompt's k scores are exchangeable across the "
            f"backgrounds; all k! relabelings per prompt equally likely) against H1: {h1}")


def _as_scores(y: Any) -> np.ndarray:
    arr = as_array(y, "y", "a 2-D array of scores (prompts × backgrounds)")
    if arr.dtype.kind not in "iufb":
        raise TypeError(f"`y` must hold numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"`y` must be 2-D (prompts × backgrounds), got an array of shape {arr.shape}")
    n, k = arr.shape
    if k < 2:
        raise ValueError(f"`y` needs at least 2 backgrounds (columns), got {k}")
    if n < 1:
        raise ValueError("`y` needs at least one prompt (row)")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise ValueError(f"`y` lacks a finite score for some background in {rows.size} prompt row(s); "
                         f"rows (by index): {rows[:10].tolist()}{' …' if rows.size > 10 else ''}")
    return arr


def _as_pairs(pairs: Any, k: int) -> list[tuple[int, int]]:
    if pairs is None:
        return list(itertools.combinations(range(k), 2))
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise TypeError("`pairs` must be a sequence of (a, b) column-index pairs")
    out: list[tuple[int, int]] = []
    seen: set[frozenset[int]] = set()
    for item in pairs:
        try:
            a, b = item
        except (TypeError, ValueError):
            raise ValueError(f"`pairs` entries must be (a, b) pairs of column indices, got {item!r}") from None
        for v in (a, b):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"`pairs` must hold integer column indices, got {v!r}")
            if not 0 <= v < k:
                raise ValueError(f"`pairs` index {v} is out of range for `y` with {k} columns")
        if a == b:
            raise ValueError(f"`pairs` entry {item!r} compares a background with itself")
        key = frozenset((int(a), int(b)))
        if key in seen:
            raise ValueError(f"`pairs` lists the pair {item!r} twice")
        seen.add(key)
        out.append((int(a), int(b)))
    if not out:
        raise ValueError("`pairs` must not be empty")
    return out


def _plan(k: int, n_inf: int, perms: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The relabelings (all permutations of range(k) unless given) and the prompts per table group."""
    if perms is None:
        perms = np.array(list(itertools.permutations(range(k))), dtype=np.int64)
    n_perm = perms.shape[0]
    if n_perm > K.MAX_BOUND:
        raise ValueError(f"`y` has {k} backgrounds: {n_perm} relabelings per prompt, more than one "
                         f"draw of the kernels covers ({K.MAX_BOUND}); at most 8 backgrounds")
    group = 1
    while n_perm ** (group + 1) <= GROUP_RADIX_MAX and group + 1 <= max(n_inf, 1):
        group += 1
    table_bytes = 8 * (k - 1) * n_perm**group * math.ceil(max(n_inf, 1) / group)
    if table_bytes > MAX_TABLE_BYTES:
        raise ValueError(f"`y` has {k} backgrounds: the {n_perm} relabelings per prompt need "
                         f"{table_bytes >> 20} MiB of tables; at most {MAX_TABLE_BYTES >> 20} MiB are allowed")
    return perms, group


def _n_relabelings(n_perm: int, n_inf: int, method: str) -> tuple[int | None, bool]:
    """(P^n or None when astronomically many, whether to enumerate) for ``method``."""
    n_total = n_perm**n_inf if n_inf * math.log10(n_perm) < 18 else None
    if method == "exact" and (n_total is None or n_total > MAX_EXACT):
        raise ValueError(f"`method`='exact' is not feasible here: ({n_perm})^{n_inf} relabelings "
                         f"(more than {MAX_EXACT:,}); use method='monte-carlo'")
    return n_total, method == "exact" or (method == "auto" and n_total is not None and n_total <= AUTO_EXACT_MAX)


def _closed(yi, k, fam, obs, eps, two_sided, sigma, method, n_resamples, rng, threads):
    """Closed testing: every intersection of the pairs' nulls, each by its own randomisation.

    Subset S of the family claims the backgrounds joined by its pairs are exchangeable; its
    test permutes labels only within those blocks (the connected components), statistic
    max over S.  Adjusted p_j = max over the subsets S ∋ j of p_S; the raw p_j is p_{j}, the
    pair's own sign-flip test.  Returns (raw, adjusted, omnibus, n_resamples or None).
    """
    m = len(fam)
    if m > MAX_CLOSED_PAIRS:
        raise ValueError(f"`procedure`='closed' tests all 2^m − 1 intersections: at most "
                         f"{MAX_CLOSED_PAIRS} pairs, got {m}; use procedure='step-down'")
    n_inf = yi.shape[0]
    blocks: dict[tuple[int, ...], list[int]] = {}
    for mask in range(1, 1 << m):
        root = list(range(k))

        def find(x: int) -> int:
            while root[x] != x:
                x = root[x]
            return x

        for i in range(m):
            if mask >> i & 1:
                root[find(fam[i][0])] = find(fam[i][1])
        blocks.setdefault(tuple(find(c) for c in range(k)), []).append(mask)
    # the largest relabeling group decides exact vs Monte Carlo for every subset
    plans = []
    for label, masks in blocks.items():
        perms = np.array([p for p in itertools.permutations(range(k))
                          if all(label[p[c]] == label[c] for c in range(k))], dtype=np.int64)
        plans.append((perms, masks))
    n_total, use_exact = _n_relabelings(max(p.shape[0] for p, _ in plans), n_inf, method)
    seed = None if use_exact else seed_from(rng)
    fa = np.array([a for a, _ in fam], dtype=np.int64)
    fb = np.array([b for _, b in fam], dtype=np.int64)
    p_sub = np.empty(1 << m)
    for perms, masks in plans:
        perms, group = _plan(k, n_inf, perms)
        tab, radix = K.label_tables(yi, perms, group)
        mk = np.array(masks, dtype=np.int64)
        thr = np.array([max(obs[i] for i in range(m) if q >> i & 1) for q in masks]) - eps
        args = (tab, radix, perms.shape[0] ** group, k, fa, fb, two_sided, sigma, mk, thr)
        if use_exact:
            p_sub[mk] = K.closed_exact_counts(*args) / float(perms.shape[0] ** n_inf)
        else:
            parallel = (threads > 1) if threads is not None else (
                n_resamples * radix.size >= PARALLEL_MIN_STEPS and n_threads() > 1)
            kern = K.closed_counts_parallel if parallel else K.closed_counts
            p_sub[mk] = (1.0 + kern(*args, n_resamples, seed)) / (n_resamples + 1.0)
    raw = np.array([p_sub[1 << i] for i in range(m)])
    adj = np.array([max(p_sub[q] for q in range(1, 1 << m) if q >> i & 1) for i in range(m)])
    return raw, adj, float(p_sub[(1 << m) - 1]), (None if use_exact else n_resamples)


def westfall_young(
    y: Any,
    *,
    pairs: Any = None,
    alternative: str = "two-sided",
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    method: str = "auto",
    procedure: str = "step-down",
    _threads: int | None = None,
) -> WestfallYoungResult:
    """Joint test of the background pairs: Westfall–Young step-down max-T adjusted p-values.

    H0 (the joint null): no background matters, i.e. each prompt's k scores are exchangeable
    across the backgrounds.  The unit of randomisation is the prompt: each prompt's k labels
    are permuted independently, all k! relabelings equally likely.  Controls the family-wise
    error exactly under the complete null, whatever the dependence between the pairs (shared
    responses), and is never less powerful than Bonferroni on the same randomisation.

    Parameters
    ----------
    y : array_like, shape (n, k)
        One score per prompt (row) and background (column), k ≥ 2, finite.
    pairs : sequence of (a, b) or None
        The family of column-index pairs to test; default every pair a < b.  The statistic
        of (a, b) is mean(y[:, b] − y[:, a]).
    alternative : {"two-sided", "greater", "less"}
        H1 per pair: mean difference ≠ 0, > 0 or < 0 (max-T over |T|, T or −T).
    n_resamples : int or None
        Monte Carlo relabelings L (default 100,000).
    rng : int, numpy.random.Generator or None
        Seed or generator for Monte Carlo (an int makes the result reproducible, identical on
        any number of threads).
    method : {"auto", "exact", "monte-carlo"}
        ``"exact"`` enumerates all (k!)^n relabelings (at most 10^8, counting only prompts
        whose scores are not all equal); ``"auto"`` does so up to 200,000, else Monte Carlo
        with p = (b + 1)/(L + 1).
    procedure : {"step-down", "closed"}
        ``"step-down"``: Westfall–Young step-down max-T on the relabelings of all k
        backgrounds.  ``"closed"``: closed testing, each intersection by its own relabelings
        (strong control without subset pivotality; module docstring).

    Returns
    -------
    WestfallYoungResult

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats.joint import westfall_young
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=(40, 3)) + rng.normal(size=(40, 1))  # a prompt effect, no background effect
    >>> y[:, 2] += 0.8                                            # background 2 scores higher
    >>> res = westfall_young(y, rng=1, n_resamples=9_999)
    >>> res.pairs
    ((0, 1), (0, 2), (1, 2))
    >>> [p < 0.05 for p in res.adjusted_pvalues]
    [False, True, True]
    >>> res.pvalue == min(res.adjusted_pvalues)
    True
    >>> westfall_young(y, rng=1, n_resamples=9_999, procedure="closed").adjusted_pvalues[0] > 0.05
    True
    """
    arr = _as_scores(y)
    n, k = arr.shape
    fam = _as_pairs(pairs, k)
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    method = choice(method, "method", METHODS)
    procedure = choice(procedure, "procedure", PROCEDURES)
    n_resamples = DEFAULT_RESAMPLES if n_resamples is None else positive_int(n_resamples, "n_resamples")
    rng = as_generator(rng)  # validated here, drawn from only on the Monte Carlo route
    two_sided = alternative == "two-sided"
    sigma = -1.0 if alternative == "less" else 1.0

    all_pairs = list(itertools.combinations(range(k), 2))
    index = {p: i for i, p in enumerate(all_pairs)}
    m_all = len(all_pairs)
    pa = np.array([a for a, _ in all_pairs], dtype=np.int64)
    pb = np.array([b for _, b in all_pairs], dtype=np.int64)

    # prompts whose scores are all equal contribute nothing to any statistic (dropped)
    informative = np.ptp(arr, axis=1) > 0
    yi = np.ascontiguousarray(arr[informative])
    n_inf = int(yi.shape[0])

    colsum = yi.sum(axis=0)
    sums = np.array([colsum[b] - colsum[a] for a, b in fam])  # Σ (y_b − y_a) per family pair
    pair_means = tuple(float(v) for v in arr[:, [b for _, b in fam]].mean(axis=0)
                       - arr[:, [a for a, _ in fam]].mean(axis=0))
    # the family's pool slots and observed values (pool: |S_l|, or σS_l then −σS_l)
    slot = np.empty(len(fam), dtype=np.int64)
    for i, (a, b) in enumerate(fam):
        slot[i] = index[(a, b)] if a < b else (index[(b, a)] if two_sided else m_all + index[(b, a)])
    obs = np.abs(sums) if two_sided else sigma * sums
    order = np.argsort(-obs, kind="stable")
    scale = float(np.ptp(yi, axis=1).sum()) if n_inf else 1.0
    eps = _REL_TOL * max(scale, np.finfo(np.float64).tiny)
    thr = np.ascontiguousarray(obs[order] - eps)
    fam_slots = np.ascontiguousarray(slot[order])

    # the observed relabeling's pool, for c_j (the identity's own count)
    s_all = np.array([colsum[b] - colsum[a] for a, b in all_pairs])
    pool_obs = np.abs(s_all) if two_sided else np.concatenate([sigma * s_all, -sigma * s_all])
    pool_size = pool_obs.size

    common = dict(pairs=tuple(fam), pair_statistics=pair_means, alternative=alternative, n=n, k=k,
                  null_hypothesis=_null_text(alternative), n_constant=n - n_inf,
                  statistic=float(obs.max()) / n)
    if n_inf == 0:  # every prompt scored alike by every background: nothing can differ
        ones = tuple(1.0 for _ in fam)
        return WestfallYoungResult(pvalue=1.0, raw_pvalues=ones, adjusted_pvalues=ones,
                                   method="exact-enumeration", n_resamples=None, pvalue_se=0.0,
                                   procedure=procedure, **common)
    if procedure == "closed":
        raw, adj, p_omni, L = _closed(yi, k, fam, obs, eps, two_sided, sigma, method, n_resamples, rng, _threads)
        se = 0.0 if L is None else math.sqrt(p_omni * (1 - p_omni) / (L + 1))
        return WestfallYoungResult(
            pvalue=p_omni, raw_pvalues=tuple(raw.tolist()), adjusted_pvalues=tuple(adj.tolist()),
            method="exact-enumeration" if L is None else "monte-carlo", n_resamples=L, pvalue_se=se,
            procedure=procedure, **common)

    perms, group = _plan(k, n_inf)
    n_perm = perms.shape[0]
    n_total, use_exact = _n_relabelings(n_perm, n_inf, method)
    tab, radix = K.label_tables(yi, perms, group)
    rmax = n_perm**group
    args = (tab, radix, rmax, k, pa, pb, two_sided, sigma, fam_slots, thr)
    if use_exact:
        hist, sd = K.wy_exact_counts(*args)
        raw_sorted = np.cumsum(hist)[:-1] / (pool_size * float(n_total))
        adj_sorted = sd / float(n_total)
        L = None
    else:
        seed = seed_from(rng)
        threads = _threads
        parallel = (threads > 1) if threads is not None else (
            n_resamples * radix.size >= PARALLEL_MIN_STEPS and n_threads() > 1)
        kern = K.wy_counts_parallel if parallel else K.wy_counts
        hist, sd = kern(*args, n_resamples, seed)
        c_obs = np.array([(pool_obs >= t).sum() for t in thr], dtype=np.float64)
        raw_sorted = (c_obs + np.cumsum(hist)[:-1]) / (pool_size * (n_resamples + 1.0))
        adj_sorted = (1.0 + sd) / (n_resamples + 1.0)
        L = n_resamples
    raw_sorted = np.minimum(raw_sorted, 1.0)
    # monotone in the ranks, and never below the pair's own raw p (the pooled raw p is the more
    # precise Monte Carlo estimate; both sequences rise with the rank, so the max still does)
    adj_sorted = np.maximum(np.minimum(np.maximum.accumulate(adj_sorted), 1.0), raw_sorted)
    raw = np.empty(len(fam))
    adj = np.empty(len(fam))
    raw[order] = raw_sorted
    adj[order] = adj_sorted
    p_omni = float(adj_sorted[0])
    se = 0.0 if L is None else math.sqrt(p_omni * (1 - p_omni) / (L + 1))
    return WestfallYoungResult(
        pvalue=p_omni, raw_pvalues=tuple(raw.tolist()), adjusted_pvalues=tuple(adj.tolist()),
        method="exact-enumeration" if L is None else "monte-carlo", n_resamples=L, pvalue_se=se,
        procedure=procedure, **common)
