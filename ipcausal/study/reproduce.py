"""Reproduce the study's three result tables from the authors' released per-model outputs.

The released folder (layout of ``jiarui-liu/IP``) holds, per model:

* ``case_1/objective_scores/records_answers_<model>.txt`` — JSONL, one record per objective
  AmbrQA question with the US and UK answers and a GPT-4 similarity rating 1–5
  (→ s = (r − 1)/4; sign test of median(s) = 0.8 against < 0.8);
* ``case_2/aes_scores/<model>_{sae,aae,esl}_results.txt`` — ``index,score`` essay scores per
  prompt and style (three style pairs, paired permutation tests, Bonferroni over 3);
* ``case_3/results/results_<model>.csv`` — per (belief case, domain, subset) the ``;``-joined
  correctness (0 = wrong, 100 = right) per item; WF = false belief, CF = true belief, SD/FD =
  same/foreign-domain statement.  Pairs: item k under WF_x vs CF_x, x ∈ {SD, FD} stacked.

:func:`reproduce` runs :func:`ipcausal.test` twice per case — the method as stated (exact
p-values, Bonferroni within each model) and ``paper_compat=True`` (the released code:
p = b/L with L = 1,000, the sign test counting s > 0.8 with alternative "greater", no
correction) — and returns one table.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ipcausal._jsonl import iter_objects
from ipcausal.pairs import PairSet
from ipcausal.study.cases import CASES

__all__ = ["Reproduction", "reproduce", "load_case1", "load_case2", "load_case3", "CASES"]

_STYLE_PAIRS = (("SAE", "ESL"), ("SAE", "AAE"), ("ESL", "AAE"))  # the study's order; Δ = first − second


def _dir(released: Any) -> Path:
    if not isinstance(released, (str, os.PathLike)):
        raise TypeError(f"`released` must be a folder path, got {type(released).__name__}")
    root = Path(released)
    if not root.is_dir():
        raise FileNotFoundError(f"`released`: no folder at {root}")
    if not any((root / c).is_dir() for c in ("case_1", "case_2", "case_3")):
        raise ValueError(f"`released`: {root} has none of case_1/, case_2/, case_3/ (the jiarui-liu/IP layout)")
    return root


def load_case1(released: str | os.PathLike[str]) -> PairSet:
    """Case 1 (objective AmbrQA): one pair per record, ``similarity`` = (GPT-4 rating − 1)/4.

    Records without an integer rating in 1..5 are skipped (counted in ``unparseable`` of the
    manifest; the released files have none).
    """
    files = sorted((_dir(released) / "case_1" / "objective_scores").glob("records_answers_*.txt"))
    if not files:
        raise FileNotFoundError("`released`: no case_1/objective_scores/records_answers_*.txt")
    rows = []
    for f in files:
        model = f.stem.removeprefix("records_answers_")
        for lineno, rec in iter_objects(f, "one JSON record per line (the released case 1 format)"):
            k = lineno - 1
            r = rec.get("score")
            if isinstance(r, bool) or not isinstance(r, (int, float)) or r not in (1, 2, 3, 4, 5):
                continue
            rows.append(dict(pair_id=f"{model}:{k}", model=model, background_i="US",
                             background_j="UK", x_i=str(rec.get("question", "")), x_j=str(rec.get("question", "")),
                             y_i=rec.get("us_response"), y_j=rec.get("uk_response"), rating=int(r),
                             similarity=(int(r) - 1) / 4.0, domain=rec.get("domain")))
    return PairSet.from_records(rows)


def load_case2(released: str | os.PathLike[str]) -> PairSet:
    """Case 2 (essays): per model and prompt, the three style pairs; Δ = score(first) − score(second).

    Pairs are stored as background_i = second style, background_j = first style, so that
    ipcausal's Δ = score_j − score_i equals the study's "SAE−ESL" orientation.
    """
    folder = _dir(released) / "case_2" / "aes_scores"
    files = sorted(folder.glob("*_sae_results.txt"))
    if not files:
        raise FileNotFoundError("`released`: no case_2/aes_scores/<model>_sae_results.txt")
    rows = []
    for f in files:
        model = f.name.removesuffix("_sae_results.txt")
        scores = {}
        for style in ("sae", "aae", "esl"):
            path = folder / f"{model}_{style}_results.txt"
            s = pd.read_csv(path, header=None, names=["index", "score"]).set_index("index")["score"]
            scores[style.upper()] = s
        common = scores["SAE"].index.intersection(scores["AAE"].index).intersection(scores["ESL"].index)
        for first, second in _STYLE_PAIRS:
            for idx in common:
                rows.append(dict(pair_id=f"{model}:{first}-{second}:{idx}", model=model, background_i=second,
                                 background_j=first, x_i=f"prompt {idx} ({second})", x_j=f"prompt {idx} ({first})",
                                 score_i=float(scores[second][idx]), score_j=float(scores[first][idx])))
    return PairSet.from_records(rows)


def load_case3(released: str | os.PathLike[str]) -> PairSet:
    """Case 3 (Farm echo chamber): correctness (0/1) per item under a true vs a false belief.

    Same-domain (SD) and foreign-domain (FD) statement variants are stacked; Δ = correct
    under the false belief − correct under the true belief.  ``question_id`` (dataset and
    position) is shared by a question's SD and FD rows: the cluster of the two dependent pairs.
    """
    files = sorted((_dir(released) / "case_3" / "results").glob("results_*.csv"))
    if not files:
        raise FileNotFoundError("`released`: no case_3/results/results_*.csv")
    rows = []
    for f in files:
        model = f.stem.removeprefix("results_")
        df = pd.read_csv(f)
        table = {(r.case, r.dataset): [int(v) for v in str(r.persuasion_counts).split(";")] for r in df.itertuples()}
        for (case, dataset), wrong in sorted(table.items()):
            if not case.startswith("WF_"):
                continue
            dom = case[3:]
            right = table.get((f"CF_{dom}", dataset))
            if right is None:
                raise ValueError(f"{f}: {case} {dataset} has no CF_{dom} counterpart")
            if len(right) != len(wrong):
                raise ValueError(f"{f}: {case} and CF_{dom} for {dataset} have {len(wrong)} and {len(right)} items")
            for k, (w, c) in enumerate(zip(wrong, right)):
                rows.append(dict(pair_id=f"{model}:{dataset}:{dom}:{k}", model=model, background_i="true belief",
                                 background_j="false belief", x_i=f"{dataset} item {k}, true {dom} statement",
                                 x_j=f"{dataset} item {k}, false {dom} statement", score_i=c / 100.0,
                                 score_j=w / 100.0, subset=dataset, domain=dom,
                                 question_id=f"{dataset}:{k}"))
    return PairSet.from_records(rows)


@dataclass(frozen=True)
class Reproduction:
    """The reproduced tables: one row per (case, model, background pair), both modes side by side.

    Columns of :attr:`table`: ``case``, ``model``, ``pair``, ``n``, ``test``, ``effect``
    (mean Δ, or median similarity for case 1), ``share_below`` (case 1), ``p`` and
    ``p_bonferroni`` and ``reject`` (method as stated), ``method``, ``p_paper`` and
    ``reject_paper`` (paper-compatibility mode, uncorrected at α), and the per-model
    verdicts ``ip`` / ``ip_paper``.
    """

    table: pd.DataFrame
    alpha: float
    n_resamples_paper: int
    seed: int

    def verdicts(self) -> pd.DataFrame:
        """IP per (case, model) in both modes."""
        return self.table.groupby(["case", "model"], sort=False)[["ip", "ip_paper"]].first().reset_index()

    def to_markdown(self) -> str:
        """The tables as Markdown (one per case)."""
        from ipcausal.study.text import format_p

        out = []
        for case, sub in self.table.groupby("case", sort=False):
            out.append(f"### {case}\n")
            eff = "median s" if case == "culture" else "mean Δ"
            hdr = ["model", "pair", "n", eff, "p (stated)", "p Bonf.", "reject", "p (paper-compat)", "reject (paper)"]
            if case == "culture":
                hdr.insert(4, "share s<0.8")
            clustered = "p_cluster" in sub and sub["p_cluster"].notna().any()
            if clustered:
                hdr += ["p (question = cluster)", "reject (cluster)"]
            out.append("| " + " | ".join(hdr) + " |")
            out.append("|" + "---|" * len(hdr))
            for r in sub.itertuples():
                cells = [r.model, r.pair, str(r.n), f"{r.effect:.4f}", format_p(r.p), format_p(r.p_bonferroni),
                         "yes" if r.reject else "no", format_p(r.p_paper), "yes" if r.reject_paper else "no"]
                if case == "culture":
                    cells.insert(4, f"{r.share_below:.3f}")
                if clustered:
                    cells += [format_p(r.p_cluster), "yes" if r.reject_cluster else "no"]
                out.append("| " + " | ".join(cells) + " |")
            out.append("")
            if clustered:
                changed = [f"{r.model} {r.pair}" for r in sub.itertuples() if bool(r.reject_cluster) != bool(r.reject)]
                out.append("With the question as the cluster (its same- and foreign-domain pairs flipped together): "
                           + (f"verdicts that change: {', '.join(changed)}." if changed else "no verdict changes.")
                           + "\n")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.to_markdown()


def _rows(case: str, ps: PairSet, alpha: float, n_resamples_paper: int, seed: int) -> list[dict[str, Any]]:
    from ipcausal.study.test import MonteCarloResolutionWarning, test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MonteCarloResolutionWarning)
        stated = test(ps, alpha=alpha, method="exact", correction="bonferroni", rng=seed)
        paper = test(ps, alpha=alpha, paper_compat=True, n_resamples=n_resamples_paper, rng=seed)
        clustered = (test(ps, alpha=alpha, method="exact", correction="bonferroni", rng=seed, cluster="question_id")
                     if "question_id" in ps else None)
    pmap = {(g.model, g.group): g for g in paper.groups}
    cmap = {(g.model, g.group): g for g in clustered.groups} if clustered is not None else {}
    ip, ip_paper = stated.ip_detected_by_model(), paper.ip_detected_by_model()
    rows = []
    for g in stated.groups:
        gp = pmap[(g.model, g.group)]
        pair = f"{g.background_b}−{g.background_a}" if case != "culture" else "US vs UK"
        rows.append(dict(case=case, model=g.model, pair=pair, n=g.n, test=g.test, effect=g.effect,
                         ci_low=g.ci_low, ci_high=g.ci_high,
                         share_below=getattr(g.detail, "share_below", np.nan), p=g.pvalue,
                         p_bonferroni=g.pvalue_adjusted, reject=g.reject, method=g.detail.method,
                         p_paper=gp.pvalue, reject_paper=gp.reject, ip=ip[g.model], ip_paper=ip_paper[g.model]))
        gc = cmap.get((g.model, g.group))
        rows[-1].update(n_clusters=gc.n_clusters if gc else np.nan, p_cluster=gc.pvalue if gc else np.nan,
                        reject_cluster=gc.reject if gc else np.nan)
    return rows


def reproduce(
    released: str | os.PathLike[str],
    *,
    cases: tuple[str, ...] = CASES,
    alpha: float = 0.05,
    n_resamples_paper: int = 1000,
    seed: int = 0,
) -> Reproduction:
    """Recompute the study's result tables from its released outputs, in both modes.

    Parameters
    ----------
    released : path
        A folder with the jiarui-liu/IP layout (``case_1/``, ``case_2/``, ``case_3/``).
    cases : tuple of {"culture", "education", "echo"}
        Which cases to recompute.
    alpha : float
        Family-wise level (Bonferroni within each model in the stated mode; plain α in
        paper-compatibility mode, which has no correction).
    n_resamples_paper : int
        L of the paper-compatible Monte Carlo p = b/L (the released code used 1,000, no seed).
    seed : int
        Seed for the paper-compatible Monte Carlo and the bootstrap intervals.

    Returns
    -------
    Reproduction

    Examples
    --------
    >>> rep = reproduce("../shared/data/jiarui-liu-IP", cases=("education",))
    >>> rep.verdicts().set_index("model").loc["llama2_7b", ["ip", "ip_paper"]].tolist()
    [False, True]
    """
    root = _dir(released)
    if isinstance(cases, str) or not cases or any(c not in CASES for c in cases):
        raise ValueError(f"`cases` must be a non-empty tuple of {CASES}, got {cases!r}")
    loaders = {"culture": load_case1, "education": load_case2, "echo": load_case3}
    rows: list[dict[str, Any]] = []
    for case in cases:
        rows += _rows(case, loaders[case](root), alpha, n_resamples_paper, seed)
    return Reproduction(pd.DataFrame(rows), alpha, n_resamples_paper, seed)
