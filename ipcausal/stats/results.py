"""Frozen result objects of the statistical functions (no pandas, nothing from above ``stats``).

Every result has scipy's field names where scipy has one (``statistic``, ``pvalue``,
``confidence_level``, an interval as ``ci_low``/``ci_high``) plus ``alternative``, ``method``,
``n`` and ``null_hypothesis`` stated in words, and ``to_dict()`` (plain, JSON-ready values).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["Result", "SignFlipResult", "SignTestResult", "PBResult", "MeanCIResult", "EquivalenceResult", "plain",
           "SequentialTestResult", "SequentialSignResult", "EMultipleResult", "WestfallYoungResult", "MMDTestResult"]


def plain(value: Any) -> Any:
    """``value`` with numpy scalars, tuples and nested results made plain Python (JSON-ready)."""
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars
        return value.tolist()
    return value


class Result:
    """Base of the frozen results: ``to_dict()`` gives the fields as plain values."""

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain Python values (JSON-ready)."""
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True)
class SignFlipResult(Result):
    """Result of :func:`ipcausal.permutation_test`, the paired sign-flip test of mean(Δ) = 0.

    Not scipy's ``PermutationTestResult`` (that one carries the null distribution): this one
    says which route gave p.  ``statistic`` is mean(Δ); ``pvalue`` the p-value for
    ``alternative``; ``method`` one of ``"exact-enumeration"``, ``"exact-lattice"``, ``"exact-lattice-fft"``,
    ``"monte-carlo"``, ``"saddlepoint"``, ``"paper-compat"``.  ``pvalue_se`` is the Monte Carlo
    standard error (0 when exact).  ``ci_low``/``ci_high`` bound mean(Δ) at
    ``confidence_level``, by the method named in ``ci_method`` (the shifts δ the two-sided
    test of Δ − δ does not reject: ``"exact-inversion"``, ``"exact-lattice-inversion"``,
    ``"monte-carlo-inversion"``, ``"saddlepoint-inversion"``); ``effect_size`` is Cohen's
    d_z = mean(Δ)/sd(Δ).  ``seed`` is the integer seed of the counter-based stream that drew the
    sign vectors (Monte Carlo only), so the same draws can be replayed.
    """

    statistic: float
    pvalue: float
    alternative: str
    method: str
    n: int
    null_hypothesis: str
    n_resamples: int | None
    pvalue_se: float
    n_zero: int
    ci_low: float
    ci_high: float
    confidence_level: float
    effect_size: float
    ci_method: str = "student-t"
    seed: int | None = None  # the counter-based stream's integer seed (Monte Carlo only)


@dataclass(frozen=True)
class SignTestResult(Result):
    """Result of :func:`ipcausal.sign_test`, the one-sample sign test of median(s) = m0.

    ``statistic`` is the count whose binomial tail gives p: n₋ = #{s < m0} for
    ``alternative="less"``, n₊ = #{s > m0} for ``"greater"``, max(n₋, n₊) for
    ``"two-sided"``.  ``n`` counts the values that differ from m0 (ties dropped, reported in
    ``n_ties``).  ``median`` and ``share_below`` are the effect; ``ci_low``/``ci_high`` bound
    the median (distribution-free order-statistic interval).
    """

    statistic: int
    pvalue: float
    alternative: str
    method: str
    n: int
    null_hypothesis: str
    m0: float
    n_total: int
    n_ties: int
    n_below: int
    n_above: int
    median: float
    share_below: float
    ci_low: float
    ci_high: float
    confidence_level: float
    ci_method: str = "binomial-order-statistics"


@dataclass(frozen=True)
class PBResult(Result):
    """Personalization bias (SPEC §4): ``statistic`` is the population SD of the per-background means."""

    statistic: float
    ci_low: float
    ci_high: float
    confidence_level: float
    n_resamples: int
    means: dict[str, Any]
    counts: dict[str, int]
    method: str = "percentile-bootstrap"

    def __float__(self) -> float:
        return float(self.statistic)


@dataclass(frozen=True)
class MeanCIResult(Result):
    """Result of :func:`ipcausal.stats.mean_ci`: ``statistic`` = mean, a Student t interval around it."""

    statistic: float
    ci_low: float
    ci_high: float
    confidence_level: float
    n: int
    method: str = "student-t"


@dataclass(frozen=True)
class EquivalenceResult(Result):
    """Result of :func:`ipcausal.stats.equivalence_test`: two one-sided tests (TOST).

    H0: |mean(Δ)| ≥ ``margin`` against H1: |mean(Δ)| < ``margin``.  ``pvalue`` is the larger of
    ``pvalue_lower`` (H1 mean > −margin) and ``pvalue_upper`` (H1 mean < margin); ``equivalent``
    is ``pvalue <= alpha``, and holds exactly when ``ci_low``/``ci_high`` (the interval at
    ``confidence_level`` = 1 − 2α) lie inside (−margin, margin).  ``ci_method`` says which
    interval: ``"betting-fixed-n"`` (``method="betting"``: valid for every distribution on
    [−``bound``, ``bound``]) or a sign-flip inversion (the shift model; ``method`` the route of the
    sign-flip law).
    """

    statistic: float
    pvalue: float
    equivalent: bool
    margin: float
    alpha: float
    pvalue_lower: float
    pvalue_upper: float
    ci_low: float
    ci_high: float
    confidence_level: float
    method: str
    ci_method: str
    n: int
    n_resamples: int | None
    null_hypothesis: str
    bound: float | None = None


