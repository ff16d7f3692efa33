"""Equivalence verdicts for :func:`ipcausal.test` (``margin=ε``): reject / equivalent / inconclusive.

"No IP" is shown, not assumed: a group is *equivalent* when two one-sided sign-flip tests at
level α reject |mean Δ| ≥ ε (TOST; :func:`ipcausal.stats.equivalence_test`) — the (1 − 2α) inverted
interval lies inside (−ε, ε).  A group whose H0 "no effect" is rejected is *reject*; anything else
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

from ipcausal.outcomes import directed
from ipcausal.stats.equivalence import equivalence_test
from ipcausal.study.groups import Group, cluster_interval
from ipcausal.study.options import check_margin
from ipcausal.study.results import EquivalenceInfo, GroupResult

__all__ = ["validate_margin", "with_equivalence", "VERDICTS"]

VERDICTS = ("reject", "equivalent", "inconclusive")


def validate_margin(margin: Any, outcome: str) -> float | None:
    """``margin`` as a positive finite float (or ``None``); only for interval outcomes."""
    margin = check_margin(margin)
    if margin is None:
        return None
    if not directed(outcome):
        raise ValueError("`margin` (an equivalence test on mean Δ) needs an interval outcome (`score_i`/`score_j`)")
    return margin


def with_equivalence(result: GroupResult, group: Group, st: Any, gen: np.random.Generator) -> GroupResult:
    """``result`` with its equivalence test at ``st.margin`` (verdict set after the correction)."""
    margin = st.margin
    equal = group.n_clusters is None or bool(np.all(group.sizes == group.sizes[0]))
    if equal:
        eq = equivalence_test(group.values, margin=margin * group.scale, alpha=st.alpha,
                              method=st.method if st.method != "saddlepoint" else "auto",
                              n_resamples=st.n_resamples, rng=gen)
        lo, hi, p = eq.ci_low / group.scale, eq.ci_high / group.scale, eq.pvalue
        equivalent = bool(eq.equivalent)
    else:
        lo, hi, _ = cluster_interval(group, st.method, st.n_resamples, 1.0 - 2.0 * st.alpha)
        equivalent = -margin < lo and hi < margin
        p = math.nan  # read off the interval; no TOST p for unequal cluster sizes
    info = EquivalenceInfo(margin=margin, verdict="equivalent" if equivalent else "inconclusive",
                           pvalue=None if math.isnan(p) else float(p), ci_low=float(lo), ci_high=float(hi),
                           confidence_level=1.0 - 2.0 * st.alpha)
    return replace(result, equivalence=info)


def verdict(result: GroupResult) -> GroupResult:
    """After the correction: a rejected group is "reject", whatever its equivalence test said."""
    if result.equivalence is None or not result.reject:
        return result
    return replace(result, equivalence=replace(result.equivalence, verdict="reject"))
