"""``ipcausal.test(pairs)``: one test per background pair, corrected within each model.

The steps, each a function of its own: :func:`settings` (validate the options), :func:`groups`
(group the pairs by model and unordered background pair, orient them and take the values that
are tested), :func:`test_group` (one test per group), :func:`correct` (the correction within each
model's family, with the Monte Carlo resolution check), :func:`summarise` (PB and the
per-background means) and :func:`test` itself, which chains them into a
:class:`~ipcausal.study.results.Report`.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ipcausal.outcomes import directed, get_outcome, resolve_outcome
from ipcausal.pairs import PairSet
from ipcausal._validate import as_generator, choice, open_unit, positive_int, seed_from
from ipcausal.stats.multitest import CORRECTIONS, adjust_pvalues
from ipcausal.stats.null import null_distribution, sample_summary
from ipcausal.stats.permutation import METHODS, paper_compat_pvalue_seeded, permutation_test
from ipcausal.stats.sign import paper_compat_sign_pvalue, sign_test
from ipcausal.stats.bounded import bounded_mean_ci
from ipcausal.stats.summary import personalization_bias
from ipcausal.study.groups import (
    UNKNOWN_MODEL,
    ClusterWarning,
    Group,
    cluster_interval,
    groups,
    validate_cluster,
    validate_order,
)
from ipcausal.study.defaults import DEFAULTS, OUTCOMES, PAPER_N_RESAMPLES
from ipcausal.study.inputs import as_pairset
from ipcausal.study.equivalence import known_bound, mean_interval, validate_margin, verdict, with_equivalence
from ipcausal.study.examples import example_pairs
from ipcausal.study.joint import JOINT_CORRECTIONS, correct_joint
from ipcausal.study.humanppi import human_report
from ipcausal.study.mde import group_mde
from ipcausal.study.options import Design, check_alternative, check_m0, given
from ipcausal.study.ordered import design_parts, validate_design
from ipcausal.study.results import GroupResult, Report

__all__ = ["test", "PAPER_COMPAT", "OUTCOMES", "DEFAULTS", "PAPER_N_RESAMPLES", "MonteCarloResolutionWarning",
           "ClusterWarning", "LevelUnreachableWarning",
           "Group", "Settings"]

#: The ``method`` of :func:`test` that reproduces the study's released code (SPEC §6).
PAPER_COMPAT = "paper-compat"


class MonteCarloResolutionWarning(UserWarning):
    """A Monte Carlo p-value cannot reach the corrected significance level."""


class LevelUnreachableWarning(MonteCarloResolutionWarning):
    """A group has too few informative pairs for any p to reach its (corrected) level.

    A subclass of :class:`MonteCarloResolutionWarning` (both say a p cannot reach the level), so
    code that files those warnings away (they are in ``Report.warnings``) files these too.
    """


@dataclass(frozen=True)
class Settings:
    """The options of one :func:`test` call once checked against its pairs (the outcome they carry, the
    default alternative, the cluster and order columns): what the steps read.  Each option is checked by
    the one check of :mod:`ipcausal.study.options` (``check_m0``, ``check_alternative``, ``check_margin`` …)
    that :class:`~ipcausal.study.options.TestOptions` and :class:`~ipcausal.study.options.AuditSettings`
    use too."""

    outcome: str
    alpha: float
    correction: str
    m0: float
    method: str
    n_resamples: int
    paper_compat: bool
    alternative: str
    cluster: str | None = None
    order: tuple[str, ...] | None = None
    margin: float | None = None
    bound: float | None = None  # a known bound on |Δ| (Design.bound, else the pairs' `bound` column)


def _resolve_outcome(ps: PairSet, outcome: str) -> str:
    outcome = resolve_outcome(outcome, ps.outcome)
    needed = get_outcome(outcome).columns[0]
    if needed not in ps:
        raise ValueError(f"`outcome`={outcome!r} needs the column `{needed}`, which `pairs` does not have")
    return outcome


def settings(ps: PairSet, *, outcome: str, alpha: float, correction: str, m0: float, method: str,
             n_resamples: int | None, paper_compat: bool, alternative: str | None, cluster: str | None = None,
             order: Any = None, margin: Any = None, bound: float | None = None) -> Settings:
    """Validate the options of :func:`test` (errors name the parameter)."""
    outcome = choice(outcome, "outcome", OUTCOMES)
    alpha = open_unit(alpha, "alpha")
    correction = choice(correction, "correction", CORRECTIONS + JOINT_CORRECTIONS)
    m0 = check_m0(m0)
    method = choice(method, "method", METHODS)
    if not isinstance(paper_compat, bool):
        raise TypeError("`paper_compat` must be True or False")
    if n_resamples is None:
        n_resamples = PAPER_N_RESAMPLES if paper_compat else DEFAULTS["n_resamples"]
    n_resamples = positive_int(n_resamples, "n_resamples")
    outcome = _resolve_outcome(ps, outcome)
    if alternative is None:
        # the study's released code counts s > m0: its alternative is "greater"
        alternative = "greater" if paper_compat and not directed(outcome) else get_outcome(outcome).default_alternative
    alternative = check_alternative(alternative)
    cluster = validate_cluster(cluster, ps)
    backgrounds = {str(b) for b in ps["background_i"].unique()} | {str(b) for b in ps["background_j"].unique()}
    order = validate_order(order, backgrounds)
    margin = validate_margin(margin, outcome)
    if correction in JOINT_CORRECTIONS:
        if not directed(outcome) or paper_compat:
            raise ValueError(f"`correction`={correction!r} needs an interval outcome and the method as stated "
                             "(not `method`='paper-compat')")
        if cluster not in (None, "prompt_id"):
            raise ValueError(f"`correction`={correction!r} randomises whole prompts (`prompt_id`); it cannot "
                             f"also take `cluster`={cluster!r}")
    return Settings(outcome, alpha, "none" if paper_compat else correction, float(m0), method, n_resamples,
                    paper_compat, alternative, cluster, order, margin, known_bound(ps, bound, outcome))


def test_group(group: Group, st: Settings, gen: np.random.Generator) -> GroupResult:
    """One group's test: the sign-flip test (interval) or the sign test (similarity), unadjusted.

    The unit of randomisation is the pair, or the cluster when ``cluster`` was given.
    """
    a, b, model, v = group.a, group.b, group.model, group.values
    unit = "clusters" if group.n_clusters is not None else "pairs"
    if directed(st.outcome):
        if v.size < 2:
            raise ValueError(f"`pairs`: group {a} vs {b} ({model}) has {v.size} {unit[:-1]}; a test needs >= 2")
        res: Any = permutation_test(v, alternative=st.alternative, method=st.method, n_resamples=st.n_resamples,
                                    rng=gen)
        if st.paper_compat:
            seed = seed_from(gen)
            p = paper_compat_pvalue_seeded(v, n_resamples=st.n_resamples, seed=seed)
            res = replace(res, pvalue=p, method="paper-compat", n_resamples=st.n_resamples, pvalue_se=math.nan,
                          seed=seed)
        equal = group.n_clusters is None or bool(np.all(group.sizes == group.sizes[0]))
        if equal:
            effect = res.statistic / group.scale
            ci = (res.ci_low / group.scale, res.ci_high / group.scale)
        else:
            effect = float(v.sum() / (group.sizes * (group.samples or 1)).sum())
            lo, hi, how = cluster_interval(group, st.method, st.n_resamples, res.confidence_level, pvalue=res.pvalue
                                           if st.alternative == "two-sided" and not st.paper_compat else None)
            ci = (lo, hi)
            res = replace(res, ci_method=how)
        ci_method = f"shift: {res.ci_method}"  # the sign-flip inversion: a shift δ under "Δ − δ symmetric"
        if st.bound is not None and not st.paper_compat:  # the mean's own interval, valid for every shape
            lo, hi, ci_method = mean_interval(group, st.bound, res.confidence_level)
            ci = (lo, hi)
        test_name, statistic, observed = "permutation", res.statistic, res.statistic
    else:
        res = sign_test(v, m0=st.m0, alternative=st.alternative)
        if st.paper_compat:
            k = int(np.count_nonzero(v > st.m0))
            res = replace(res, pvalue=paper_compat_sign_pvalue(v, st.m0), method="paper-compat", statistic=k,
                          n=int(v.size))
        test_name, statistic, effect, observed = "sign", float(res.statistic), res.median, float(res.statistic)
        ci = (res.ci_low, res.ci_high)
        ci_method = f"median: {res.ci_method}"
    label = f"Δ = score({b}) − score({a})" if directed(st.outcome) else "similarity"
    if group.n_clusters is not None:
        label += f", summed per cluster ({group.n_clusters} clusters)" if directed(st.outcome) else \
            f", mean per cluster ({group.n_clusters} clusters)"
    return GroupResult(
        model=model, group=f"{a} vs {b}", background_a=a, background_b=b, outcome=st.outcome, test=test_name,
        n=group.n_pairs, statistic=float(statistic), effect=float(effect), ci_low=float(ci[0]),
        ci_high=float(ci[1]), pvalue=float(res.pvalue), pvalue_adjusted=float(res.pvalue), reject=False,
        detail=res, data=sample_summary(v, label=label), null=null_distribution(v, res), observed=float(observed),
        n_clusters=group.n_clusters, unit=unit, ci_method=ci_method,
    )


def correct(results: list[GroupResult], st: Settings) -> tuple[list[GroupResult], list[str]]:
    """Adjust the p-values within each model's family; warn where Monte Carlo cannot reach the level."""
    warn: list[str] = []
    out: list[GroupResult] = []
    for model in sorted({r.model for r in results}):
        fam = [r for r in results if r.model == model]
        adjusted = adjust_pvalues(np.array([r.pvalue for r in fam]), st.correction)
        m = len(fam)
        threshold = st.alpha / m if st.correction not in ("none", "bh", "by") else st.alpha
        for r, p_adj in zip(fam, adjusted):
            d = r.detail
            if getattr(d, "method", "") in ("monte-carlo", "paper-compat") and getattr(d, "n_resamples", None):
                floor = 1.0 / (d.n_resamples + 1) if d.method == "monte-carlo" else 1.0 / d.n_resamples
                if floor > threshold:
                    warn.append(
                        f"{model}: {r.background_a} vs {r.background_b}: a Monte Carlo p with L={d.n_resamples} "
                        f"cannot fall below {floor:.2g}, above the corrected level {threshold:.2g}; raise "
                        f"`n_resamples` well above {math.ceil(1 / threshold)} or use method='exact'/'saddlepoint'"
                    )
            short = _unreachable(r, threshold, st.alternative)
            if short:
                warn.append(f"{model}: {r.background_a} vs {r.background_b}: {short}")
            out.append(replace(r, pvalue_adjusted=float(p_adj), reject=bool(p_adj <= st.alpha)))
    return out, warn


