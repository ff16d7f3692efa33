"""The trend row and the per-cue rows of a Report (``ipcausal.test(pairs, design=Design(trend=…, strata=…))``).

* :func:`trend_matrix` / :func:`trend_rows` — ordered backgrounds: ``y`` has one row per
  ``prompt_id`` and one column per level (the prompt's score under that level, in the given
  order), tested by :func:`ipcausal.stats.trend_test` once per model.
* :func:`cue_matrix` / :func:`strata_rows` — several cues: per group, the test of each cue's
  pairs alone, the pooled test stratified by cue and :func:`ipcausal.stats.heterogeneity_test`
  on one row per prompt and one column per cue (that prompt's Δ under that cue).

Both draw their Monte Carlo streams from generators spawned off the test's own, so the rest of
the Report is the same with or without them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ipcausal.outcomes import directed
from ipcausal.pairs import PairSet
from ipcausal.stats.ordered import heterogeneity_test, trend_test
from ipcausal.stats.permutation import permutation_test
from ipcausal.study.groups import UNKNOWN_MODEL
from ipcausal.study.parts import CueEffect, StrataInfo, TrendInfo

__all__ = ["validate_design", "design_parts", "trend_matrix", "trend_rows", "cue_matrix",
           "strata_rows"]

def validate_design(ps: PairSet, design: Any) -> tuple[tuple[str, ...] | None, str | None]:
    """``(trend levels, strata column)`` of a :class:`~ipcausal.study.options.Design`, checked against ``ps``."""
    levels, column = design.trend, design.strata
    if levels is not None:
        known = sorted({str(b) for b in ps["background_i"].unique()} | {str(b) for b in ps["background_j"].unique()})
        if not 2 <= len(levels) <= 8 or len(set(levels)) != len(levels):
            raise ValueError(f"`trend` must name 2 to 8 distinct levels, got {list(levels)}")
        missing = [x for x in levels if x not in known]
        if missing:
            raise ValueError(f"`trend`: unknown level(s) {missing}; the pairs' backgrounds are {known}")
        if "prompt_id" not in ps:
            raise ValueError("`trend` needs the column `prompt_id` (one row of y per prompt)")
    if column is not None:
        if not isinstance(column, str):
            raise TypeError(f"`strata` must be a column name, got {type(column).__name__}")
        if column not in ps:
            raise ValueError(f"`strata`={column!r} is not a column of `pairs`")
    return levels, column


def _frame(ps: PairSet, extra: Sequence[str]) -> Any:
    need = ["pair_id", "prompt_id", "model", "background_i", "background_j", "score_i", "score_j", "similarity",
            *extra]
    df = ps.to_frame()[[c for c in dict.fromkeys(need) if c in ps]]
    df = df.copy()
    df["model"] = df["model"].fillna(UNKNOWN_MODEL).astype(str) if "model" in df else UNKNOWN_MODEL
    return df


def trend_matrix(df: Any, levels: Sequence[str], *, complete_only: bool = False) -> tuple[np.ndarray, list[str]]:
    """``y`` (prompts × levels) and the prompt ids: each prompt's score under each level, first seen.

    Every prompt must have a score under every level: a ``ValueError`` names those that lack
    one, or, with ``complete_only``, those prompts are left out (the caller counts them).
    """
    cells: dict[tuple[str, str], float] = {}
    for side in ("i", "j"):
        for p, b, s in zip(df["prompt_id"].astype(str), df[f"background_{side}"].astype(str), df[f"score_{side}"]):
            cells.setdefault((p, b), float(s))
    prompts = sorted({p for p, b in cells if b in levels})
    lacking = [(p, b) for p in prompts for b in levels if (p, b) not in cells]
    if lacking and complete_only:
        short = {p for p, _ in lacking}
        prompts = [p for p in prompts if p not in short]
    elif lacking:
        shown = ", ".join(f"{p!r} lacks {b!r}" for p, b in lacking[:5])
        raise ValueError(f"`trend`: every prompt needs a score under every level; {len(lacking)} missing ({shown})")
    y = np.array([[cells[(p, b)] for b in levels] for p in prompts], dtype=np.float64).reshape(len(prompts),
                                                                                           len(levels))
    return y, prompts


def trend_rows(ps: PairSet, levels: Sequence[str], st: Any, gen: np.random.Generator) -> tuple[TrendInfo, ...]:
    """One :class:`TrendInfo` per model: :func:`trend_test` on :func:`trend_matrix`.

    A prompt without a score under some level (a response that failed or could not be scored)
    is left out of ``y`` and counted in ``n_incomplete``: under the null the levels do not change
    the responses, so which prompts are complete does not depend on the levels, and the
    complete prompts' rows are still exchangeable.
    """
    df = _frame(ps, ())
    alternative = st.alternative if st.alternative in ("greater", "less") else "two-sided"
    out = []
    for model in sorted(df["model"].unique()):
        sub = df[df["model"] == model]
        y, prompts = trend_matrix(sub, levels, complete_only=True)
        seen = {str(p) for p, b1, b2 in zip(sub["prompt_id"], sub["background_i"].astype(str),
                                           sub["background_j"].astype(str)) if b1 in levels or b2 in levels}
        if len(prompts) < 2:
            raise ValueError(f"`trend`: model {model!r} has {len(prompts)} prompt(s) with a score under every "
                             f"level {list(levels)} ({len(seen) - len(prompts)} incomplete); the test needs >= 2")
        method = st.method if st.method in ("exact", "monte-carlo") else "auto"
        r = trend_test(y, alternative=alternative, method=method, n_resamples=st.n_resamples, rng=gen.spawn(1)[0])
        out.append(TrendInfo(model=str(model), levels=tuple(levels), statistic=r.statistic, pvalue=r.pvalue,
                             slope=r.slope, level_means=tuple(r.level_means), n_prompts=len(prompts),
                             method=r.method, n_resamples=r.n_resamples, alternative=r.alternative,
                             null_hypothesis=r.null_hypothesis, reject=bool(r.pvalue <= st.alpha),
                             n_incomplete=len(seen) - len(prompts)))
    return tuple(out)


def _delta(df: Any, a: str, b: str) -> np.ndarray:
    """Δ = score(b) − score(a) of each row of ``df`` (its pairs are a–b either way round); else the similarity."""
    if "score_i" not in df:
        return df["similarity"].to_numpy(np.float64)
    fwd = (df["background_i"].astype(str) == a).to_numpy()
    si, sj = df["score_i"].to_numpy(np.float64), df["score_j"].to_numpy(np.float64)
    return np.where(fwd, sj - si, si - sj)


def cue_matrix(df: Any, a: str, b: str, column: str, cues: Sequence[str]) -> tuple[np.ndarray | None, str]:
    """``y`` (prompts × cues, each cell the prompt's Δ (or similarity) under that cue), or ``None`` and the reason."""
    if "prompt_id" not in df:
        return None, "needs `prompt_id` (the same prompt under every cue); these pairs have none"
    d = _delta(df, a, b)
    keys = list(zip(df["prompt_id"].astype(str), df[column].astype(str)))
    if len(set(keys)) != len(keys):
        return None, "a prompt carries a cue more than once"
    cell = dict(zip(keys, d))
    prompts = sorted({p for p, _ in keys})
    if any((p, c) not in cell for p in prompts for c in cues):
        return None, "not every prompt carries every cue"
    return np.array([[cell[(p, c)] for c in cues] for p in prompts]), ""


def _pooled(sub: Any, a: str, b: str, column: str, n_cues: int, st: Any,
            gen: np.random.Generator) -> tuple[float, float, float, float]:
    """(effect, ci_low, ci_high, p) of the sign-flip test of Δ weighted 1/(S·n_s): each cue counts once."""
    d = _delta(sub, a, b)
    counts = sub[column].map(sub[column].value_counts()).to_numpy(np.float64)
    w = d / (n_cues * counts) * len(d)  # mean(w) = the mean of the cues' mean Δ
    r = permutation_test(w, alternative=st.alternative, n_resamples=st.n_resamples, rng=gen.spawn(1)[0])
    return float(r.statistic), float(r.ci_low), float(r.ci_high), float(r.pvalue)


def strata_rows(ps: PairSet, column: str, st: Any, results: Sequence[Any], gen: np.random.Generator,
                test: Callable[..., Any], kwargs: dict[str, Any]) -> tuple[StrataInfo, ...]:
    """One :class:`StrataInfo` per group of ``results``.

    ``test`` is :func:`ipcausal.test` and ``kwargs`` its options: each cue's row is ``test`` on
    that cue's pairs alone (unadjusted p of the same group).  Similarity outcomes get the per-cue
    rows and the heterogeneity test of the similarities; the pooled stratified test (a mean Δ)
    is NaN there.
    """
    df = _frame(ps, (column,))
    if not directed(st.outcome):  # the similarity is the value of each pair
        df = df.drop(columns=["score_i", "score_j"], errors="ignore")
    df[column] = df[column].astype(str)
    full = ps.to_frame()
    out = []
    for g in results:
        a, b = g.background_a, g.background_b
        sub = df[(df["model"] == g.model) & (((df["background_i"] == a) & (df["background_j"] == b))
                                             | ((df["background_i"] == b) & (df["background_j"] == a)))]
        cues = sorted(sub[column].unique())
        rows = []
        for c in cues:
            part = full.loc[sub.index[(sub[column] == c).to_numpy()]]
            r = test(PairSet(part), **kwargs, rng=gen.spawn(1)[0])
            cg = next(x for x in r.groups if {x.background_a, x.background_b} == {a, b})
            same = cg.background_b == b or not directed(st.outcome)  # a median similarity has no orientation
            rows.append(CueEffect(cue=c, n=cg.n, effect=cg.effect if same else -cg.effect,
                                  ci_low=cg.ci_low if same else -cg.ci_high,
                                  ci_high=cg.ci_high if same else -cg.ci_low, pvalue=cg.pvalue))
        pooled = _pooled(sub, a, b, column, len(cues), st, gen) if "score_i" in sub else (np.nan,) * 4
        y, note = cue_matrix(sub, a, b, column, cues) if len(cues) >= 2 else (None, "one cue only")
        het = heterogeneity_test(y, n_resamples=st.n_resamples, rng=gen.spawn(1)[0]) if y is not None else None
        out.append(StrataInfo(model=g.model, group=g.group, column=column, cues=tuple(rows),
                              pooled_effect=pooled[0], pooled_ci_low=pooled[1], pooled_ci_high=pooled[2],
                              pooled_pvalue=pooled[3],
                              heterogeneity_pvalue=None if het is None else float(het.pvalue),
                              heterogeneity_statistic=None if het is None else float(het.statistic),
                              heterogeneity_n=0 if y is None else int(y.shape[0]), heterogeneity_note=note))
    return tuple(out)


def design_parts(ps: PairSet, levels: Sequence[str] | None, column: str | None, st: Any, results: Sequence[Any],
                 gen: np.random.Generator, test: Callable[..., Any],
                 kwargs: dict[str, Any]) -> tuple[tuple[TrendInfo, ...], tuple[StrataInfo, ...]]:
    """The Report's ``trend`` and ``strata`` (empty when not asked for).

    They draw from a generator spawned off ``gen`` after the rest of the test, and only when
    asked for, so the rest of the Report is the same with or without them.
    """
    if levels is None and column is None:
        return (), ()
    side = gen.spawn(1)[0]
    trend = trend_rows(ps, levels, st, side) if levels is not None else ()
    strata = strata_rows(ps, column, st, results, side, test, kwargs) if column is not None else ()
    return trend, strata
