"""Prediction-powered inference for a mean: human scores on a few units, a judge's scores on all of them.

A judge (an LLM, an embedding, an automatic rater) scores every unit; people score a uniformly
random subset.  The mean on the **human** scale is estimated from both (Angelopoulos, Bates,
Fannjiang, Jordan & Zrnic, Science 2023), with the power-tuned weight λ of PPI++ (Angelopoulos,
Duchi & Zrnic 2023):

    θ̂_λ = λ · mean(f over the unlabelled units) + mean(h − λ f over the labelled units)

for human scores h and judge scores f.  Its standard error is
√(λ² s²(f_unlabelled)/N + s²(h − λ f)/n) (n labelled, N unlabelled units); the interval and the
test use Student's t with n − 1 degrees of freedom.  The tuned
λ̂ = ĉov(h, f) / ((1 + n/N) · v̂ar(f over all units)), clipped to [0, 1], makes the variance
(asymptotically) the smallest of the family: λ = 0 is the human-only mean, λ = 1 is PPI as first
published, and tuning is never worse than the human-only estimate in large samples.  With all N + n
judge scores written f_all, λ = 1 − n/(N + n) gives mean(f_all) + mean(h − f): the form SPEC §11 writes.

What it assumes: the labelled units are a uniformly random subset of all units (the judge may be
arbitrarily wrong, biased or noisy: its error is measured on the labelled units and corrected), and
the units are independent (pass cluster means for clustered data).

Examples
--------
>>> import numpy as np
>>> from ipcausal.stats.ppi import ppi_mean_test
>>> gen = np.random.default_rng(0)
>>> h_all = gen.normal(0.3, 1.0, 1000)                  # what people would say, on every unit
>>> f_all = h_all + 0.5 + gen.normal(0, 0.5, 1000)       # a judge that is biased by +0.5 and noisy
>>> res = ppi_mean_test(h_all[:80], f_all[:80], f_all[80:])
>>> bool(res.ci_low < 0.3 < res.ci_high), bool(res.ci_high - res.ci_low < res.human_ci_high - res.human_ci_low)
(True, True)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipcausal.stats._validate import ALTERNATIVES, as_sample, choice, finite_real, open_unit
from ipcausal.stats.results import Result

__all__ = ["ppi_mean_test", "PPIResult", "tuned_lambda"]


@dataclass(frozen=True)
class PPIResult(Result):
    """Result of :func:`ppi_mean_test`: the human-scale mean by PPI++ beside the human-only mean.

    ``statistic`` is θ̂_λ, ``se`` its standard error, ``ci_low``/``ci_high`` its interval at
    ``confidence_level`` and ``pvalue`` the test of ``null_value`` against ``alternative``
    (Student's t, ``df`` = n − 1).  ``lam`` is the λ used (``method`` says whether it was tuned);
    ``n_labelled`` the units with human scores, ``n_unlabelled`` those with the judge's only.
    ``judge_mean`` is the judge's mean over all units (the judge-only estimate) and ``rectifier``
    mean(h − f) over the labelled units (the judge's bias on the human scale, estimated).  The
    ``human_*`` fields are the human-only estimate from the labelled units alone (mean, standard
    error, t interval, t test of ``null_value``): the interval PPI must beat.
    """

    statistic: float
    pvalue: float
    ci_low: float
    ci_high: float
    confidence_level: float
    alternative: str
    method: str
    null_hypothesis: str
    null_value: float
    se: float
    df: int
    lam: float
    n_labelled: int
    n_unlabelled: int
    judge_mean: float
    rectifier: float
    human_mean: float
    human_se: float
    human_ci_low: float
    human_ci_high: float
    human_pvalue: float

    @property
    def n(self) -> int:
        """All units: labelled and unlabelled."""
        return self.n_labelled + self.n_unlabelled

    @property
    def width_ratio(self) -> float:
        """The PPI interval's width over the human-only interval's (< 1: the judge's scores helped)."""
        human = self.human_ci_high - self.human_ci_low
        return (self.ci_high - self.ci_low) / human if human > 0 else math.nan


def tuned_lambda(human: np.ndarray, judge: np.ndarray, judge_unlabelled: np.ndarray) -> float:
    """PPI++'s power-tuned λ for a mean, clipped to [0, 1].

    λ̂ = ĉov(h, f) / ((1 + n/N) · v̂ar(f)), with the covariance over the n labelled units (divided
    by n) and the variance of the judge's scores over all n + N units (divided by n + N − 1); 0
    when the judge's scores do not vary or there is no unlabelled unit.

    Examples
    --------
    >>> import numpy as np
    >>> h = np.array([1.0, 2.0, 3.0, 4.0]); f = h + 1.0
    >>> round(tuned_lambda(h, f, np.array([2.0, 3.0, 4.0, 5.0])), 4)  # a perfect judge up to a shift
    0.4375
    """
    n, big_n = human.size, judge_unlabelled.size
    if big_n == 0:
        return 0.0
    var_f = float(np.var(np.concatenate([judge, judge_unlabelled]), ddof=1))
    if not var_f > 0:
        return 0.0
    cov = float(np.mean((human - human.mean()) * (judge - judge.mean())))
    return float(min(1.0, max(0.0, cov / ((1.0 + n / big_n) * var_f))))


def _t_test(estimate: float, se: float, df: int, null: float, alternative: str,
            level: float) -> tuple[float, float, float]:
    """(p, low, high) of the t test and interval of ``estimate`` with standard error ``se``."""
    if not se > 0:  # no spread at all: the estimate is exact
        p = 0.0 if estimate != null else 1.0
        return p, estimate, estimate
    from scipy import special as _special  # here: a test without human scores never loads scipy

    t = (estimate - null) / se
    if alternative == "two-sided":
        p = 2.0 * float(_special.stdtr(df, -abs(t)))
        q = float(_special.stdtrit(df, 0.5 + level / 2.0))
        return min(1.0, p), estimate - q * se, estimate + q * se
    q = float(_special.stdtrit(df, level))
    if alternative == "greater":
        return float(_special.stdtr(df, -t)), estimate - q * se, math.inf
    return float(_special.stdtr(df, t)), -math.inf, estimate + q * se


def ppi_mean_test(
    human: Any,
    judge: Any,
    judge_unlabelled: Any,
    *,
    lam: float | None = None,
    null_value: float = 0.0,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
) -> PPIResult:
    """The mean on the human scale by prediction-powered inference (PPI++), with its interval and test.

    Parameters
    ----------
    human : array_like
        Human scores h of the n labelled units (n >= 2).
    judge : array_like
        The judge's scores f of the same n units, in the same order.
    judge_unlabelled : array_like
        The judge's scores of the N units people did not score (may be empty).
    lam : float, optional
        The weight λ in [0, 1]; default the power-tuned λ̂ of :func:`tuned_lambda`.
    null_value : float
        The mean under H0 (default 0: no effect).
    alternative : {"two-sided", "greater", "less"}
    confidence_level : float
        In (0, 1).

    Returns
    -------
    PPIResult
        Its null hypothesis in words: the mean of the human scores equals ``null_value``.

    Notes
    -----
    Valid when the n labelled units are a uniformly random subset of the n + N units and the units
    are independent; the judge may be wrong in any way.  Unit of resampling: the unit (a pair, or a
    cluster when cluster means are passed).

    Examples
    --------
    >>> res = ppi_mean_test([1.0, 0.0, 2.0, 1.0], [1.5, 0.5, 2.5, 1.5], [1.5, 2.5, 0.5], lam=1.0)
    >>> res.statistic, res.rectifier, res.method
    (1.0, -0.5, 'PPI (lambda = 1 fixed)')
    >>> ppi_mean_test([1.0], [1.0], [2.0])
    Traceback (most recent call last):
    ...
    ValueError: `human` needs at least 2 values, got 1
    """
    h = as_sample(human, "human", min_size=2)
    f = as_sample(judge, "judge", min_size=2)
    if f.size != h.size:
        raise ValueError(f"`judge` must score the same units as `human`: {f.size} scores for {h.size} units")
    fu = as_sample(judge_unlabelled, "judge_unlabelled", min_size=0)
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    level = open_unit(confidence_level, "confidence_level")
    null = finite_real(null_value, "null_value")
    if lam is None:
        weight, method = tuned_lambda(h, f, fu), "PPI++ (power-tuned lambda)"
    else:
        if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not 0.0 <= float(lam) <= 1.0:
            raise ValueError(f"`lam` must be a number in [0, 1] or None (tuned), got {lam!r}")
        weight, method = float(lam), f"PPI (lambda = {float(lam):g} fixed)"
        if fu.size == 0 and weight:
            raise ValueError("`lam` must be 0 when no unit is unlabelled (`judge_unlabelled` is empty)")
    n, big_n = h.size, fu.size
    r = h - weight * f
    imputed = weight * float(fu.mean()) if big_n else 0.0
    estimate = imputed + float(r.mean())
    var_imputed = weight**2 * float(np.var(fu, ddof=1)) / big_n if big_n > 1 else 0.0
    se = math.sqrt(var_imputed + float(np.var(r, ddof=1)) / n)
    df = n - 1
    p, lo, hi = _t_test(estimate, se, df, null, alternative, level)
    h_mean, h_se = float(h.mean()), float(np.std(h, ddof=1)) / math.sqrt(n)
    hp, hlo, hhi = _t_test(h_mean, h_se, df, null, alternative, level)
    return PPIResult(
        statistic=estimate, pvalue=p, ci_low=lo, ci_high=hi, confidence_level=level, alternative=alternative,
        method=method, null_hypothesis=f"H0: the mean of the human scores is {null:g} (prediction-powered: the "
                                       f"judge's scores of all units, corrected by its error on the {n} labelled)",
        null_value=null, se=se, df=df, lam=weight, n_labelled=n, n_unlabelled=big_n,
        judge_mean=float(np.concatenate([f, fu]).mean()), rectifier=float((h - f).mean()),
        human_mean=h_mean, human_se=h_se, human_ci_low=hlo, human_ci_high=hhi, human_pvalue=hp,
    )
