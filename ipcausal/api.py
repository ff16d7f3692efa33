"""``ipcausal.test(pairs)``: one test per background pair, corrected within each model."""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ipcausal.pairs import PairSet
from ipcausal.results import GroupResult, PBResult, Report
from ipcausal.stats._validate import as_generator, choice, finite_real, open_unit, positive_int
from ipcausal.stats.multitest import CORRECTIONS, adjust_pvalues
from ipcausal.stats.permutation import METHODS, paper_compat_pvalue, permutation_test
from ipcausal.stats.sign import paper_compat_sign_pvalue, sign_test
from ipcausal.stats.summary import personalization_bias

__all__ = ["test", "OUTCOMES", "PAPER_N_RESAMPLES"]

OUTCOMES = ("auto", "interval", "similarity")
PAPER_N_RESAMPLES = 1000
_UNKNOWN_MODEL = "(model not given)"


class MonteCarloResolutionWarning(UserWarning):
    """A Monte Carlo p-value cannot reach the corrected significance level."""


def _as_pairset(pairs: Any) -> PairSet:
    if isinstance(pairs, PairSet):
        return pairs
    if isinstance(pairs, pd.DataFrame):
        return PairSet.from_frame(pairs)
    if isinstance(pairs, (str, os.PathLike)):
        return PairSet.read(pairs)
    raise TypeError(f"`pairs` must be a PairSet, a DataFrame or a file path, got {type(pairs).__name__}")


def _resolve_outcome(ps: PairSet, outcome: str) -> str:
    available = ps.outcome
    if outcome == "auto":
        if available is None:
            raise ValueError(
                "`pairs` has no outcome: add `score_i`/`score_j` (interval) or `similarity` columns "
                "(`ipcausal score` does this)"
            )
        if available == "both":
            raise ValueError("`pairs` has both scores and similarity: choose `outcome`='interval' or 'similarity'")
        return available
    needed = "score_i" if outcome == "interval" else "similarity"
    if needed not in ps:
        raise ValueError(f"`outcome`={outcome!r} needs the column `{needed}`, which `pairs` does not have")
    return outcome


def _groups(df: pd.DataFrame) -> list[tuple[str, str, str, np.ndarray]]:
    """(model, background_a, background_b, row indices) per unordered background pair.

    The orientation (a → b) is the one most pairs of the group are stored in; a tie goes to
    the alphabetical order.  It does not depend on the order of the rows.
    """
    rows: dict[tuple[str, frozenset[str]], list[int]] = {}
    votes: dict[tuple[str, frozenset[str]], dict[tuple[str, str], int]] = {}
    for pos, (model, bi, bj) in enumerate(zip(df["_model"], df["background_i"], df["background_j"])):
        key = (model, frozenset((bi, bj)))
        rows.setdefault(key, []).append(pos)
        count = votes.setdefault(key, {})
        count[(bi, bj)] = count.get((bi, bj), 0) + 1
    out = []
    for key, idx in rows.items():
        counts = votes[key]
        a, b = min(counts, key=lambda orient: (-counts[orient], orient))
        out.append((key[0], a, b, np.asarray(idx)))
    return sorted(out, key=lambda t: (t[0], t[1], t[2]))


