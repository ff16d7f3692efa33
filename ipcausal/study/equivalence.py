"""The interval for the mean Δ and the equivalence verdicts of :func:`ipcausal.test` (``margin=ε``).

Where a bound c on |Δ| is known (``Design(bound=…)`` or the ``bound`` column the score step
writes), a group's interval for the mean Δ is the betting interval
(:func:`ipcausal.stats.bounded_mean_test`), valid for every distribution of Δ on [−c, c], with
one value per pair (per cluster its mean Δ); without one it is the sign-flip inversion, an
interval for a shift δ under "Δ − δ symmetric" (``GroupResult.ci_method`` says which).

"No IP" is shown, not assumed: a group is *equivalent* when two one-sided tests at level α
reject |mean Δ| ≥ ε (TOST; :func:`ipcausal.stats.equivalence_test`) — the (1 − 2α) interval
lies inside (−ε, ε): the betting tests where a bound is known (level α for every bounded
distribution), else the sign-flip tests of the shift model (exact only for symmetric Δ ∓ ε).  A group whose H0 "no effect" is rejected is *reject*; anything else
is *inconclusive*.  The model shows no IP when every group is equivalent: an intersection–union
test, valid at level α without a correction.  The margin is per pair, on Δ's own scale; with
clusters the tested unit is the cluster sum, so the margin is scaled by the cluster size (equal
sizes) or the decision is read off the (1 − 2α) interval of the cluster test (unequal sizes).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

import pandas as pd

from ipcausal.outcomes import directed
from ipcausal.pairs import PairSet
from ipcausal.stats.equivalence import equivalence_test
from ipcausal.stats.meanci import bounded_mean_test
from ipcausal.study.groups import Group, cluster_interval
from ipcausal.study.results import EquivalenceInfo, GroupResult

__all__ = ["validate_margin", "with_equivalence", "VERDICTS", "known_bound", "mean_interval"]

VERDICTS = ("reject", "equivalent", "inconclusive")


def known_bound(ps: PairSet, declared: float | None, outcome: str) -> float | None:
    """The bound on |Δ| the interval for the mean uses: ``declared`` (``Design.bound``), else the
    ``bound`` column the score step wrote (its largest value, when every pair has one), else ``None``."""
    if not directed(outcome):
        return None
    if declared is not None:
        return float(declared)
    if "bound" not in ps:
        return None
    col = pd.to_numeric(ps["bound"], errors="coerce").to_numpy(np.float64)
    if col.size == 0 or not np.all(np.isfinite(col)) or not np.all(col > 0):
        return None
    return float(col.max())


def mean_interval(group: Group, bound: float, level: float) -> tuple[float, float, str]:
    """The betting interval for the mean Δ of ``group`` (|Δ| ≤ ``bound``): one value per pair, or
    per cluster its mean Δ (:func:`ipcausal.stats.bounded_mean_test`)."""
    units = group.values / (group.sizes * (group.samples or 1))
    big = np.abs(units) > bound * (1 + 1e-12)
    if big.any():
        raise ValueError(f"`bound`: group {group.a} vs {group.b} ({group.model}) has a mean Δ of "
                         f"{units[big][0]:g} per {'cluster' if group.n_clusters else 'pair'}, beyond the bound "
                         f"{bound:g} on |Δ|; give the right `Design(bound=…)` (or fix the `bound` column)")
    res = bounded_mean_test(np.clip(units, -bound, bound), bound=bound, confidence_level=level)
    name = res.ci_method + (" (cluster means)" if group.n_clusters is not None else "")
    return res.ci_low, res.ci_high, name


def validate_margin(margin: Any, outcome: str) -> float | None:
    """``margin`` as a positive finite float (or ``None``); only for interval outcomes."""
    if margin is None:
        return None
    if isinstance(margin, bool) or not isinstance(margin, (int, float, np.integer, np.floating)):
        raise TypeError(f"`margin` must be a positive number (the smallest mean Δ that matters), got {margin!r}")
    if not math.isfinite(float(margin)) or float(margin) <= 0:
        raise ValueError(f"`margin` must be a positive finite number, got {margin!r}")
    if not directed(outcome):
        raise ValueError("`margin` (an equivalence test on mean Δ) needs an interval outcome (`score_i`/`score_j`)")
    return float(margin)


def with_equivalence(result: GroupResult, group: Group, st: Any, gen: np.random.Generator) -> GroupResult:
    """``result`` with its equivalence test at ``st.margin`` (verdict set after the correction).

    With a known bound on |Δ| (``st.bound``): the betting TOST on one value per pair (per cluster
    its mean Δ), level α for every distribution on [−c, c].  Without one: the sign-flip TOST of the
    shift model (exact only when Δ ∓ ε is symmetric), named so in ``ci_method``.
    """
    margin = st.margin
    if st.bound is not None:
        units = group.values / (group.sizes * (group.samples or 1))
        if margin >= st.bound:
            raise ValueError(f"`margin` ({margin:g}) must be smaller than the bound on |Δ| ({st.bound:g})")
        eq = equivalence_test(np.clip(units, -st.bound, st.bound), margin=margin, bound=st.bound, alpha=st.alpha)
        lo, hi, p, equivalent = eq.ci_low, eq.ci_high, eq.pvalue, bool(eq.equivalent)
        how = eq.ci_method + (" (cluster means)" if group.n_clusters is not None else "")
        return replace(result, equivalence=EquivalenceInfo(
            margin=margin, verdict="equivalent" if equivalent else "inconclusive", pvalue=float(p), ci_low=float(lo),
            ci_high=float(hi), confidence_level=1.0 - 2.0 * st.alpha, ci_method=how))
    equal = group.n_clusters is None or bool(np.all(group.sizes == group.sizes[0]))
    if equal:
        eq = equivalence_test(group.values, margin=margin * group.scale, alpha=st.alpha, ci_method="shift",
                              method=st.method if st.method != "saddlepoint" else "auto",
                              n_resamples=st.n_resamples, rng=gen)
        lo, hi, p = eq.ci_low / group.scale, eq.ci_high / group.scale, eq.pvalue
        equivalent = bool(eq.equivalent)
        how = f"shift: {eq.ci_method}"
    else:
        lo, hi, how = cluster_interval(group, st.method, st.n_resamples, 1.0 - 2.0 * st.alpha)
        equivalent = -margin < lo and hi < margin
        p = math.nan  # read off the interval; no TOST p for unequal cluster sizes
        how = f"shift: {how}"
    info = EquivalenceInfo(margin=margin, verdict="equivalent" if equivalent else "inconclusive",
                           pvalue=None if math.isnan(p) else float(p), ci_low=float(lo), ci_high=float(hi),
                           confidence_level=1.0 - 2.0 * st.alpha, ci_method=how)
    return replace(result, equivalence=info)


def verdict(result: GroupResult) -> GroupResult:
    """After the correction: a rejected group is "reject", whatever its equivalence test said."""
    if result.equivalence is None or not result.reject:
        return result
    return replace(result, equivalence=replace(result.equivalence, verdict="reject"))
