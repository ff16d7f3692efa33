"""The human-scale part of a Report: PPI++ per background pair, the judge's agreement and its bias by background.

:func:`human_parts` is the step of :func:`ipcausal.test` that runs when ``human=`` is given.  For each
group (model, background pair a → b) it orients the judge's Δ (``score_b − score_a``, the Δ the test
used) and the human Δ (``human_b − human_a``) of every pair, and reports

* the effect **on the human scale** by prediction-powered inference with the power-tuned λ of PPI++
  (:func:`ipcausal.stats.ppi.ppi_mean_test`): the judge's Δ on all pairs, corrected by its error on the
  labelled ones; its interval, its test (p adjusted within the model by the Report's correction; Holm
  for the joint corrections) beside the human-only estimate of the labelled pairs;
* the judge's **agreement** with people per background (mean h − f, mean |h − f|, Pearson's r, exact
  matches);
* a test of **judge bias by background**: on the labelled units, d = (h − f)(b) − (h − f)(a), tested by
  sign flips (:func:`ipcausal.stats.permutation_test`; H0: the judge's error has the same mean for
  both backgrounds);
* a plain-words ``note`` when the judge's bias could explain — or hide — the judge-only verdict.

With ``cluster`` the unit is the cluster: a cluster's mean judge Δ over all its pairs, and over its
labelled pairs their mean human and judge Δ (a cluster is labelled when any of its pairs is; the
package's draw takes whole clusters).  The estimand is then the mean over clusters of the cluster's
mean Δ, which is mean Δ when clusters have equal sizes.
"""

from __future__ import annotations

from typing import Any

import warnings

import numpy as np

from ipcausal.pairs import PairSet
from ipcausal.stats.multitest import CORRECTIONS, adjust_pvalues
from ipcausal.stats.permutation import permutation_test
from ipcausal.stats.ppi import ppi_mean_test
from ipcausal.study.human import HumanLabels, as_human, fingerprint, row_keys
from ipcausal.study.parts import HumanInfo, HumanSource, JudgeAgreement
from ipcausal.outcomes import directed
from ipcausal.study.results import UNKNOWN_MODEL

__all__ = ["human_report", "human_parts", "human_source"]

_LEVEL = 0.95


def human_source(labels: HumanLabels, ps: PairSet, used: int) -> HumanSource:
    """The labels' provenance for the Report, with the one-line assumption when they are not the package's draw."""
    if labels.sample is None:
        return HumanSource(labels.source, used, False, assumption=(
            "the human scores are not the package's own seeded draw (`ipcausal validate sample`): the human-scale "
            "estimates assume the labelled pairs are a uniformly random subset of the tested pairs, chosen "
            "without regard to their responses, scores or backgrounds"))
    s = labels.sample
    same = s.fingerprint == fingerprint(ps)
    notes = []
    if not same:
        notes.append(f"the draw (seed {s.seed}) was made from {s.population} pairs other than the {len(ps)} tested "
                     "(fewer, or more: pairs dropped or added since): the estimates assume the labelled ones are "
                     "still a uniformly random subset of the tested pairs")
    if labels.unrated:
        notes.append(f"{labels.unrated} drawn pair(s) have no human score: the estimates assume they are missing at "
                     "random")
    return HumanSource(labels.source, used, True, s.seed, s.n, s.population, same, "; ".join(notes))


def _agreement(bg: str, h: list[float], f: list[float]) -> JudgeAgreement:
    hh, ff = np.asarray(h, dtype=np.float64), np.asarray(f, dtype=np.float64)
    d = hh - ff
    r = float(np.corrcoef(hh, ff)[0, 1]) if hh.size > 1 and hh.std() > 0 and ff.std() > 0 else float("nan")
    return JudgeAgreement(bg, int(hh.size), float(d.mean()), float(np.abs(d).mean()), r, float(np.mean(d == 0)))


