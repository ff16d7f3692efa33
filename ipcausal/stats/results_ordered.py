"""Frozen results of the trend, heterogeneity and binomial tests (the style of :mod:`.results`)."""

from __future__ import annotations

from dataclasses import dataclass

from ipcausal.stats.results import Result

__all__ = ["TrendTestResult", "HeterogeneityTestResult", "BinomialTestResult"]


@dataclass(frozen=True)
class TrendTestResult(Result):
    """Result of :func:`ipcausal.stats.trend_test`, the within-prompt test of a monotone trend.

    ``statistic`` is ``T = Σ_prompts Σ_b (c_b − c̄) · y[prompt, b]``; ``slope`` is
    ``T / (n · Σ_b (c_b − c̄)²)``, the mean over the prompts of each prompt's least-squares
    slope of y on the scores (the effect, in units of y per unit of score); ``level_means``
    the mean of each level's column.  ``method`` is ``"exact-enumeration"`` or
    ``"monte-carlo"`` (then ``n_resamples`` relabelings and ``seed``, the integer seed of the
    counter-based stream, so the draws can be replayed); ``pvalue_se`` its Monte Carlo standard
    error (0 when exact).  ``n_constant`` counts the prompts whose k responses are all equal
    (they add nothing to T under any relabeling).
    """

    statistic: float
    pvalue: float
    alternative: str
    method: str
    n: int
    k: int
    null_hypothesis: str
    scores: tuple[float, ...]
    slope: float
    level_means: tuple[float, ...]
    n_resamples: int | None
    pvalue_se: float
    n_constant: int
    seed: int | None = None


@dataclass(frozen=True)
class HeterogeneityTestResult(Result):
    """Result of :func:`ipcausal.stats.heterogeneity_test`: does the effect differ between cues?

    ``statistic`` is ``Σ_cues (mean_cue − overall mean)²`` (large values speak against H0, so
    the test has one direction and ``alternative`` is always ``"greater"``); ``cue_means`` the
    mean of each cue's column and ``overall_mean`` their mean.  ``method``, ``n_resamples``,
    ``pvalue_se``, ``n_constant`` and ``seed`` read as in :class:`TrendTestResult`.
    """

    statistic: float
    pvalue: float
    method: str
    n: int
    k: int
    null_hypothesis: str
    cue_means: tuple[float, ...]
    overall_mean: float
    n_resamples: int | None
    pvalue_se: float
    n_constant: int
    seed: int | None = None
    alternative: str = "greater"


@dataclass(frozen=True)
class BinomialTestResult(Result):
    """Result of :func:`ipcausal.stats.binomial_test`: an exact test of a success probability.

    ``statistic`` is the number of successes ``k`` of ``n`` trials; ``proportion`` is k / n and
    ``p0`` the probability under H0 (for the probe, chance: 1 / number of options).
    ``ci_low``/``ci_high`` is the two-sided exact (Clopper–Pearson) interval of the
    probability at ``confidence_level``, whatever ``alternative`` is.
    """

    statistic: int
    pvalue: float
    alternative: str
    method: str
    n: int
    null_hypothesis: str
    proportion: float
    p0: float
    ci_low: float
    ci_high: float
    confidence_level: float
    ci_method: str = "clopper-pearson"
