"""Simultaneous confidence sets for the ranks of m models by their IP effect, and their tie groups.

Data: as for :func:`ipcausal.stats.models.compare_models`, the effect Δ of every model on the
pairs every model answered, ``delta`` of shape (n pairs, m models).  θ_c is model c's mean
effect (the per-pair mean of Δ^c).  The question across models is "which models personalize
more?", so by default models are ranked by the **size** |θ_c| of their effect, whatever its
direction; rank 1 is the largest (``by="signed"`` ranks θ_c itself, rank 1 the most positive).

**Method** (Mogstad, Romano, Shaikh & Wilhelm 2024, "Inference for ranks", REStud): build
simultaneous confidence intervals for a family of linear contrasts of θ, then read each model's
rank set off the comparisons the intervals decide.  The rank of model j is
1 + #{k : |θ_k| > |θ_j|}; if every interval covers, no comparison is decided wrongly, so every
rank lies in its set at once: the sets cover **jointly** with probability ≥ the intervals' level.

* Signed: the contrasts are the C(m, 2) differences θ_a − θ_b; a is above b when the interval of
  θ_a − θ_b lies above 0.
* Size: |θ_a| > |θ_b| exactly when (θ_a − θ_b)(θ_a + θ_b) > 0, so the family is the differences
  *and* the sums θ_a + θ_b (2·C(m, 2) contrasts, all linear); a is above b when the intervals of
  θ_a − θ_b and θ_a + θ_b lie on the same side of 0.

Model j's set is [1 + #{k above j}, m − #{k below j}].  The intervals share one critical value,
the 1 − α quantile of the max-|t| statistic over the family under sign flips of the unit's
centred contributions (a Rademacher multiplier, the paired analogue of Mogstad et al.'s
bootstrap: it keeps the correlation between models that answered the same pairs, which makes
the differences far tighter than separate per-model intervals would — the reason to prefer this
construction to Klein, Wright & Wieczorek's (2020) intervals for each θ_c, which treat the
estimates as independent).  All sign vectors are enumerated when 2^units ≤ ``n_resamples``,
else ``n_resamples`` are drawn.  With ``clusters`` the unit is the cluster (its pairs' Δ summed).
The guarantee is asymptotic (many units), as for every multiplier bootstrap;
``benchmarks/calib_ranks.py`` measures the joint coverage at the bench's sizes.  With so few units
that an exact sign-flip test of one pair of models could not reach the level ((1 − level)·2^units
< 2: fewer than 6 units at 95 %), nothing is separated: every set is 1–m.

**Tie groups**: two models are *separated* when their comparison is decided (either way).  A tie
group is a largest set of models no two of which are separated (a maximal clique of the
"not separated" graph); the groups get letters a, b, c … in the order of their best model, and a
model carries the letters of every group it is in (the compact letter display of multiple
comparisons): two models share a letter exactly when the data cannot order them.
"""

from __future__ import annotations

import itertools
import math
import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipcausal.stats._validate import as_generator, choice, open_unit, positive_int
from ipcausal.stats.models import _as_delta, _cluster_codes, _names
from ipcausal.stats.results import Result

__all__ = ["rank_sets", "RankSetResult", "RANK_BY", "RANK_SEED", "tie_letters", "rank_text", "simultaneous_intervals"]

#: The seed of the rank sets' sign vectors beside a model comparison (kept apart from the comparison's draws).
RANK_SEED = 20261204

RANK_BY = ("magnitude", "signed")
"""What :func:`rank_sets` ranks: the size |θ| of each model's effect, or θ itself."""

_DEFAULT_RESAMPLES = 10_000


