"""The study's released outputs (../shared/data) through ipcausal.test."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ipcausal
from ipcausal.study.test import MonteCarloResolutionWarning
from ipcausal import PairSet

ESSAY_MODELS = {  # file prefix -> name in the study's ttest_results.csv
    "alpaca": "Alpaca",
    "gpt-4-1106-preview": "GPT-4",
    "llama2_7b": "Llama7B",
    "llama2_13b": "Llama13B",
    "llama2_70b": "Llama70B",
    "vicuna_7b": "Vicuna7B",
    "vicuna_13b": "Vicuna13B",
}


def essay_pairs(root: Path, prefix: str) -> PairSet:
    scores = {
        s: pd.read_csv(root / "case_2" / "aes_scores" / f"{prefix}_{s}_results.txt", header=None, names=["i", "score"])
        .set_index("i")["score"]
        for s in ("sae", "aae", "esl")
    }
    rows = []
    for a, b in (("sae", "esl"), ("sae", "aae"), ("esl", "aae")):
        for i in scores["sae"].index:
            rows.append(
                {"pair_id": f"{a}-{b}-{i}", "background_i": a.upper(), "background_j": b.upper(), "x_i": "", "x_j": "",
                 "score_i": scores[a][i], "score_j": scores[b][i], "model": prefix}
            )
    return PairSet.from_records(rows)


@pytest.mark.parametrize("prefix", sorted(ESSAY_MODELS))
def test_case2_exact_p_agrees_with_released_monte_carlo(shared_data: Path, prefix: str) -> None:
    root = shared_data / "jiarui-liu-IP"
    released = pd.read_csv(root / "case_2" / "ttest_results.csv")
    released = released[released["Model"] == ESSAY_MODELS[prefix]].set_index("Pair")
    report = ipcausal.test(essay_pairs(root, prefix), rng=0)
    assert len(report.groups) == 3
    for g in report.groups:
        assert g.detail.method == "exact-lattice" and g.n == 518
        row = released.loc[f"{g.background_a}-{g.background_b}"]
        # the study reports mean(first - second); ours is mean(second - first)
        assert g.effect == pytest.approx(-row["Avg Delta"], abs=1e-12)
        p_theirs = row["P-Value"]  # b / 1000 from an unseeded Monte Carlo
        se = math.sqrt(max(g.pvalue * (1 - g.pvalue), 1e-3) / 1000)
        assert abs(g.pvalue - p_theirs) <= 4 * se + 1e-3
        assert g.pvalue_adjusted == pytest.approx(min(1.0, 3 * g.pvalue))


def test_case2_paper_compat_reproduces_p_zero(shared_data: Path) -> None:
    ps = essay_pairs(shared_data / "jiarui-liu-IP", "alpaca")
    report = ipcausal.test(ps, method="paper-compat", rng=1)
    by = {g.group: g for g in report.groups}
    assert by["SAE vs AAE"].pvalue == 0.0  # b / L without +1, as released
    assert by["SAE vs AAE"].pvalue_adjusted == 0.0 and report.correction == "none"
    exact = ipcausal.test(ps, rng=1)
    assert all(g.pvalue > 0 for g in exact.groups)


def test_case3_correctness_pairs(shared_data: Path) -> None:
    df = pd.read_csv(shared_data / "jiarui-liu-IP" / "case_3" / "results" / "results_llama2-7b-chat.csv")
    rows = []
    for (dataset, domain), _ in df.groupby([df["dataset"], df["case"].str[3:]]):
        wrong = df[(df["dataset"] == dataset) & (df["case"] == f"WF_{domain}")]["persuasion_counts"].iloc[0]
        right = df[(df["dataset"] == dataset) & (df["case"] == f"CF_{domain}")]["persuasion_counts"].iloc[0]
        w = [int(v) for v in str(wrong).split(";")]
        r = [int(v) for v in str(right).split(";")]
        assert len(w) == len(r)
        for k, (a, b) in enumerate(zip(r, w)):
            rows.append({"pair_id": f"{dataset}-{domain}-{k}", "background_i": "true belief",
                         "background_j": "false belief", "x_i": "", "x_j": "", "score_i": a / 100, "score_j": b / 100})
    ps = PairSet.from_records(rows)
    assert len(ps) == 2 * (466 + 463 + 464 + 459)
    report = ipcausal.test(ps)
    (g,) = report.groups
    assert g.detail.method == "exact-lattice"
    assert g.effect == pytest.approx(ps.deltas.mean())
    assert 0 < g.pvalue <= 1
    assert report.pb[report.groups[0].model].statistic == pytest.approx(abs(g.effect) / 2)


def test_case1_similarity_records(shared_data: Path) -> None:
    path = shared_data / "jiarui-liu-IP" / "case_1" / "objective_scores" / "records_answers_vicuna_7b.txt"
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [
        {"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": r["question"], "x_j": r["question"],
         "similarity": (float(r["score"]) - 1) / 4}
        for k, r in enumerate(recs)
        if str(r.get("score", "")).strip() in {"1", "2", "3", "4", "5"}
    ]
    ps = PairSet.from_records(rows)
    assert len(ps) > 800
    report = ipcausal.test(ps, m0=0.8)
    (g,) = report.groups
    s = ps["similarity"].to_numpy()
    from scipy.stats import binomtest

    ref = binomtest(int((s < 0.8).sum()), int((s != 0.8).sum()), 0.5, alternative="greater").pvalue
    assert g.pvalue == pytest.approx(ref, rel=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MonteCarloResolutionWarning)
        paper = ipcausal.test(ps, m0=0.8, method="paper-compat")
    assert paper.groups[0].pvalue == pytest.approx(
        binomtest(int((s > 0.8).sum()), s.size, 0.5, alternative="greater").pvalue, rel=1e-9
    )
    assert np.isfinite(g.effect)