def _unreachable(r: GroupResult, threshold: float, alternative: str) -> str:
    """Why a group cannot reject at ``threshold`` whatever its data (exact tests), or ``""``.

    The most extreme outcome of n informative units (non-zero Δ, or similarities ≠ m0) has
    probability 2⁻ⁿ under H0, so the smallest attainable p is 2⁻ⁿ one-sided and 2¹⁻ⁿ two-sided.
    """
    d = r.detail
    if getattr(d, "method", "") == "paper-compat" or r.test not in ("sign", "permutation"):
        return ""
    n = int(d.n) - int(getattr(d, "n_zero", 0) or 0)  # sign test: d.n excludes the ties already
    k = 1.0 if alternative != "two-sided" else 2.0
    p_min = min(1.0, k * 0.5**n)
    if p_min <= threshold:
        return ""
    need = math.ceil(math.log2(k / threshold))
    what = "Δ ≠ 0" if r.test == "permutation" else "s ≠ m0"
    unit = f"informative {r.unit} ({what})"
    return (f"cannot reject whatever the data: with {n} {unit} the smallest attainable p is {p_min:.4g}, above "
            f"the (corrected) level {threshold:.2g} it must reach; it needs at least {need} {unit}")


def _responses(sub: Any, cluster: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, backgrounds, units) with each (prompt, background, sample) response once.

    A response is identified by its prompt (``prompt_id``; else the pair) and background: pairs
    that reuse it (SAE in SAE–AAE and SAE–ESL) count it once.  With ``scores_i``/``scores_j`` each
    sample is a response of its own.  ``units`` (the bootstrap's resampling unit) are the prompts, or
    the ``cluster`` column when given.
    """
    n = len(sub)
    prompt = (sub["prompt_id"].astype(str).to_numpy(object) if "prompt_id" in sub.columns
              else sub["pair_id"].astype(str).to_numpy(object))
    unit = sub[cluster].astype(str).to_numpy(object) if cluster is not None else prompt
    samples = "scores_i" in sub.columns and "scores_j" in sub.columns
    if not samples:  # one score a side: the first occurrence of each (prompt, background), vectorised
        import pandas as pd

        bg = np.concatenate([sub[f"background_{s}"].astype(str).to_numpy(object) for s in ("i", "j")])
        keep = ~pd.DataFrame({"p": np.concatenate([prompt, prompt]), "b": bg}).duplicated().to_numpy()
        vals = np.concatenate([sub[f"score_{s}"].to_numpy(np.float64) for s in ("i", "j")])
        return vals[keep], bg[keep], np.concatenate([unit, unit])[keep]
    seen: set[tuple[str, str, int]] = set()
    values: list[float] = []
    labels: list[str] = []
    units: list[str] = []
    for side in ("i", "j"):
        bg = sub[f"background_{side}"].astype(str).to_numpy(object)
        col = sub[f"scores_{side}"].tolist() if samples else sub[f"score_{side}"].to_numpy(np.float64)
        for r in range(n):
            scores = list(col[r]) if samples else [col[r]]
            for k, x in enumerate(scores):
                key = (prompt[r], bg[r], k)
                if key in seen:
                    continue
                seen.add(key)
                values.append(float(x))
                labels.append(bg[r])
                units.append(unit[r])
    return np.asarray(values), np.asarray(labels, dtype=object), np.asarray(units, dtype=object)


def summarise(ps: PairSet, st: Settings, gen: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """PB per model and the mean outcome per background (interval outcomes only).

    Each response counts once (see :func:`_responses`) and the PB bootstrap resamples prompts.
    """
    pb: dict[str, Any] = {}
    backgrounds: dict[str, dict[str, dict[str, float]]] = {}
    if not directed(st.outcome):
        return pb, backgrounds
    need = ("pair_id", "prompt_id", "model", "background_i", "background_j", "score_i", "score_j", "scores_i",
            "scores_j", st.cluster)
    df = ps.to_frame()[list(dict.fromkeys(c for c in need if c is not None and c in ps))]  # no text columns
    models = df["model"].fillna(UNKNOWN_MODEL).astype(str) if "model" in df else None
    for model in sorted(set(models.unique().tolist())) if models is not None else [UNKNOWN_MODEL]:
        sub = df if models is None else df[(models == model).to_numpy()]
        values, labels, units = _responses(sub, st.cluster)
        pb[model] = personalization_bias(values, labels, rng=gen, clusters=units)
        per: dict[str, dict[str, float]] = {}
        for lab in sorted(set(labels)):
            v = values[labels == lab]
            # exact binomial for 0/1, a bootstrap inside the range otherwise; spawn() leaves gen's stream alone
            ci = bounded_mean_ci(v, rng=gen.spawn(1)[0])
            per[str(lab)] = {"mean": ci.statistic, "ci_low": ci.ci_low, "ci_high": ci.ci_high, "n": int(v.size)}
        backgrounds[model] = per
    return pb, backgrounds


def test(
    pairs: Any,
    *,
    alpha: float = DEFAULTS["alpha"],
    correction: str = DEFAULTS["correction"],
    m0: float = DEFAULTS["m0"],
    method: str = DEFAULTS["method"],
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    alternative: str | None = None,
    cluster: str | None = None,
    margin: float | None = None,
    design: Design | None = None,
    human: Any = None,
) -> Report:
    """Test every background pair for implicit personalization and correct for multiplicity.

    Interval outcomes (``score_i``, ``score_j``): paired sign-flip permutation test of
    mean(Δ) = 0, Δ = score(background_b) − score(background_a), where a → b is the orientation
    most pairs of the group are stored in (ties: alphabetical) and pairs stored the other way
    round are flipped; the unit of randomisation is the pair.  Similarity outcomes
    (``similarity``): sign test of median(s) = ``m0`` against median(s) < ``m0``.  Groups are the
    unordered background pairs; the correction family is the background pairs of one model (one
    family per ``model``).

    Parameters
    ----------
    pairs : PairSet, pandas.DataFrame or path
        Scored pairs.
    alpha : float
        Family-wise (or FDR, for ``"bh"``/``"by"``) level in (0, 1).
    correction : str
        One of :data:`ipcausal.stats.multitest.CORRECTIONS`, or ``"westfall-young"``: the joint
        test of each model's background pairs by permuting the background labels of each
        prompt's responses (needs ``prompt_id``; one response per prompt and background); the
        Report's ``omnibus`` then holds the p of "no background matters" per model.
        ``"westfall-young-closed"``: the same by closed testing (each intersection by its own
        relabelings; :func:`ipcausal.stats.westfall_young` with ``procedure="closed"``).
    m0 : float
        Null median of the similarity (sign test), in (0, 1]; the study's 0.8 by default.
    method : {"auto", "exact", "monte-carlo", "saddlepoint", "paper-compat"}
        Permutation-test route (see :func:`ipcausal.permutation_test`).  ``"paper-compat"``
        reproduces the study's released code instead of the method as stated (SPEC §6):
        permutation p = b/L with L = 1,000 (can be 0), the sign test counting s > m0 with
        alternative "greater", no correction; the Report then says ``paper_compat``.  Never the
        default.
    n_resamples : int, optional
        Monte Carlo resamples L (default 100,000; 1,000 with ``"paper-compat"``).
    rng : int, numpy.random.Generator or None
        Randomness for Monte Carlo and the PB bootstrap.
    alternative : str, optional
        Override H1's direction (default: "two-sided" for interval, "less" for similarity).  A
        one-sided alternative needs ``design.order`` when a group's pairs are stored both ways.
    cluster : str, optional
        A column naming each pair's cluster (e.g. ``question_id``: the Farm pairs come two per
        question).  The Δ of a cluster are summed and the sign flips act on whole clusters; each
        group reports ``n_clusters``.  Without it, pairs that share an id column
        (:data:`ipcausal.study.groups.ID_COLUMNS`) raise a :class:`ClusterWarning`.
    margin : float, optional
        An equivalence margin ε > 0 on mean Δ (the smallest effect that matters): each group also
        gets ``equivalence`` = "reject" / "equivalent" (TOST at α: |mean Δ| < ε shown) /
        "inconclusive" — the betting TOST (level α for every distribution of Δ on [−c, c]) where
        a bound c on |Δ| is known, else the sign-flip TOST of the shift model.  Failing to reject
        is never reported as equivalence.
    design : Design, optional
        What the pairs measure and how their backgrounds are arranged
        (:class:`~ipcausal.study.options.Design`, ``ipcausal.Design``): ``outcome`` (which outcome
        to test; ``"auto"`` picks the one present), ``order`` (the backgrounds in order: every
        group is oriented earlier → later), ``trend`` (the levels of an ordered background: adds
        ``Report.trend``, :func:`ipcausal.stats.trend_test`; null: each prompt's responses are
        exchangeable across the levels; unit: the prompt) and ``strata`` (a column naming each
        pair's cue: adds ``Report.strata``, the effect per cue, the pooled test stratified by cue
        and, where each prompt carries every cue once, :func:`ipcausal.stats.heterogeneity_test`;
        see :mod:`ipcausal.study.ordered`) and ``bound`` (a known bound on |Δ|: the interval of
        mean Δ is then the betting interval, valid for every distribution; without it — and
        without the ``bound`` column the score step writes — it is the shift interval;
        ``GroupResult.ci_method`` says which).
    human : HumanLabels, path or table, optional
        Human scores of a uniformly random subset of the pairs (``pair_id, human_i, human_j``: a
        ``LABELS.csv``, the rating sheet of ``ipcausal validate sample`` with its key, a DataFrame, or
        :func:`ipcausal.study.human.read_human`'s labels), for an interval outcome on the same scale as
        the scores.  Adds ``Report.human``: per group, the effect on the human scale by
        prediction-powered inference (PPI++; :mod:`ipcausal.study.humanppi`) beside the judge-only
        result, the human-only estimate, the judge's agreement with people per background and a test
        of the judge's bias by background; ``Report.human_source`` says whether the labels are the
        package's own seeded draw, and a warning states what the estimate assumes when they are not.

    Repeated samples: with ``scores_i``/``scores_j`` columns (``ipcausal score`` writes them when the
    run kept ``samples_i``/``samples_j``), Δ = mean(scores_j) − mean(scores_i) per pair (the sums when
    every pair has the same count of integer scores, so the exact lattice route stays exact).

    Returns
    -------
    Report

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records(
    ...     {"pair_id": k, "background_i": "SAE", "background_j": "AAE", "x_i": "q", "x_j": "q'",
    ...      "score_i": 4, "score_j": 3 - (k % 3 == 0)} for k in range(30))
    >>> report = ipcausal.test(ps)
    >>> report.ip_detected, report.groups[0].effect
    (True, -1.3333333333333333)
    """
    ps = as_pairset(pairs)
    if len(ps) == 0:
        raise ValueError("`pairs` is empty")
    dz = given(design, Design, "design")
    paper_compat = choice(method, "method", METHODS + (PAPER_COMPAT,)) == PAPER_COMPAT
    st = settings(ps, outcome=dz.outcome, alpha=alpha, correction=correction, m0=m0,
                  method=DEFAULTS["method"] if paper_compat else method, n_resamples=n_resamples,
                  paper_compat=paper_compat, alternative=alternative, cluster=cluster, order=dz.order, margin=margin,
                  bound=dz.bound)
    levels, strata = validate_design(ps, dz)
    gen = as_generator(rng)
    raw = []
    gs = list(groups(ps, st.outcome, cluster=st.cluster, order=st.order, one_sided=st.alternative != "two-sided"))
    family = {m: sum(g.model == m for g in gs) for m in {g.model for g in gs}}
    for g in gs:
        r = test_group(g, st, gen)
        r = with_equivalence(r, g, st, gen) if st.margin is not None else r
        raw.append(replace(r, mde=group_mde(g, r.detail, alpha=st.alpha, correction=st.correction,
                                            m=family[g.model], alternative=st.alternative)))
    omnibus: dict[str, Any] = {}
    if st.correction in JOINT_CORRECTIONS:
        results, omnibus = correct_joint(ps, st, raw, gen)
        warn: list[str] = []
    else:
        results, warn = correct(raw, st)
    results = [verdict(r) for r in results]
    for w in warn:
        cls = LevelUnreachableWarning if "cannot reject whatever the data" in w else MonteCarloResolutionWarning
        warnings.warn(w, cls, stacklevel=2)
    pb, backgrounds = summarise(ps, st, gen)
    oriented = list(dict.fromkeys((r.background_a, r.background_b) for r in results))
    if directed(st.outcome) and len(oriented) == 1:  # the real names (several groups: each row's pair)
        direction = f"Δ = score({oriented[0][1]}) − score({oriented[0][0]}); effect = mean(Δ)"
    elif directed(st.outcome):
        direction = "Δ = score(background_b) − score(background_a); effect = mean(Δ)"
    else:
        direction = f"effect = median similarity of the paired responses (1 = same); H1 says it is below {st.m0:g}"
    per_cue = dict(alpha=st.alpha, correction="none", m0=st.m0, method=method, n_resamples=n_resamples,
                   alternative=alternative, cluster=cluster,
                   design=Design(outcome=st.outcome, order=dz.order, bound=dz.bound))
    trend_part, strata_part = design_parts(ps, levels, strata, st, results, gen, test, per_cue)
    human_part, source = human_report(ps, results, human, outcome=st.outcome, alpha=st.alpha,
                                      correction=st.correction, alternative=st.alternative, cluster=st.cluster, rng=gen)
    if source is not None and source.assumption:
        warn.append(f"human scores: {source.assumption}")
    return Report(
        groups=tuple(results), outcome=st.outcome, alpha=st.alpha, correction=st.correction, method=st.method,
        m0=st.m0 if not directed(st.outcome) else None, paper_compat=st.paper_compat,
        null_hypothesis=results[0].detail.null_hypothesis if results else "", direction=direction, pb=pb,
        warnings=tuple(warn), backgrounds=backgrounds, margin=st.margin, omnibus=omnibus,
        trend=trend_part, strata=strata_part, human=human_part, human_source=source,
        examples=example_pairs(ps, results, st.outcome),
    )


test.__test__ = False  # type: ignore[attr-defined]  # pytest must not collect ipcausal.test