@dataclass(frozen=True)
class RankSetResult(Result):
    """Result of :func:`rank_sets`: each model's rank set and tie groups, jointly at ``confidence_level``.

    Per model, in the order of ``models``: ``estimates`` (θ_c, the mean effect), ``rank_low`` /
    ``rank_high`` (the rank set, 1 = the largest |θ| or, with ``by="signed"``, the largest θ) and
    ``tie_groups`` (its letters).  ``groups`` lists each letter's models.  Per model pair (a, b) in
    ``pairs``: ``diff_low``/``diff_high`` bound θ_a − θ_b, ``sum_low``/``sum_high`` bound θ_a + θ_b
    (magnitude only; else empty), all simultaneous at ``confidence_level``; ``order`` holds
    ``"a>b"``, ``"a<b"`` or ``"—"`` (not separated).  ``critical_value`` is the max-|t| quantile;
    ``method`` says whether the sign vectors were enumerated or drawn.
    """

    models: tuple[str, ...]
    estimates: tuple[float, ...]
    rank_low: tuple[int, ...]
    rank_high: tuple[int, ...]
    tie_groups: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    pairs: tuple[tuple[str, str], ...]
    diff_low: tuple[float, ...]
    diff_high: tuple[float, ...]
    sum_low: tuple[float, ...]
    sum_high: tuple[float, ...]
    order: tuple[str, ...]
    by: str
    confidence_level: float
    critical_value: float
    method: str
    n: int
    n_resamples: int | None
    null_hypothesis: str
    unit: str = "pairs"
    n_clusters: int | None = None

    def rows(self) -> list[dict[str, Any]]:
        """One plain dict per model: ``model, effect, rank_low, rank_high, rank_set, tie_group``."""
        return [dict(model=m, effect=e, rank_low=lo, rank_high=hi, rank_set=rank_text(lo, hi), tie_group=g)
                for m, e, lo, hi, g in zip(self.models, self.estimates, self.rank_low, self.rank_high,
                                           self.tie_groups)]


def rank_text(lo: int, hi: int) -> str:
    """``"2"`` for a rank known exactly, ``"1–3"`` for a set."""
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _letters(k: int) -> list[str]:
    out, size = [], 1
    while len(out) < k:
        out += ["".join(t) for t in itertools.product(string.ascii_lowercase, repeat=size)]
        size += 1
    return out[:k]


def tie_letters(separated: np.ndarray, score: np.ndarray) -> tuple[list[str], list[list[int]]]:
    """Letters per model and the maximal cliques of "not separated" (Bron–Kerbosch with pivoting).

    ``separated`` is an (m, m) boolean matrix; ``score`` orders the groups (by their best member,
    highest first).

    Examples
    --------
    >>> import numpy as np
    >>> sep = np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool)  # only models 0 and 2 are separated
    >>> tie_letters(sep, np.array([3.0, 2.0, 1.0]))
    (['a', 'ab', 'b'], [[0, 1], [1, 2]])
    """
    m = separated.shape[0]
    near = [set(int(k) for k in np.flatnonzero(~separated[j])) - {j} for j in range(m)]
    cliques: list[list[int]] = []

    def expand(r: set[int], p: set[int], x: set[int]) -> None:
        if not p and not x:
            cliques.append(sorted(r))
            return
        pivot = max(p | x, key=lambda u: len(near[u] & p))
        for v in list(p - near[pivot]):
            expand(r | {v}, p & near[v], x & near[v])
            p = p - {v}
            x = x | {v}

    expand(set(), set(range(m)), set())
    cliques.sort(key=lambda c: (-max(score[c]), -len(c), c))
    letters = _letters(len(cliques))
    per = ["".join(letters[i] for i, c in enumerate(cliques) if j in c) for j in range(m)]
    return per, cliques