def _units(values: np.ndarray, ids: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(unit of each value, unit order): one unit per value, or per cluster id."""
    if ids is None:
        return np.arange(values.size), np.arange(values.size)
    uniq, inv = np.unique(ids, return_inverse=True)
    return inv, np.arange(uniq.size)


def _means(x: np.ndarray, unit: np.ndarray, m: int) -> np.ndarray:
    return np.bincount(unit, weights=x, minlength=m) / np.maximum(np.bincount(unit, minlength=m), 1)


def _note(g: Any, info: dict[str, Any], alpha: float) -> str:
    """The plain-words line when the judge's bias could explain (or hide) the judge-only verdict, else ""."""
    bias = (f"the judge's error differs between {g.background_b} and {g.background_a} by {info['bias']:+.3g} "
            f"(judge-bias p = {info['bias_pvalue']:.3g})")
    tail = f"; {bias}" if info["bias_pvalue"] <= alpha else ""
    if g.reject and not info["reject"]:
        return ("the judge-only verdict may be the judge's, not the model's: on the human scale the effect is not "
                "significant" + tail)
    if not g.reject and info["reject"]:
        return "the judge may hide an effect people see: on the human scale it is significant" + tail
    if g.reject and np.sign(g.effect) != np.sign(info["estimate"]):
        return ("the judge and people disagree in direction: the judge-only mean Δ and the human-scale one have "
                "opposite signs" + tail)
    if tail:
        return f"{bias}: its scores are not comparable across the backgrounds"
    return ""


def human_parts(ps: PairSet, results: list[Any], labels: HumanLabels, *, alpha: float, correction: str,
                alternative: str, cluster: str | None, rng: np.random.Generator | None = None
                ) -> tuple[tuple[HumanInfo, ...], HumanSource, list[str]]:
    """The :class:`~ipcausal.study.parts.HumanInfo` of every group, the labels' source and warnings."""
    df = ps.to_frame()
    keys = row_keys(ps)
    delta = ps.deltas
    bi = df["background_i"].astype(str).to_numpy(object)
    bj = df["background_j"].astype(str).to_numpy(object)
    si, sj = df["score_i"].to_numpy(np.float64), df["score_j"].to_numpy(np.float64)
    hum = np.array([labels.scores.get(k, (np.nan, np.nan)) for k in keys], dtype=np.float64).reshape(len(keys), 2)
    labelled = ~np.isnan(hum).any(axis=1)
    ids = df[cluster].astype(str).to_numpy(object) if cluster is not None else None
    warn: list[str] = []
    outside = labels.n - int(labelled.sum())
    if outside:
        warn.append(f"human: {outside} labelled pair(s) are not among the tested pairs (dropped by the scorer, or "
                    "from other pairs) and are left out")
    by_group = {(r.model, frozenset((r.background_a, r.background_b))): r for r in results}
    rows: list[tuple[Any, dict[str, Any]]] = []
    for model, low, high, idx, _fwd in ps.pair_groups():
        g = by_group.get((UNKNOWN_MODEL if model is None else model, frozenset((low, high))))
        if g is None:
            continue
        sign = np.where(bi[idx] == g.background_a, 1.0, -1.0)
        f = delta[idx] * sign
        h = (hum[idx, 1] - hum[idx, 0]) * sign
        lab = labelled[idx]
        unit, order = _units(f, ids[idx] if ids is not None else None)
        m = order.size
        lab_unit = np.bincount(unit[lab], minlength=m) > 0
        if lab_unit.sum() < 2:
            warn.append(f"human: {g.model}: {g.group}: {int(lab_unit.sum())} labelled unit(s); the human-scale "
                        "estimate needs at least 2 (not computed)")
            continue
        f_all = _means(f, unit, m)  # every unit's judge Δ; the labelled units' over their labelled pairs
        h_lab, f_lab = (_means(x[lab], unit[lab], m)[lab_unit] for x in (h, f))
        ppi = ppi_mean_test(h_lab, f_lab, f_all[~lab_unit], alternative=alternative, confidence_level=_LEVEL)
        d = h_lab - f_lab
        bias = permutation_test(d, alternative="two-sided", confidence_level=_LEVEL, rng=rng) if np.any(d != 0) else None
        side: dict[str, tuple[list[float], list[float]]] = {g.background_a: ([], []), g.background_b: ([], [])}
        for r in idx[lab]:
            for b, hv, fv in ((bi[r], hum[r, 0], si[r]), (bj[r], hum[r, 1], sj[r])):
                side[b][0].append(float(hv))
                side[b][1].append(float(fv))
        info = {"model": g.model, "group": g.group, "background_a": g.background_a, "background_b": g.background_b,
                "unit": "clusters" if ids is not None else "pairs", "n_units": int(m),
                "n_labelled": int(lab_unit.sum()), "estimate": ppi.statistic, "ci_low": ppi.ci_low,
                "ci_high": ppi.ci_high, "confidence_level": _LEVEL, "pvalue": ppi.pvalue, "lam": ppi.lam, "se": ppi.se,
                "human_estimate": ppi.human_mean, "human_ci_low": ppi.human_ci_low,
                "human_ci_high": ppi.human_ci_high, "human_pvalue": ppi.human_pvalue, "judge_effect": g.effect,
                "judge_reject": bool(g.reject), "bias": float(d.mean()),
                "bias_ci_low": bias.ci_low if bias is not None else 0.0,
                "bias_ci_high": bias.ci_high if bias is not None else 0.0,
                "bias_pvalue": bias.pvalue if bias is not None else 1.0,
                "agreement": tuple(_agreement(b, *side[b]) for b in (g.background_a, g.background_b)),
                "null_hypothesis": ppi.null_hypothesis.replace("the mean of the human scores", "mean Δ on the human scale"),
                "bias_null_hypothesis": "H0: the judge's error h − f has the same mean for both backgrounds "
                                        "(its difference between them is symmetric about 0; unit: the "
                                        + ("cluster)" if ids is not None else "pair)"),
                "method": ppi.method}
        rows.append((g, info))
    method = correction if correction in CORRECTIONS else "holm"  # a joint correction: Holm on the PPI p-values
    out = []
    for model in sorted({g.model for g, _ in rows}):
        fam = [(g, i) for g, i in rows if g.model == model]
        adjusted = adjust_pvalues(np.array([i["pvalue"] for _, i in fam]), method)
        for (g, i), p in zip(fam, adjusted):
            i.update(pvalue_adjusted=float(p), reject=bool(p <= alpha))
            out.append(HumanInfo(**i, note=_note(g, i, alpha)))
    return tuple(out), human_source(labels, ps, int(labelled.sum())), warn


def human_report(ps: PairSet, results: list[Any], human: Any, *, outcome: str, alpha: float, correction: str,
                 alternative: str, cluster: str | None, rng: np.random.Generator | None = None
                 ) -> tuple[tuple[HumanInfo, ...], HumanSource | None]:
    """``Report.human`` and ``Report.human_source`` of :func:`ipcausal.test`'s ``human=`` (``((), None)`` without)."""
    labels = as_human(human)
    if labels is None:
        return (), None
    if not directed(outcome):
        raise ValueError("`human`: human scores enter the test for an interval outcome (score_i/score_j on the "
                         "scale people rate); this Report tests a similarity outcome")
    parts, source, notes = human_parts(ps, results, labels, alpha=alpha, correction=correction,
                                       alternative=alternative, cluster=cluster, rng=rng)
    for w in notes:
        warnings.warn(w, UserWarning, stacklevel=4)
    return parts, source
