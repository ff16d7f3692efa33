"""Reproduce the study's three result tables from the authors' released per-model outputs.

The released folder (layout of ``jiarui-liu/IP``) holds, per model:

* ``case_1/objective_scores/records_answers_<model>.txt`` — JSONL, one record per objective
  AmbrQA question with the US and UK answers and a GPT-4 similarity rating 1–5
  (→ s = (r − 1)/4; sign test of median(s) = 0.8 against < 0.8);
* ``case_1/subjective/results/<file>.csv`` — ``;``-separated, one row per GlobalOpinionQA
  question with ``us_score`` (how close the answer to the US-worded prompt is to the US survey
  answer) and ``uk_score`` (the same for the UK); the study's similarity of the two is
  s = 1 − |us_score − uk_score| (this reproduces its GPT-4 subjective row: mean 0.83, 592 of 825
  above 0.8, p = 4.18e-37).  The culture case is reported for the objective questions, the
  subjective ones and all of them together (column ``subset``);
* ``case_2/aes_scores/<model>_{sae,aae,esl}_results.txt`` — ``index,score`` essay scores per
  prompt and style (three style pairs, paired permutation tests, Bonferroni over 3);
* ``case_3/results/results_<model>.csv`` — per (belief case, domain, subset) the ``;``-joined
  correctness (0 = wrong, 100 = right) per item; WF = false belief, CF = true belief, SD/FD =
  same/foreign-domain statement.  Pairs: item k under WF_x vs CF_x, x ∈ {SD, FD} stacked.

:func:`reproduce` runs :func:`ipcausal.test` twice per case — the method as stated (exact
p-values, Bonferroni within each model) and ``method="paper-compat"`` (the released code:
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
from ipcausal._validate import int_seed
from ipcausal.study.defaults import CASES

__all__ = ["Reproduction", "reproduce", "released_dir",
           "load_case1", "load_case1_subjective", "load_case2", "load_case3", "CASES",
           "SUBJECTIVE_FILES"]

#: The released subjective result files and the model names of the objective files they belong to.
#: ``llama_results.csv`` (750 of the 825 questions) is taken to be Llama-2-70B: it is the only model of the
#: objective files without a file of its own, and the only file with the GPT-4 file's extra columns.
SUBJECTIVE_FILES: dict[str, str] = {
    "gpt_results.csv": "gpt-4-1106-preview", "llama_results.csv": "llama2_70b", "results_alpaca.csv": "alpaca",
    "results_llama13B.csv": "llama2_13b", "results_llama7B.csv": "llama2_7b", "results_vicuna13B.csv": "vicuna_13b",
    "results_vicuna7B.csv": "vicuna_7b",
}

_STYLE_PAIRS = (("SAE", "ESL"), ("SAE", "AAE"), ("ESL", "AAE"))  # the study's order; Δ = first − second


def released_dir(released: Any) -> Path:
    """The folder of the study's released outputs (``case_1/``, ``case_2/``, ``case_3/``), checked."""
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
    files = sorted((released_dir(released) / "case_1" / "objective_scores").glob("records_answers_*.txt"))
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


def load_case1_subjective(released: str | os.PathLike[str]) -> PairSet:
    """Case 1 (subjective, GlobalOpinionQA): one pair per answered question, s = 1 − |us_score − uk_score|.

    Rows whose ``us_score`` or ``uk_score`` is missing or outside [0, 1] (the model's answer
    matched no option) are skipped; :func:`reproduce` reports n per model.
    """
    folder = released_dir(released) / "case_1" / "subjective" / "results"
    files = [folder / name for name in SUBJECTIVE_FILES if (folder / name).is_file()]
    if not files:
        raise FileNotFoundError("`released`: no case_1/subjective/results/*.csv")
    rows = []
    for f in files:
        model = SUBJECTIVE_FILES[f.name]
        df = pd.read_csv(f, sep=";", low_memory=False)
        for col in ("question", "us_score", "uk_score"):
            if col not in df.columns:
                raise ValueError(f"{f}: no `{col}` column (the released case 1 subjective format)")
        us = pd.to_numeric(df["us_score"], errors="coerce").to_numpy(float)
        uk = pd.to_numeric(df["uk_score"], errors="coerce").to_numpy(float)
        for k in range(len(df)):
            a, b = us[k], uk[k]
            if not (0.0 <= a <= 1.0 and 0.0 <= b <= 1.0):
                continue
            q = str(df["question"].iat[k])
            rows.append(dict(pair_id=f"{model}:subjective:{k}", model=model, background_i="US", background_j="UK",
                             x_i=q, x_j=q, us_score=float(a), uk_score=float(b), similarity=1.0 - abs(a - b),
                             domain="subjective", source=str(df["source"].iat[k]) if "source" in df else None))
    return PairSet.from_records(rows)