def _critical_value(resid: np.ndarray, w: np.ndarray, contrasts: np.ndarray, level: float, n_resamples: int,
                    gen: np.random.Generator) -> tuple[float, str, int | None]:
    """The ``level`` quantile of max_c |t*_c| over sign vectors s (all of them when few).

    t*_c = S_c / σ*_c with S_c = Σ_u s_u r_u·c the flipped centred contributions' sum and σ*_c
    their spread about their own weighted mean, re-computed in every draw as the observed t is
    (the studentized multiplier: it carries the t statistic's heavier tails at small n).
    """
    ss = ((resid @ contrasts) ** 2).sum(0)
    live = ss > 0
    if not live.any():
        return 0.0, "exact-enumeration", None
    cl, ss = contrasts[:, live], ss[live]
    wres = w[:, None] * resid
    big_w, w2 = float(w.sum()), float((w ** 2).sum())
    units = resid.shape[0]
    ones = bool(np.all(w == 1.0))

    def maxima_of(s: np.ndarray) -> np.ndarray:
        sc = (s @ resid) @ cl  # (draws × m) first: m models, not 2·C(m, 2) contrasts, per unit
        mean = sc / big_w
        var = ss - 2.0 * mean * (sc if ones else (s @ wres) @ cl) + mean ** 2 * w2
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(var > 1e-12 * ss, np.abs(sc) / np.sqrt(np.maximum(var, 0.0)), np.where(sc == 0, 0.0, np.inf))
        return t.max(1)

    if units < 60 and (1.0 - level) * 2.0 ** units < 2.0:
        # so few units that no sign-flip test of one contrast could reach the level (the vectors ±s give
        # the same |t|): nothing is separated, as the exact test of each pair would not reject either
        return math.inf, "exact-enumeration", None
    exact = units <= 24 and 2 ** units <= n_resamples
    maxima = []
    chunk = max(1, 2 ** 22 // max(units * resid.shape[1], 1))
    if exact:
        total = 2 ** units
        for start in range(0, total, chunk):
            idx = np.arange(start, min(total, start + chunk), dtype=np.int64)
            maxima.append(maxima_of(1.0 - 2.0 * ((idx[:, None] >> np.arange(units)) & 1)))
        method, drawn = "exact-enumeration", None
    else:
        done = 0
        while done < n_resamples:
            c = min(chunk, n_resamples - done)
            maxima.append(maxima_of(np.where(gen.random((c, units)) < 0.5, -1.0, 1.0)))
            done += c
        method, drawn = "monte-carlo", n_resamples
    t = np.sort(np.concatenate(maxima))
    k = min(t.size - 1, math.ceil(level * t.size) - 1)  # the smallest t with P(max <= t) >= level
    return float(t[k]), method, drawn


def simultaneous_intervals(v: np.ndarray, w: np.ndarray, contrasts: np.ndarray, *, level: float,
                           n_resamples: int, rng: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, str,
                                                                int | None]:
    """Simultaneous intervals for the contrasts c·θ of the per-pair means θ of ``v`` (units × m sums).

    ``w`` holds each unit's pairs (ones without clusters).  Returns ``(estimates, low, high,
    critical value, method, sign vectors drawn or None)``: estimate ± q·sqrt(Σ_u r_u·c²)/Σw with
    r_u = v_u − w_u θ̂ and q the studentized max-|t| quantile over sign flips of the units.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.column_stack([np.arange(10.0), np.arange(10.0)[::-1]])
    >>> est, lo, hi, q, method, _ = simultaneous_intervals(v, np.ones(10), np.eye(2), level=0.9, n_resamples=2048,
    ...                                                    rng=0)
    >>> est.tolist(), method, bool(lo[0] < 4.5 < hi[0])
    ([4.5, 4.5], 'exact-enumeration', True)
    """
    theta = v.sum(0) / w.sum()
    resid = v - w[:, None] * theta[None, :]
    q, method, drawn = _critical_value(resid, w, contrasts, level, n_resamples, as_generator(rng))
    est = theta @ contrasts
    ss = ((resid @ contrasts) ** 2).sum(0)
    with np.errstate(invalid="ignore"):
        half = np.where(ss > 0, q * np.sqrt(ss) / w.sum(), 0.0)
    return est, est - half, est + half, q, method, drawn


def rank_sets(
    delta: Any,
    *,
    models: Any = None,
    clusters: Any = None,
    by: str = "magnitude",
    confidence_level: float = 0.95,
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
) -> RankSetResult:
    """Simultaneous confidence sets for the ranks of m models by their IP effect, and tie groups.

    With probability ≥ ``confidence_level`` (asymptotically in the number of units), every
    model's rank lies in its set *at once* (module docstring: the max-|t| intervals of all
    pairwise differences — and, ranking by size, sums — of the models' mean effects, with
    Rademacher sign flips of each unit's centred contribution; the unit is the pair, or the
    cluster).

    Parameters
    ----------
    delta : array_like, shape (n, m)
        Δ per pair (row) and model (column), finite: only the pairs every model answered.
    models : sequence of str, optional
        The models' names, one per column (default ``"model 0"``, …).
    clusters : sequence, optional
        A cluster label per row; a cluster's pairs are one unit.
    by : {"magnitude", "signed"}
        Rank by |θ| (how much a model personalizes, either way; default) or by θ.
    confidence_level : float
        The joint level of the rank sets.
    n_resamples : int, optional
        Sign vectors drawn for the critical value when they are too many to enumerate
        (default 10,000; all 2^units are enumerated when that is no more).
    rng : int, numpy.random.Generator or None
        Seed or generator for the drawn sign vectors.

    Returns
    -------
    RankSetResult

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats.ranks import rank_sets
    >>> rng = np.random.default_rng(0)
    >>> delta = rng.normal(size=(200, 4)) + np.array([0.0, 0.1, -1.0, 2.0])  # θ = 0, 0.1, -1, 2
    >>> res = rank_sets(delta, models=["A", "B", "C", "D"], rng=1)
    >>> [r["rank_set"] for r in res.rows()]          # D personalizes most, then C (negative, but large)
    ['3–4', '3–4', '2', '1']
    >>> res.tie_groups, res.groups
    (('c', 'c', 'b', 'a'), (('D',), ('C',), ('A', 'B')))
    """
    arr = _as_delta(delta)
    n, m = arr.shape
    names = _names(models, m)
    by = choice(by, "by", RANK_BY)
    level = open_unit(confidence_level, "confidence_level")
    n_resamples = _DEFAULT_RESAMPLES if n_resamples is None else positive_int(n_resamples, "n_resamples")
    gen = as_generator(rng)
    codes = _cluster_codes(clusters, n)
    if codes is None:
        v, w, unit, n_clusters = arr, np.ones(n), "pairs", None
    else:
        n_clusters = int(codes.max()) + 1
        v = np.zeros((n_clusters, m))
        np.add.at(v, codes, arr)
        w = np.bincount(codes, minlength=n_clusters).astype(np.float64)
        unit = "clusters"
    fam = list(itertools.combinations(range(m), 2))
    cols = []
    for a, b in fam:
        c = np.zeros(m)
        c[a], c[b] = 1.0, -1.0
        cols.append(c)
    if by == "magnitude":
        for a, b in fam:
            c = np.zeros(m)
            c[a], c[b] = 1.0, 1.0
            cols.append(c)
    theta = v.sum(0) / w.sum()
    _, lo, hi, q, method, drawn = simultaneous_intervals(v, w, np.column_stack(cols), level=level,
                                                         n_resamples=n_resamples, rng=gen)
    k = len(fam)
    above = np.zeros((m, m), dtype=bool)  # above[a, b]: a is decided to rank above b
    for i, (a, b) in enumerate(fam):
        if by == "signed":
            above[a, b], above[b, a] = lo[i] > 0, hi[i] < 0
        else:  # |θa| > |θb|  <=>  (θa − θb)(θa + θb) > 0
            above[a, b] = (lo[i] > 0 and lo[k + i] > 0) or (hi[i] < 0 and hi[k + i] < 0)
            above[b, a] = (hi[i] < 0 and lo[k + i] > 0) or (lo[i] > 0 and hi[k + i] < 0)
    rank_low = tuple(int(1 + above[:, j].sum()) for j in range(m))
    rank_high = tuple(int(m - above[j, :].sum()) for j in range(m))
    score = np.abs(theta) if by == "magnitude" else theta
    letters, cliques = tie_letters(above | above.T, score)
    what = "|θ_a| = |θ_b|" if by == "magnitude" else "θ_a = θ_b"
    null = (f"a confidence set, not a test: every model's rank by {'|θ|' if by == 'magnitude' else 'θ'} "
            f"(θ = its mean effect Δ) lies in its set at once with probability >= {level:g}; it inverts the "
            f"max-|t| sign-flip test of every {what} (unit: the {unit[:-1]})")
    return RankSetResult(
        models=names, estimates=tuple(float(t) for t in theta), rank_low=rank_low, rank_high=rank_high,
        tie_groups=tuple(letters), groups=tuple(tuple(names[j] for j in c) for c in cliques),
        pairs=tuple((names[a], names[b]) for a, b in fam), diff_low=tuple(float(x) for x in lo[:k]),
        diff_high=tuple(float(x) for x in hi[:k]),
        sum_low=tuple(float(x) for x in lo[k:]), sum_high=tuple(float(x) for x in hi[k:]),
        order=tuple(f"{names[a]}>{names[b]}" if above[a, b] else f"{names[a]}<{names[b]}" if above[b, a] else "—"
                    for a, b in fam),
        by=by, confidence_level=level, critical_value=q, method=method, n=n, n_resamples=drawn,
        null_hypothesis=null, unit=unit, n_clusters=n_clusters)