@dataclass(frozen=True)
class SequentialTestResult(Result):
    """Result of :func:`ipcausal.stats.sequential_test`: a betting e-process monitored after every pair.

    Read as the report of an auditor who looked after every pair and stopped at the first time
    the e-value reached 1/α.  ``reject`` is whether it did; ``stopped_at`` the pairs seen then
    (``None`` if never: the stream ran out).  Every other field is taken at the stop, or at
    the end when there was none: ``n`` pairs used (``n_available`` given), ``statistic`` =
    mean(Δ) of the pairs used, ``e_value`` the e-process there, ``pvalue`` the anytime-valid
    p = min(1, 1 / running max of the e-process), and ``ci_low``/``ci_high`` the confidence
    sequence for the mean of Δ (time-uniform at ``confidence_level`` = 1 − α; ``ci_method``
    names it: ``"betting-mixture-grid"`` or ``"predictable-plugin-empirical-bernstein"``).
    """

    reject: bool
    stopped_at: int | None
    pvalue: float
    e_value: float
    statistic: float
    n: int
    n_available: int
    ci_low: float
    ci_high: float
    confidence_level: float
    alpha: float
    bound: float
    alternative: str
    method: str
    null_hypothesis: str
    ci_method: str = "betting-mixture-grid"


@dataclass(frozen=True)
class SequentialSignResult(Result):
    """Result of :func:`ipcausal.stats.sequential_sign_test`, the sign test's anytime-valid twin.

    Bets on 1{s < m0} among the values that differ from m0 (ties dropped, counted in
    ``n_ties``).  ``stopped_at`` counts every value seen, ties included (each was a paid
    pair); ``n`` the untied values used.  ``statistic`` is the share of the untied values below
    m0, ``ci_low``/``ci_high`` a confidence sequence for that share (its null value is 1/2);
    the other fields read as in :class:`SequentialTestResult`.
    """

    reject: bool
    stopped_at: int | None
    pvalue: float
    e_value: float
    statistic: float
    n: int
    n_available: int
    n_ties: int
    n_below: int
    m0: float
    ci_low: float
    ci_high: float
    confidence_level: float
    alpha: float
    alternative: str
    method: str
    null_hypothesis: str
    ci_method: str = "betting-mixture-grid"


@dataclass(frozen=True)
class EMultipleResult(Result):
    """Result of :func:`ipcausal.stats.e_holm` and :func:`ipcausal.stats.e_bonferroni` (family-wise error ≤ α
    under any dependence between the e-values).

    ``e_adjusted[k]`` is the adjusted e-value of hypothesis k; ``reject[k]`` is
    ``e_adjusted[k] >= 1/alpha``; ``any_reject`` is the family's verdict (some hypothesis
    rejected); ``n`` the number of hypotheses.
    """

    reject: tuple[bool, ...]
    e_adjusted: tuple[float, ...]
    e_values: tuple[float, ...]
    alpha: float
    n: int
    method: str
    null_hypothesis: str

    @property
    def any_reject(self) -> bool:
        """Whether any hypothesis is rejected (the model's verdict across its groups)."""
        return any(self.reject)


@dataclass(frozen=True)
class WestfallYoungResult(Result):
    """Result of :func:`ipcausal.stats.westfall_young`, the joint test across backgrounds.

    ``pvalue`` is the omnibus p for "no background matters" (single-step max-T, equal to the
    smallest adjusted p) and ``statistic`` its statistic, the largest |mean difference| (or
    the largest oriented one, one-sided).  Per pair, in the order of ``pairs`` (column
    indices (a, b)): ``pair_statistics`` = mean(y_b − y_a), ``raw_pvalues`` (the same
    randomisation, one pair at a time), ``adjusted_pvalues`` (Westfall–Young step-down max-T,
    monotone in the ranks).  ``n`` prompts (``n_constant`` of them scored alike by every
    background, which no relabeling changes), ``k`` backgrounds; ``pvalue_se`` is the Monte
    Carlo standard error of ``pvalue`` (0 when exact).
    """

    statistic: float
    pvalue: float
    alternative: str
    method: str
    n: int
    k: int
    null_hypothesis: str
    n_resamples: int | None
    pvalue_se: float
    pairs: tuple[tuple[int, int], ...]
    pair_statistics: tuple[float, ...]
    raw_pvalues: tuple[float, ...]
    adjusted_pvalues: tuple[float, ...]
    n_constant: int = 0
    procedure: str = "step-down"


@dataclass(frozen=True)
class MMDTestResult(Result):
    """Result of :func:`ipcausal.stats.mmd_permutation_test`, the free-text test of Definition 1.

    ``statistic`` is the mean over pairs of (mean within-side similarity − mean cross-side
    similarity), diagonal excluded (half the unbiased MMD² estimate); ``pair_statistics``
    holds each pair's value.  ``pvalue`` is one-sided (a large statistic says the sides
    differ); ``n`` pairs with ``r`` responses per side; ``pvalue_se`` is the Monte Carlo
    standard error (0 when exact).
    """

    statistic: float
    pvalue: float
    alternative: str
    method: str
    n: int
    r: int
    null_hypothesis: str
    n_resamples: int | None
    pvalue_se: float
    pair_statistics: tuple[float, ...]