def load_case2(released: str | os.PathLike[str]) -> PairSet:
    """Case 2 (essays): per model and prompt, the three style pairs; Δ = score(first) − score(second).

    Pairs are stored as background_i = second style, background_j = first style, so that
    ipcausal's Δ = score_j − score_i equals the study's "SAE−ESL" orientation.
    """
    folder = released_dir(released) / "case_2" / "aes_scores"
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
    files = sorted((released_dir(released) / "case_3" / "results").glob("results_*.csv"))
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

    Columns of :attr:`table`: ``case``, ``subset`` (culture: ``objective``, ``subjective``, ``all``;
    otherwise ``all``), ``model``, ``pair``, ``n``, ``test``, ``effect`` (mean Δ, or median similarity
    for case 1), ``mean_s`` and ``share_above`` (case 1: the study's "similarity" and "statistic"),
    ``share_below`` (case 1), ``baseline`` (interval cases: the mean score under the first
    background — the accuracy under the true belief for echo), ``p`` and
    ``p_bonferroni`` and ``reject`` (method as stated), ``method``, ``p_paper`` and
    ``reject_paper`` (paper-compatibility mode, uncorrected at α), and the per-model
    verdicts ``ip`` / ``ip_paper``.
    """

    table: pd.DataFrame
    alpha: float
    n_resamples_paper: int
    seed: int

    def verdicts(self) -> pd.DataFrame:
        """IP per (case, subset, model) in both modes."""
        return self.table.groupby(["case", "subset", "model"], sort=False)[["ip", "ip_paper"]].first().reset_index()

    def to_markdown(self) -> str:
        """The tables as Markdown (one per case), padded so that they also line up in a terminal.

        Echo effects are in percentage points next to the accuracy under the true belief, as the
        study's table gives them; culture shows the study's mean similarity and share above 0.8.
        The echo table adds the test with the question as the cluster and says which verdicts change.
        """
        from ipcausal.study.text import format_p

        out = []
        for case, sub in self.table.groupby("case", sort=False):
            out.append(f"### {case}\n")
            clustered = "p_cluster" in sub and sub["p_cluster"].notna().any()
            if case == "culture":
                hdr = ["model", "questions", "n", "mean s", "share s>0.8", "median s", "share s<0.8", "p (stated)",
                       "reject", "p (paper-compat)", "reject (paper)"]
            elif case == "echo":
                hdr = ["model", "pair", "n", "accuracy, true belief", "Δ (pp)", "95% CI (pp)", "p (stated)",
                       "p Bonf.", "reject", "p (paper-compat)", "reject (paper)"]
            else:
                hdr = ["model", "pair", "n", "mean Δ", "p (stated)", "p Bonf.", "reject", "p (paper-compat)",
                       "reject (paper)"]
            if clustered:
                hdr += ["p (question = cluster)", "reject (cluster)"]
            rows = []
            for r in sub.itertuples():
                tail = [format_p(r.p_paper), "yes" if r.reject_paper else "no"]
                if clustered:
                    tail += [format_p(r.p_cluster), "yes" if r.reject_cluster else "no"]
                if case == "culture":
                    rows.append([r.model, r.subset, str(r.n), f"{r.mean_s:.4f}", f"{r.share_above:.4f}",
                                 f"{r.effect:.4f}", f"{r.share_below:.3f}", format_p(r.p), "yes" if r.reject else "no",
                                 *tail])
                elif case == "echo":
                    rows.append([r.model, r.pair, str(r.n), f"{100 * r.baseline:.1f} %", f"{100 * r.effect:+.2f}",
                                 f"[{100 * r.ci_low:+.2f}, {100 * r.ci_high:+.2f}]", format_p(r.p),
                                 format_p(r.p_bonferroni), "yes" if r.reject else "no", *tail])
                else:
                    rows.append([r.model, r.pair, str(r.n), f"{r.effect:.4f}", format_p(r.p), format_p(r.p_bonferroni),
                                 "yes" if r.reject else "no", *tail])
            out += md_lines(hdr, rows)
            out.append("")
            if clustered:
                changed = [f"{r.model} {r.pair}" for r in sub.itertuples() if bool(r.reject_cluster) != bool(r.reject)]
                out.append("With the question as the cluster (its same- and foreign-domain pairs flipped together): "
                           + (f"verdicts that change: {', '.join(changed)}." if changed else "no verdict changes.")
                           + "\n")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.to_markdown()


def md_lines(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table whose cells are padded to the same terminal width (CJK and emoji count 2)."""
    from ipcausal.study.text import display_width

    widths = [max([display_width(h)] + [display_width(r[i]) for r in rows]) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c + " " * (w - display_width(c)) for c, w in zip(cells, widths)) + " |"

    return [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows]


def _rows(case: str, ps: PairSet, alpha: float, n_resamples_paper: int, seed: int,
          subset: str = "all") -> list[dict[str, Any]]:
    from ipcausal.study.groups import ClusterWarning
    from ipcausal.study.test import MonteCarloResolutionWarning, test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MonteCarloResolutionWarning)
        warnings.simplefilter("ignore", ClusterWarning)  # the study's pair-level test, reproduced as released
        stated = test(ps, alpha=alpha, method="exact", correction="bonferroni", rng=seed)
        paper = test(ps, alpha=alpha, method="paper-compat", n_resamples=n_resamples_paper, rng=seed)
        clustered = (test(ps, alpha=alpha, method="exact", correction="bonferroni", rng=seed, cluster="question_id")
                     if "question_id" in ps else None)
    pmap = {(g.model, g.group): g for g in paper.groups}
    cmap = {(g.model, g.group): g for g in clustered.groups} if clustered is not None else {}
    ip, ip_paper = stated.ip_detected_by_model(), paper.ip_detected_by_model()
    rows = []
    df = ps.to_frame()
    for g in stated.groups:
        gp = pmap[(g.model, g.group)]
        pair = f"{g.background_b}−{g.background_a}" if case != "culture" else "US vs UK"
        mean_s = share_above = baseline = np.nan
        if case == "culture":
            s = df.loc[df["model"] == g.model, "similarity"].to_numpy(float)
            mean_s, share_above = float(s.mean()), float((s > 0.8).mean())
        else:
            baseline = float(stated.backgrounds.get(g.model, {}).get(g.background_a, {}).get("mean", np.nan))
        rows.append(dict(case=case, subset=subset, model=g.model, pair=pair, n=g.n, test=g.test, effect=g.effect,
                         ci_low=g.ci_low, ci_high=g.ci_high, mean_s=mean_s, share_above=share_above, baseline=baseline,
                         share_below=getattr(g.detail, "share_below", np.nan), p=g.pvalue,
                         p_bonferroni=g.pvalue_adjusted, reject=g.reject, method=g.detail.method,
                         p_paper=gp.pvalue, reject_paper=gp.reject, ip=ip[g.model], ip_paper=ip_paper[g.model]))
        gc = cmap.get((g.model, g.group))
        rows[-1].update(n_clusters=gc.n_clusters if gc else np.nan, p_cluster=gc.pvalue if gc else np.nan,
                        reject_cluster=gc.reject if gc else np.nan)
    return rows