def test(
    pairs: Any,
    *,
    outcome: str = "auto",
    alpha: float = 0.05,
    correction: str = "bonferroni",
    m0: float = 0.8,
    method: str = "auto",
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    paper_compat: bool = False,
    alternative: str | None = None,
) -> Report:
    """Test every background pair for implicit personalization and correct for multiplicity.

    Interval outcomes (``score_i``, ``score_j``): paired sign-flip permutation test of
    mean(Δ) = 0, Δ = score(background_b) − score(background_a), where a → b is the orientation
    most pairs of the group are stored in (ties: alphabetical) and pairs stored the other way
    round are flipped.  Similarity outcomes (``similarity``): sign test of
    median(s) = ``m0`` against median(s) < ``m0``.  Groups are the unordered background pairs;
    the correction family is the background pairs of one model (one family per ``model``).

    Parameters
    ----------
    pairs : PairSet, pandas.DataFrame or path
        Scored pairs.
    outcome : {"auto", "interval", "similarity"}
        Which outcome to test (``"auto"`` picks the one present).
    alpha : float
        Family-wise (or FDR, for ``"bh"``/``"by"``) level in (0, 1).
    correction : str
        One of :data:`ipcausal.stats.multitest.CORRECTIONS`.
    m0 : float
        Null median of the similarity (sign test).
    method : {"auto", "exact", "monte-carlo", "saddlepoint"}
        Permutation-test route (see :func:`ipcausal.permutation_test`).
    n_resamples : int, optional
        Monte Carlo resamples L (default 100,000; 1,000 with ``paper_compat``).
    rng : int, numpy.random.Generator or None
        Randomness for Monte Carlo and the PB bootstrap.
    paper_compat : bool
        Reproduce the study's released code instead of the method as stated (SPEC §6):
        permutation p = b/L with L = 1,000 (can be 0), the sign test counting s > m0 with
        alternative "greater", no correction.  Never the default.
    alternative : str, optional
        Override H1's direction (default: "two-sided" for interval, "less" for similarity).

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
    ps = _as_pairset(pairs)
    if len(ps) == 0:
        raise ValueError("`pairs` is empty")
    outcome = choice(outcome, "outcome", OUTCOMES)
    alpha = open_unit(alpha, "alpha")
    correction = choice(correction, "correction", CORRECTIONS)
    m0 = finite_real(m0, "m0")
    method = choice(method, "method", METHODS)
    if not isinstance(paper_compat, bool):
        raise TypeError("`paper_compat` must be True or False")
    if n_resamples is None:
        n_resamples = PAPER_N_RESAMPLES if paper_compat else 100_000
    n_resamples = positive_int(n_resamples, "n_resamples")
    gen = as_generator(rng)
    outcome = _resolve_outcome(ps, outcome)
    if alternative is None:
        alternative = "two-sided" if outcome == "interval" else ("greater" if paper_compat else "less")
    if paper_compat:
        correction = "none"

    df = ps.to_frame()
    df["_model"] = df["model"].fillna(_UNKNOWN_MODEL).astype(str) if "model" in df else _UNKNOWN_MODEL
    raw: list[dict[str, Any]] = []
    for model, a, b, idx in _groups(df):
        sub = df.iloc[idx]
        forward = (sub["background_i"] == a).to_numpy()
        if outcome == "interval":
            delta = sub["score_j"].to_numpy(np.float64) - sub["score_i"].to_numpy(np.float64)
            delta = np.where(forward, delta, -delta)
            if delta.size < 2:
                raise ValueError(f"`pairs`: group {a} vs {b} ({model}) has {delta.size} pair; a test needs >= 2")
            res = permutation_test(delta, alternative=alternative, method=method, n_resamples=n_resamples, rng=gen)
            p = res.pvalue
            if paper_compat:
                p = paper_compat_pvalue(delta, n_resamples=n_resamples, rng=gen)
                res = _replace(res, pvalue=p, method="paper-compat", n_resamples=n_resamples, pvalue_se=math.nan)
            entry = dict(test="permutation", statistic=res.statistic, effect=res.statistic)
        else:
            s = sub["similarity"].to_numpy(np.float64)
            res = sign_test(s, m0=m0, alternative=alternative)
            if paper_compat:
                k = int(np.count_nonzero(s > m0))
                res = _replace(res, pvalue=paper_compat_sign_pvalue(s, m0), method="paper-compat", statistic=k)
            entry = dict(test="sign", statistic=float(res.statistic), effect=res.median)
        raw.append(dict(model=model, a=a, b=b, res=res, ci=(res.ci_low, res.ci_high), **entry))

    warn: list[str] = []
    groups: list[GroupResult] = []
    for model in sorted({r["model"] for r in raw}):
        fam = [r for r in raw if r["model"] == model]
        pvals = np.array([r["res"].pvalue for r in fam])
        adjusted = adjust_pvalues(pvals, correction)
        m = len(fam)
        threshold = alpha / m if correction not in ("none", "bh", "by") else alpha
        for r, p_adj in zip(fam, adjusted):
            res = r["res"]
            if getattr(res, "method", "") in ("monte-carlo", "paper-compat") and getattr(res, "n_resamples", None):
                floor = 1.0 / (res.n_resamples + 1) if res.method == "monte-carlo" else 1.0 / res.n_resamples
                if floor > threshold:
                    warn.append(
                        f"{model}: {r['a']} vs {r['b']}: a Monte Carlo p with L={res.n_resamples} cannot fall "
                        f"below {floor:.2g}, above the corrected level {threshold:.2g}; raise `n_resamples` "
                        f"well above {math.ceil(1 / threshold)} or use method='exact'/'saddlepoint'"
                    )
            groups.append(
                GroupResult(
                    model=model,
                    group=f"{r['a']} vs {r['b']}",
                    background_a=r["a"],
                    background_b=r["b"],
                    outcome=outcome,
                    test=r["test"],
                    n=int(res.n if r["test"] == "permutation" else res.n_total),
                    statistic=float(r["statistic"]),
                    effect=float(r["effect"]),
                    ci_low=float(r["ci"][0]),
                    ci_high=float(r["ci"][1]),
                    pvalue=float(res.pvalue),
                    pvalue_adjusted=float(p_adj),
                    reject=bool(p_adj <= alpha),
                    detail=res,
                )
            )
    for w in warn:
        warnings.warn(w, MonteCarloResolutionWarning, stacklevel=2)

    pb: dict[str, PBResult] = {}
    if outcome == "interval":
        for model, sub in df.groupby("_model", sort=True):
            values = np.concatenate([sub["score_i"].to_numpy(np.float64), sub["score_j"].to_numpy(np.float64)])
            labels = np.concatenate([sub["background_i"].to_numpy(object), sub["background_j"].to_numpy(object)])
            pb[str(model)] = personalization_bias(values, labels, rng=gen)

    if outcome == "interval":
        null = groups[0].detail.null_hypothesis if groups else ""
        direction = "Δ = score(background_b) − score(background_a); effect = mean(Δ)"
    else:
        null = groups[0].detail.null_hypothesis if groups else ""
        direction = f"effect = median similarity of the paired responses (1 = same); H1 says it is below {m0:g}"
    return Report(
        groups=tuple(groups),
        outcome=outcome,
        alpha=alpha,
        correction=correction,
        method=method,
        m0=m0 if outcome == "similarity" else None,
        paper_compat=paper_compat,
        null_hypothesis=null,
        direction=direction,
        pb=pb,
        warnings=tuple(warn),
    )


def _replace(res: Any, **changes: Any) -> Any:
    from dataclasses import replace

    return replace(res, **changes)


test.__test__ = False  # type: ignore[attr-defined]  # pytest must not collect ipcausal.test
