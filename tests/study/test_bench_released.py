"""``released_bench`` (issue 20 item 5): the study's released outputs as IP-Bench's first table."""

from __future__ import annotations

import pandas as pd
import pytest

from ipcausal.study.bench import released_bench
from ipcausal.study.bench import BenchReport
from ipcausal.study.bench import MODEL_LABELS


@pytest.fixture(scope="module")
def rel(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("released")
    return shared_data / "jiarui-liu-IP", out, released_bench(shared_data / "jiarui-liu-IP", out=out)


def test_models_and_cells(rel):
    _, out, rep = rel
    assert set(rep.models) == set(MODEL_LABELS.values()) and rep.cases == ("culture", "education", "echo")
    has = {(c.model, c.case) for c in rep.cells}
    # the two GPT-4 snapshots stay apart: each has cells only in the cases that ran it
    assert ("gpt-4-0613", "echo") in has and ("gpt-4-0613", "education") not in has
    assert ("gpt-4-1106-preview", "education") in has and ("gpt-4-1106-preview", "echo") not in has
    assert len([c for c in rep.cells if c.case == "education"]) == 7
    assert BenchReport.read(out).cells == rep.cells and (out / "bench.csv").is_file()
    for c in rep.cells:
        assert (out / c.report).is_file() and c.alignment and c.stance


def test_education_effects_equal_the_released_score_means(rel):
    root, _, rep = rel
    folder = root / "case_2" / "aes_scores"
    names = {v: k for k, v in MODEL_LABELS.items() if (folder / f"{k}_sae_results.txt").is_file()}
    for c in rep.cells:
        if c.case != "education":
            continue
        for g in c.groups:
            a, b = g.group.split(" vs ")  # effect = score(b essay) − score(a essay)
            sa, sb = (pd.read_csv(folder / f"{names[c.model]}_{x.lower()}_results.txt", header=None, names=["i", "s"])
                      for x in (a, b))
            common = set(sa.i) & set(sb.i)
            want = sb[sb.i.isin(common)].s.mean() - sa[sa.i.isin(common)].s.mean()
            assert g.effect == pytest.approx(want, abs=1e-12), (c.model, g.group)


def test_comparisons_cover_every_model_pair_of_the_interval_cases(rel):
    _, out, rep = rel
    for case in ("education", "echo"):
        m = len([c for c in rep.cells if c.case == case])
        groups = {g.group for c in rep.cells if c.case == case for g in c.groups}
        rows = [x for x in rep.comparisons if x.case == case]
        assert len(rows) == len(groups) * m * (m - 1) // 2
        assert all(x.pvalue_holm >= x.pvalue - 1e-12 for x in rows)
    assert not [x for x in rep.comparisons if x.case == "culture"]
    assert len(pd.read_csv(out / "comparisons.csv")) == len(rep.comparisons)