def _culture_rows(root: Path, alpha: float, n_resamples_paper: int, seed: int) -> list[dict[str, Any]]:
    """Objective, subjective (when released) and all questions together, in this order per model."""
    keep = ["pair_id", "model", "background_i", "background_j", "x_i", "x_j", "similarity", "domain"]
    obj = load_case1(root)
    parts = {"objective": obj}
    if (root / "case_1" / "subjective" / "results").is_dir():
        subj = load_case1_subjective(root)
        parts["subjective"] = subj
        both = pd.concat([obj.to_frame()[keep], subj.to_frame()[keep]], ignore_index=True)
        parts["all"] = PairSet.from_frame(both)
    rows: list[dict[str, Any]] = []
    for name, ps in parts.items():
        rows += _rows("culture", ps, alpha, n_resamples_paper, seed, subset=name)
    order = {m: k for k, m in enumerate(dict.fromkeys(r["model"] for r in rows))}
    return sorted(rows, key=lambda r: (order[r["model"]], list(parts).index(r["subset"])))


def reproduce(
    released: str | os.PathLike[str],
    *,
    cases: tuple[str, ...] = CASES,
    alpha: float = 0.05,
    n_resamples_paper: int = 1000,
    rng: int | np.random.Generator | None = 0,
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
    rng : int, numpy.random.Generator or None, default 0
        Seeds the paper-compatible Monte Carlo and the bootstrap intervals: every test of the
        tables gets the same integer seed (the int itself, or one drawn from the Generator),
        recorded as ``Reproduction.seed``.

    Returns
    -------
    Reproduction

    Examples
    --------
    >>> rep = reproduce("../shared/data/jiarui-liu-IP", cases=("education",))
    >>> rep.verdicts().set_index("model").loc["llama2_7b", ["ip", "ip_paper"]].tolist()
    [False, True]
    """
    root = released_dir(released)
    if isinstance(cases, str) or not cases or any(c not in CASES for c in cases):
        raise ValueError(f"`cases` must be a non-empty tuple of {CASES}, got {cases!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"`alpha` must lie in (0, 1), got {alpha!r}")
    if isinstance(n_resamples_paper, bool) or not isinstance(n_resamples_paper, (int, np.integer)) \
            or n_resamples_paper < 1:
        raise ValueError(f"`n_resamples_paper` must be an integer >= 1, got {n_resamples_paper!r}")
    seed = int_seed(rng)
    loaders = {"education": load_case2, "echo": load_case3}
    rows: list[dict[str, Any]] = []
    for case in cases:
        if case == "culture":
            rows += _culture_rows(root, alpha, n_resamples_paper, seed)
        else:
            rows += _rows(case, loaders[case](root), alpha, n_resamples_paper, seed)
    return Reproduction(pd.DataFrame(rows), alpha, n_resamples_paper, seed)
