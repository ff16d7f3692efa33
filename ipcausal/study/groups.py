"""Step 1 of :func:`ipcausal.test`: group the pairs, orient each group, take the values to test.

A group is one model's unordered background pair.  Its orientation a → b fixes the sign of
Δ = score(b) − score(a): given by ``order`` (a is the background that comes first), else the
direction most pairs are stored in (ties alphabetical).  The values tested respect the design:

* **repeated samples** — with ``scores_i``/``scores_j`` (one score per sampled response), a pair's
  Δ is mean(scores_j) − mean(scores_i); when every pair has the same count k of integer scores the
  sums are tested instead (same p, and the exact lattice route stays exact) and the effect is
  divided back by k;
* **clusters** — with ``cluster``, the Δ of a cluster's pairs are summed and the sign flips act on
  whole clusters (the cluster is the unit of randomisation).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ipcausal.outcomes import directed
from ipcausal.pairs import PairSet
from ipcausal.stats.clusters import unequal_cluster_interval
from ipcausal.study.results import UNKNOWN_MODEL

__all__ = ["orient", "Group", "groups", "ClusterWarning", "ID_COLUMNS", "UNKNOWN_MODEL", "validate_order", "validate_cluster",
           "cluster_interval"]

#: Columns that name a shared unit; pairs of one group sharing a value are likely dependent.
ID_COLUMNS = ("prompt_id", "question_id", "item_id", "cluster_id")


class ClusterWarning(UserWarning):
    """Pairs of one group share an id but no ``cluster`` was given: they are tested as independent."""


@dataclass(frozen=True)
class Group:
    """One model's unordered background pair, oriented a → b, with the values that are tested.

    ``values`` are what the test randomises (one per unit: pair, or cluster); ``scale`` turns
    their mean into the per-pair mean Δ (``effect = mean(values) / scale`` when clusters have
    equal sizes); ``sizes`` the pairs per unit; ``n_pairs`` the pairs; ``n_clusters`` the units
    when ``cluster`` was given (else ``None``); ``pair_deltas`` the per-pair Δ (or similarities).
    """

    model: str
    a: str
    b: str
    values: np.ndarray
    scale: float
    sizes: np.ndarray
    n_pairs: int
    n_clusters: int | None
    pair_deltas: np.ndarray
    samples: int | None = None  # k when the sums of k integer scores per side are tested


def validate_order(order: Any, backgrounds: set[str]) -> tuple[str, ...] | None:
    """``order`` as a tuple covering every background of the data (or ``None``)."""
    if order is None:
        return None
    if isinstance(order, (str, bytes)) or not isinstance(order, Sequence):
        raise TypeError(f"`order` must be a list of background names, got {type(order).__name__}")
    names = tuple(str(o) for o in order)
    if len(set(names)) != len(names):
        raise ValueError(f"`order` names a background twice: {list(names)}")
    missing = sorted(backgrounds - set(names))
    if missing:
        raise ValueError(f"`order` must list every background of `pairs`; missing {missing}")
    return names


def validate_cluster(cluster: Any, ps: PairSet) -> str | None:
    """The ``cluster`` column name, checked to exist with no missing values."""
    if cluster is None:
        return None
    if not isinstance(cluster, str):
        raise TypeError(f"`cluster` must be a column name, got {type(cluster).__name__}")
    if cluster not in ps:
        raise ValueError(f"`cluster`: `pairs` has no column {cluster!r} (columns: {', '.join(ps.columns)})")
    col = ps[cluster]
    if col.isna().any():
        rows = np.flatnonzero(col.isna().to_numpy())[:5].tolist()
        raise ValueError(f"`cluster`: column {cluster!r} is missing at rows {rows}")
    return cluster


def _sample_scores(df: Any, n: int) -> tuple[np.ndarray, np.ndarray, int | None] | None:
    """Per pair mean(scores_j) − mean(scores_i), or the sums with k when counts are equal integers."""
    if "scores_i" not in df.columns or "scores_j" not in df.columns:
        return None
    si, sj = df["scores_i"].tolist(), df["scores_j"].tolist()
    counts, integer = set(), True
    delta = np.empty(n)
    sums = np.empty(n)
    for r in range(n):
        a, b = si[r], sj[r]
        if not isinstance(a, (list, tuple, np.ndarray)) or not isinstance(b, (list, tuple, np.ndarray)):
            raise ValueError(f"`scores_i`/`scores_j` must hold lists of numbers; row {r} has {a!r} / {b!r}")
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        if a.size == 0 or b.size == 0 or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            raise ValueError(f"`scores_i`/`scores_j`: row {r} needs at least one finite score per side")
        counts.add(a.size)
        counts.add(b.size)
        integer = integer and bool(np.all(a == np.rint(a)) and np.all(b == np.rint(b)))
        delta[r] = b.mean() - a.mean()
        sums[r] = b.sum() - a.sum()
    if len(counts) == 1 and integer:
        k = counts.pop()
        return sums, delta, k
    return delta, delta, None


def orient(low: str, high: str, forward: int, size: int, *, rank: dict[str, int] | None, one_sided: bool,
           where: str = "") -> tuple[str, str]:
    """The direction ``(a, b)`` of a group of ``size`` pairs between ``low`` < ``high``, ``forward`` of
    them stored low → high: by ``rank`` (the ``order`` given), else the direction most pairs are stored
    in (a tie: the alphabetical one).  The one rule of :func:`ipcausal.test` and :func:`ipcausal.audit`.

    ``one_sided`` (a one-sided test of a directed outcome: a similarity has no direction) without
    ``rank`` on a group stored both ways is a ``ValueError`` naming ``order``.

    Examples
    --------
    >>> orient("aae", "sae", 1, 3, rank=None, one_sided=False)
    ('sae', 'aae')
    >>> orient("aae", "sae", 1, 3, rank={"sae": 0, "aae": 1}, one_sided=True)
    ('sae', 'aae')
    """
    if rank is not None:
        a, b = sorted((low, high), key=lambda x: rank[x])
        return a, b
    if one_sided and 0 < forward < size:
        raise ValueError(f"`order`: group {low} vs {high}{where} is stored both ways, so a one-sided "
                         "`alternative` has no fixed direction; pass `order` (a list of backgrounds)")
    return (low, high) if forward >= size - forward else (high, low)


def groups(ps: PairSet, outcome: str, *, cluster: str | None = None, order: tuple[str, ...] | None = None,
           one_sided: bool = False) -> list[Group]:
    """The groups of ``ps``: (model, unordered background pair), oriented, values taken.

    Raises ``ValueError`` naming ``order`` when a one-sided test is asked for without ``order`` on
    a group whose pairs are stored both ways (its direction would depend on the storage).
    """
    need = list(dict.fromkeys(c for c in ("background_i", "score_i", "score_j", "scores_i", "scores_j", "similarity",
                                          cluster, *ID_COLUMNS) if c is not None and c in ps))
    df = ps.to_frame()[need]  # no text columns: the statistics path needs none
    n = len(df)
    bi = df["background_i"].to_numpy(object)
    k_samples = None
    if directed(outcome):
        got = _sample_scores(df, n) if "scores_i" in df.columns else None
        if got is not None:
            tested, delta, k_samples = got
        else:
            delta = ps.deltas
            tested = delta
    else:
        delta = tested = df["similarity"].to_numpy(np.float64)
    # cluster ids as integer codes, once for all groups (factorize: no string sort per group)
    clusters = pd.factorize(df[cluster].astype(str))[0] if cluster is not None else None
    rank = {b: i for i, b in enumerate(order)} if order is not None else None
    out = []
    shared: list[str] = []
    for model, low, high, idx, forward in ps.pair_groups():
        model = UNKNOWN_MODEL if model is None else model
        a, b = orient(low, high, forward, idx.size, rank=rank, one_sided=one_sided and directed(outcome),
                      where=f" ({model})")
        sign = np.where(bi[idx] == a, 1.0, -1.0) if directed(outcome) else np.ones(idx.size)
        per_pair = delta[idx] * sign
        values = tested[idx] * sign
        scale = float(k_samples) if k_samples else 1.0
        if clusters is None:
            sizes = np.ones(idx.size, dtype=np.int64)
            n_clusters = None
            for col in ID_COLUMNS:
                if col in df.columns:
                    ids = df[col].iloc[idx]
                    ids = ids[ids.notna()]
                    if ids.duplicated().any():
                        shared.append(f"{a} vs {b} ({model}): `{col}`")
                        break
        else:
            uniq, inverse, sizes = np.unique(clusters[idx], return_inverse=True, return_counts=True)
            if directed(outcome):
                values = np.bincount(inverse, weights=values, minlength=uniq.size)
            else:  # the sign test on cluster-mean similarities
                values = np.bincount(inverse, weights=values, minlength=uniq.size) / sizes
            n_clusters = int(uniq.size)
            if directed(outcome) and np.all(sizes == sizes[0]):
                scale *= float(sizes[0])
        out.append(Group(model, a, b, np.ascontiguousarray(values, dtype=np.float64), scale,
                         np.asarray(sizes, dtype=np.int64), int(idx.size), n_clusters, per_pair, k_samples))
    if shared:
        warnings.warn("pairs within a group share an id, but no `cluster` was given, so they are tested as "
                      "independent (pass cluster=COLUMN to flip whole clusters): " + "; ".join(shared[:5])
                      + ("; …" if len(shared) > 5 else ""), ClusterWarning, stacklevel=3)
    return sorted(out, key=lambda g: (g.model, g.a, g.b))


def cluster_interval(group: Group, method: str, n_resamples: int, level: float,
                     pvalue: float | None = None) -> tuple[float, float, str]:
    """Interval for the per-pair mean Δ with unequal cluster sizes: invert the cluster-sum test.

    δ is in the set when the two-sided test of the cluster sums S_c − n_c·k·δ has p > 1 − level;
    the boundary is found by bisection, every evaluation with one fixed set of sign vectors
    (:func:`ipcausal.stats.clusters.unequal_cluster_interval`); ``pvalue``, the group's reported
    two-sided p, decides δ = 0 (so the interval excludes 0 exactly when it is ≤ 1 − level).
    """
    span = float(np.max(np.abs(group.pair_deltas))) + 1e-12
    lo, hi = unequal_cluster_interval(group.values, group.sizes * (group.samples or 1), span, method=method,
                                      n_resamples=n_resamples, level=level, pvalue=pvalue)
    return lo, hi, "inversion of the cluster-sum test (bisection, fixed sign vectors)"
