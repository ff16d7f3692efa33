"""The typed optional parts of a result: a group's equivalence test and audit run, a model's joint test, an audit.

A :class:`~ipcausal.study.results.GroupResult` carries an :class:`EquivalenceInfo` when the test
had a margin and a :class:`SequentialInfo` when it came from an audit (``None`` otherwise); a
:class:`~ipcausal.study.results.Report` carries one :class:`OmnibusInfo` per model under
``correction="westfall-young"`` and an :class:`AuditInfo` after an audit.  Import them from
:mod:`ipcausal.study.results`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ipcausal.stats.results import Result

__all__ = ["MDEInfo", "JudgeAgreement", "HumanInfo", "HumanSource", "EquivalenceInfo", "SequentialInfo", "OmnibusInfo", "AuditInfo", "TrendInfo", "CueEffect", "StrataInfo",
           "ExamplePair"]


@dataclass(frozen=True)
class MDEInfo(Result):
    """How blind a group's test was: the minimal detectable effect at ``power`` (0.8) for its n and spread.

    ``effect`` is the smallest |mean Δ| per pair (interval outcomes) — or, for the sign test, the
    smallest share of untied pairs below m0 — that the group's test detects with probability
    ``power`` at the per-test ``level`` (``level_name``: α, or α/m for a family of m groups), over
    ``n`` tested ``unit`` s; ``inf`` when none does at this n.  ``sd`` is the spread it was computed
    from (the observed standard deviation of the tested differences, per pair, when
    ``from_observed``) and ``d_z`` = effect / sd the same MDE standardised; ``note`` says how
    (:func:`ipcausal.study.mde.group_mde`).

    Examples
    --------
    >>> from ipcausal.study.results import MDEInfo
    >>> MDEInfo(effect=0.6, power=0.8, n=30, unit="pairs", level=0.05, level_name="alpha", sd=1.2,
    ...         from_observed=True, d_z=0.5, test="permutation", note="").effect
    0.6
    """

    effect: float
    power: float
    n: int
    unit: str
    level: float
    level_name: str
    sd: float | None
    from_observed: bool
    d_z: float | None
    test: str
    note: str = ""


@dataclass(frozen=True)
class EquivalenceInfo(Result):
    """The equivalence test of one group at the margin ε (``ipcausal.test(..., margin=ε)``).

    ``verdict`` is ``"reject"`` (H0 of no effect rejected after the correction), ``"equivalent"``
    (the TOST p ``pvalue`` ≤ α: the (1 − 2α) interval ``ci_low``/``ci_high`` lies inside (−ε, ε))
    or ``"inconclusive"``; ``confidence_level`` is 1 − 2α.  ``pvalue`` is ``None`` where the
    decision is read off the interval alone (clusters of unequal sizes: no TOST p).  ``ci_method``
    names the tests: ``"betting-fixed-n"`` (a bound on |Δ| known: level α for every distribution
    on it) or ``"shift: …"`` (sign flips of Δ ∓ ε, exact only when those are symmetric).

    Examples
    --------
    >>> from ipcausal.study.results import EquivalenceInfo
    >>> EquivalenceInfo(margin=0.2, verdict="equivalent", pvalue=0.01, ci_low=-0.1, ci_high=0.1,
    ...                 confidence_level=0.9).to_dict()["verdict"]
    'equivalent'
    """

    margin: float
    verdict: str  # one of study.equivalence.VERDICTS
    pvalue: float | None
    ci_low: float
    ci_high: float
    confidence_level: float
    ci_method: str = ""  # "betting-fixed-n" (every bounded distribution) or "shift: …" (the sign-flip TOST)


@dataclass(frozen=True)
class SequentialInfo(Result):
    """How the audit (:func:`ipcausal.audit`) ran one group: pairs sent, why it stopped, the e-process.

    ``n_available`` pairs of the group were in the input and ``n_sent`` were sent; ``stop_reason`` is
    one of ``"rejected"``, ``"equivalent"``, ``"exhausted"``, ``"max_pairs"``; ``e_value`` is the
    e-process at the stop and ``e_adjusted`` the same after e-Holm/e-Bonferroni; the path has
    ``path_e`` after ``path_n`` pairs sent, one point per batch (thinned to at most 400).

    Examples
    --------
    >>> from ipcausal.study.results import SequentialInfo
    >>> SequentialInfo(n_available=100, n_sent=32, stop_reason="rejected", e_value=25.0, e_adjusted=25.0,
    ...                path_n=(0, 16, 32), path_e=(1.0, 4.0, 25.0)).stop_reason
    'rejected'
    """

    n_available: int
    n_sent: int
    stop_reason: str
    e_value: float
    e_adjusted: float
    path_n: tuple[int, ...] = ()
    path_e: tuple[float, ...] = ()


@dataclass(frozen=True)
class OmnibusInfo(Result):
    """The joint test of one model's family (``correction="westfall-young"``): "no background matters".

    Prompt labels permuted (:func:`ipcausal.stats.joint.westfall_young`): ``pvalue`` and
    ``statistic`` of the omnibus max-T test over ``n_prompts`` prompts and ``k`` backgrounds,
    ``method`` and ``n_resamples`` of its route, ``reject`` at the Report's α.

    Examples
    --------
    >>> from ipcausal.study.results import OmnibusInfo
    >>> OmnibusInfo(pvalue=0.01, statistic=3.2, method="exact", n_prompts=20, k=3, n_resamples=None,
    ...             null_hypothesis="H0: no background matters", reject=True).reject
    True
    """

    pvalue: float
    statistic: float
    method: str
    n_prompts: int
    k: int
    n_resamples: int | None
    null_hypothesis: str
    reject: bool


@dataclass(frozen=True)
class AuditInfo(Result):
    """The counts and settings of an audit (:func:`ipcausal.audit`), kept in ``Report.audit``.

    Pairs available, sent and scored; model requests of the full design, sent and saved; the
    batches; why it ``stopped`` (``"decided"``: every group rejected or shown equivalent,
    ``"exhausted"``, ``"max_pairs"``); the settings (``batch_size``, ``max_pairs``, ``margin``,
    the bound on |Δ|, the betting rule ``bet``, ``alternative``, ``cluster``); the e-value
    thresholds (1/α per group, m/α for all of them under e-Holm/e-Bonferroni); the number of
    groups; and the integer ``seed`` of the pair order when ``rng`` was one.

    Examples
    --------
    >>> from ipcausal.study.results import AuditInfo
    >>> a = AuditInfo(pairs_available=300, pairs_sent=64, pairs_scored=64, requests_full=600,
    ...               requests_sent=128, requests_saved=472, batches=4, stopped="decided", batch_size=16,
    ...               max_pairs=None, margin=None, bound=4.0, bet="mixture", alternative="two-sided",
    ...               threshold=20.0, threshold_all=20.0, groups=1)
    >>> a.requests_saved, a.stopped
    (472, 'decided')
    """

    pairs_available: int
    pairs_sent: int
    pairs_scored: int
    requests_full: int
    requests_sent: int
    requests_saved: int
    batches: int
    stopped: str
    batch_size: int
    max_pairs: int | None
    margin: float | None
    bound: float | None  # the bound on |Δ| (None for similarities: the sign test needs none)
    bet: str
    alternative: str
    threshold: float
    threshold_all: float
    groups: int
    seed: int | None = None
    cluster: str | None = None


@dataclass(frozen=True)
class TrendInfo(Result):
    """The trend test of one model over ordered levels (``ipcausal.test(pairs, design=Design(trend=[level, …]))``).

    :func:`ipcausal.stats.trend_test` on ``y`` with one row per ``prompt_id`` and one column per
    level (in ``levels``' order, scores 1..k): ``statistic`` T, ``pvalue``, ``slope`` (the mean
    within-prompt slope per level step), ``level_means``, ``n_prompts``, ``method``,
    ``n_resamples``, ``null_hypothesis``, ``reject`` at the Report's α (the trend row is one test
    of its own, outside the pairwise family); ``n_incomplete``: prompts left out because they
    lack a score under some level.

    Examples
    --------
    >>> from ipcausal.study.results import TrendInfo
    >>> TrendInfo(model="m", levels=("a", "b", "c"), statistic=4.0, pvalue=0.02, slope=0.1,
    ...           level_means=(0.1, 0.2, 0.3), n_prompts=20, method="exact-enumeration", n_resamples=None,
    ...           alternative="two-sided", null_hypothesis="H0", reject=True).levels
    ('a', 'b', 'c')
    """

    model: str
    levels: tuple[str, ...]
    statistic: float
    pvalue: float
    slope: float
    level_means: tuple[float, ...]
    n_prompts: int
    method: str
    n_resamples: int | None
    alternative: str
    null_hypothesis: str
    reject: bool
    n_incomplete: int = 0


@dataclass(frozen=True)
class CueEffect(Result):
    """One cue's (stratum's) test of a background pair: what :func:`ipcausal.test` gives on its pairs alone."""

    cue: str
    n: int
    effect: float
    ci_low: float
    ci_high: float
    pvalue: float


@dataclass(frozen=True)
class StrataInfo(Result):
    """One group's effect per cue (``ipcausal.test(pairs, design=Design(strata=COLUMN))``), pooled and heterogeneity tests.

    ``cues`` holds each stratum's :class:`CueEffect` (the unadjusted test of that stratum's pairs
    alone).  The pooled test stratified by cue: the sign-flip test of each pair's Δ weighted
    1/(S·n_s) (S cues, n_s pairs of the pair's cue), so ``pooled_effect`` is the mean of the
    cues' mean Δ, each cue counting once; its p is ``pooled_pvalue``.  The heterogeneity test
    (:func:`ipcausal.stats.heterogeneity_test`, H0 "the cue does not matter", cue labels permuted
    within each prompt) needs every prompt to carry every cue once; ``heterogeneity_pvalue`` is
    ``None`` otherwise and ``heterogeneity_note`` says why.

    Examples
    --------
    >>> from ipcausal.study.results import CueEffect, StrataInfo
    >>> c = CueEffect(cue="spelling", n=10, effect=0.2, ci_low=0.0, ci_high=0.4, pvalue=0.05)
    >>> StrataInfo(model="m", group="A vs B", column="cue_kind", cues=(c,), pooled_effect=0.2, pooled_ci_low=0.0,
    ...            pooled_ci_high=0.4, pooled_pvalue=0.05, heterogeneity_pvalue=None, heterogeneity_statistic=None,
    ...            heterogeneity_n=0, heterogeneity_note="one cue").cues[0].cue
    'spelling'
    """

    model: str
    group: str
    column: str
    cues: tuple[CueEffect, ...]
    pooled_effect: float
    pooled_ci_low: float
    pooled_ci_high: float
    pooled_pvalue: float
    heterogeneity_pvalue: float | None
    heterogeneity_statistic: float | None
    heterogeneity_n: int
    heterogeneity_note: str = ""


@dataclass(frozen=True)
class JudgeAgreement(Result):
    """How the judge's scores f agree with people's h for one background, over the labelled pairs.

    ``n`` responses; ``mean_difference`` = mean(h − f) (the judge's bias on this background, on the
    human scale); ``mean_abs_difference`` = mean |h − f|; ``correlation`` Pearson's r (NaN when
    either has no spread); ``exact`` the share with h == f.
    """

    background: str
    n: int
    mean_difference: float
    mean_abs_difference: float
    correlation: float
    exact: float


@dataclass(frozen=True)
class HumanInfo(Result):
    """One group's effect on the human scale (``ipcausal.test(pairs, human=…)``), beside the judge-only one.

    ``estimate`` is mean Δ on the human scale by PPI++ (:func:`ipcausal.stats.ppi.ppi_mean_test`: the
    judge's Δ on all ``n_units`` units, corrected by its error on the ``n_labelled`` labelled ones;
    ``lam`` the power-tuned weight) with its ``ci_low``/``ci_high`` at ``confidence_level``, its
    ``pvalue`` and, after the Report's correction within the model, ``pvalue_adjusted`` and ``reject``;
    ``unit`` is "pairs" or "clusters" (cluster means).  ``human_*`` is the human-only estimate of the
    labelled units.  ``judge_effect`` and ``judge_reject`` are the judge-only result of the group.
    The judge-bias test: ``bias`` = mean over labelled units of (h − f)(b) − (h − f)(a), the
    difference between the backgrounds of the judge's error, its interval and the sign-flip p
    ``bias_pvalue`` (H0: the judge's error has the same mean for both backgrounds).  ``agreement``:
    one :class:`JudgeAgreement` per background.  ``note``: a plain-words line when the judge's bias
    could explain (or hide) the judge-only verdict, else "".
    """

    model: str
    group: str
    background_a: str
    background_b: str
    unit: str
    n_units: int
    n_labelled: int
    estimate: float
    ci_low: float
    ci_high: float
    confidence_level: float
    pvalue: float
    pvalue_adjusted: float
    reject: bool
    lam: float
    se: float
    human_estimate: float
    human_ci_low: float
    human_ci_high: float
    human_pvalue: float
    judge_effect: float
    judge_reject: bool
    bias: float
    bias_ci_low: float
    bias_ci_high: float
    bias_pvalue: float
    agreement: tuple[JudgeAgreement, ...]
    null_hypothesis: str
    bias_null_hypothesis: str
    method: str
    note: str = ""


@dataclass(frozen=True)
class HumanSource(Result):
    """Where the human scores came from: the file, the pairs labelled and whether they are the package's own
    seeded draw (``own_draw``; then ``seed``, ``drawn`` and ``population``, and ``same_population``:
    whether the tested pairs are the ones drawn from); ``assumption`` says in one line what the PPI
    estimate assumes when they are not."""

    source: str
    n_labelled: int
    own_draw: bool
    seed: int | None = None
    drawn: int | None = None
    population: int | None = None
    same_population: bool | None = None
    assumption: str = ""


@dataclass(frozen=True)
class ExamplePair(Result):
    """One example pair of a group, oriented as the group: side a (``background_a``) then side b.

    ``rule`` says why it was chosen (``"largest |Δ|"``, ``"lowest similarity"`` or ``"random (seed 0)"``);
    ``delta`` is score_b − score_a (directed outcomes) and ``similarity`` the pair's similarity
    (similarity outcomes), the other ``None``; a response or score the pairs lack is ``None``.
    """

    model: str
    group: str
    pair_id: str
    rule: str
    background_a: str
    background_b: str
    prompt_a: str
    prompt_b: str
    response_a: str | None = None
    response_b: str | None = None
    score_a: float | None = None
    score_b: float | None = None
    delta: float | None = None
    similarity: float | None = None
