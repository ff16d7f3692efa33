"""How blind a non-rejection was: the minimal detectable effect (MDE) of a test at this n and spread.

:func:`minimal_detectable_effect` inverts :func:`ipcausal.power`: the smallest effect the test
detects with the given power (0.8) at the given n, spread and level.  For an interval outcome
(the sign-flip test of mean Δ = 0) the effect is |mean Δ| for a standard deviation ``sd`` of Δ
(the noncentral-t power of :func:`ipcausal.power`, which the permutation test shares for normal Δ);
for a similarity outcome (the sign test of median s = m0) it is the share q of untied pairs below
m0 (H0: q = ½; exact binomial power).  :func:`group_mde` computes it for one group of
:func:`ipcausal.test` from the group's own data — the observed spread of the tested units — at
the per-test level of its correction family, and returns the :class:`~ipcausal.study.parts.MDEInfo`
that the Report carries beside the group.

Examples
--------
>>> from ipcausal.study.mde import minimal_detectable_effect
>>> round(minimal_detectable_effect(34), 3)  # d_z that 34 pairs detect with power 0.8 at alpha 0.05
0.495
>>> round(minimal_detectable_effect(30, outcome="similarity"), 3)  # share below m0 the sign test detects
0.718
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ipcausal.outcomes import directed
from ipcausal.study.defaults import DEFAULTS
from ipcausal.study.parts import MDEInfo
from ipcausal.study.power import power as power_of

__all__ = ["minimal_detectable_effect", "group_mde", "family_level", "TARGET_POWER"]

#: The power at which the MDE is stated.
TARGET_POWER = 0.8
_STEPS = 60  # bisection steps: 2^-60 of the bracket


def minimal_detectable_effect(n: int, *, sd: float = 1.0, alpha: float = DEFAULTS["alpha"], n_tests: int = 1,
                              power: float = TARGET_POWER, outcome: str = "interval",
                              alternative: str | None = None) -> float:
    """The smallest effect that ``n`` pairs detect with probability ``power`` (``inf`` when none does).

    Parameters
    ----------
    n : int
        Pairs (or clusters, the tested units; untied pairs for the sign test), >= 2.
    sd : float
        Standard deviation of Δ (interval outcomes), > 0.
    alpha, n_tests : float, int
        The test runs at ``alpha / n_tests`` (Bonferroni), as in :func:`ipcausal.power`.
    power : float
        Target power in (0, 1).
    outcome : {"interval", "similarity"}
    alternative : str, optional
        H1's direction (default: two-sided for interval, "less" for similarity).

    Returns
    -------
    float
        Interval: |mean Δ| on Δ's scale (divide by ``sd`` for d_z).  Similarity: the share of untied
        pairs with similarity below m0 (in (0.5, 1]).  ``inf`` when no effect reaches ``power`` at this
        n (e.g. the smallest attainable p is above the level).

    Examples
    --------
    >>> import ipcausal
    >>> mde = minimal_detectable_effect(20, sd=2.0)
    >>> round(ipcausal.power(mde, n=20, sd=2.0).power, 6)
    0.8
    >>> minimal_detectable_effect(4)  # 4 pairs: a two-sided p never falls below 2/16 > 0.05
    inf
    """
    def at(effect: float) -> float:
        return power_of(effect, n=n, sd=sd, alpha=alpha, n_tests=n_tests, outcome=outcome,
                        alternative=alternative).power

    interval = directed(outcome)
    if interval:
        if alternative == "less":  # the test looks for a negative mean: the MDE is its size
            def at(effect: float, _at: Any = at) -> float:  # noqa: E731 - a small wrapper
                return _at(-effect)
        lo, hi = 0.0, 1.0 * sd
        while at(hi) < power:
            hi *= 2.0
            if hi > 1e6 * sd:
                return math.inf
    else:
        flip = alternative == "greater"
        lo, hi = 0.5, 1.0
        if (at(0.0) if flip else at(1.0)) < power:
            return math.inf

        def at(q: float, _at: Any = at) -> float:  # noqa: E731
            return _at(1.0 - q) if flip else _at(q)
    for _ in range(_STEPS):
        mid = (lo + hi) / 2.0
        if at(mid) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def family_level(alpha: float, correction: str, m: int) -> tuple[float, str]:
    """The per-test level whose power bounds the family's, and its name.

    Bonferroni's α/m: every correction of :func:`ipcausal.test` but Benjamini–Yekutieli rejects
    whatever Bonferroni rejects, so the MDE at α/m is an upper bound for them; BY's first step is
    α/(m·Σ 1/k); no correction: α.

    Examples
    --------
    >>> family_level(0.05, "holm", 3)
    (0.016666666666666666, 'alpha / 3')
    """
    if correction == "none" or m == 1:
        return alpha, "alpha"
    if correction == "by":
        c = sum(1.0 / k for k in range(1, m + 1))
        return alpha / (m * c), f"alpha / ({m} x {c:.3g})"
    return alpha / m, f"alpha / {m}"


def group_mde(group: Any, result: Any, *, alpha: float, correction: str, m: int, alternative: str) -> MDEInfo | None:
    """The MDE of one group of :func:`ipcausal.test` at power 0.8, from its own observed spread.

    ``group`` is the :class:`~ipcausal.study.groups.Group` tested (its units' values), ``result`` its
    test result (``detail``), ``m`` the groups in its correction family.  ``None`` for tests with
    no MDE here (the distribution test, an audit's sequential groups).
    """
    level, how = family_level(alpha, correction, m)
    test = getattr(result, "method", "")
    v = np.asarray(group.values, dtype=np.float64)
    if directed(result_outcome(result)):
        unit = "clusters" if group.n_clusters is not None else "pairs"
        n = int(v.size)
        sd = float(np.std(v, ddof=1)) if n >= 2 else math.nan
        equal = group.n_clusters is None or bool(np.all(group.sizes == group.sizes[0]))
        per_unit = group.scale if equal else float(np.mean(group.sizes * (group.samples or 1)))
        if not sd > 0:
            return MDEInfo(effect=math.nan, power=TARGET_POWER, n=n, unit=unit, level=level, level_name=how, sd=sd,
                           from_observed=True, d_z=None, test="permutation",
                           note="not computed: the tested differences have no spread")
        informative = n - int(getattr(result, "n_zero", 0) or 0)
        floor = (1.0 if alternative != "two-sided" else 2.0) * 0.5**informative
        if floor > level:  # the exact test cannot reach the level with these units, whatever their values
            return MDEInfo(effect=math.inf, power=TARGET_POWER, n=informative, unit=f"informative {unit} (Δ ≠ 0)",
                           level=level, level_name=how, sd=sd / per_unit, from_observed=True, d_z=None,
                           test="permutation", note=f"the smallest attainable p, {floor:.3g}, is above the level")
        mde = minimal_detectable_effect(n, sd=sd, alpha=level, power=TARGET_POWER, alternative=alternative)
        return MDEInfo(effect=mde / per_unit, power=TARGET_POWER, n=n, unit=unit, level=level, level_name=how,
                       sd=sd / per_unit, from_observed=True, d_z=mde / sd, test="permutation",
                       note=f"noncentral-t power of the sign-flip test ({test} route)")
    n = int(getattr(result, "n", v.size))  # untied pairs
    if n < 2:
        return MDEInfo(effect=math.inf, power=TARGET_POWER, n=n, unit="untied pairs", level=level, level_name=how,
                       sd=None, from_observed=False, d_z=None, test="sign", note="fewer than 2 untied pairs")
    q = minimal_detectable_effect(n, alpha=level, power=TARGET_POWER, outcome="similarity", alternative=alternative)
    return MDEInfo(effect=q, power=TARGET_POWER, n=n, unit="untied pairs", level=level, level_name=how, sd=None,
                   from_observed=False, d_z=None, test="sign", note="exact binomial power (no spread needed)")


def result_outcome(result: Any) -> str:
    """``"interval"`` for a sign-flip result (it has ``effect_size``), ``"similarity"`` for a sign test's."""
    return "interval" if hasattr(result, "effect_size") else "similarity"
