"""Human scores in the test (issue 30, item 2): the seeded draw, the sheet, the labels, PPI per background pair.

The per-group numbers are checked against ipcausal.stats.ppi_mean_test and permutation_test on arrays
oriented by hand; the statistics themselves are checked in tests/stats/test_ppi.py and calibrated in
benchmarks/calib_ppi.py.
"""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import ipcausal
from ipcausal.cli import main
from ipcausal.stats import permutation_test, ppi_mean_test
from ipcausal.study.human import HumanLabels, human_sample, read_human, write_human_sheet
from ipcausal.study.record import RunRecord


def _study(n: int = 120, seed: int = 0, bias: float = 0.6, flip_every: int = 0, cluster: bool = False):
    """Scored pairs whose judge adds ``bias`` to side j, and the human scores (no effect for people)."""
    g = np.random.default_rng(seed)
    hi = g.normal(3, 1, n)
    hj = hi + g.normal(0, 1, n)
    fi = hi + g.normal(0, 0.5, n)
    fj = hj + bias + g.normal(0, 0.5, n)
    recs, human = [], {}
    for k in range(n):
        swap = flip_every and k % flip_every == 0  # stored the other way round
        rec = {"pair_id": f"p{k}", "background_i": "sae", "background_j": "aae", "x_i": f"q{k}", "x_j": f"q{k}'",
               "y_i": f"answer {k}", "y_j": f"reply {k}", "score_i": fi[k], "score_j": fj[k]}
        h = (hi[k], hj[k])
        if swap:
            rec.update(background_i="aae", background_j="sae", x_i=f"q{k}'", x_j=f"q{k}", y_i=f"reply {k}",
                       y_j=f"answer {k}", score_i=fj[k], score_j=fi[k])
            h = (hj[k], hi[k])
        if cluster:
            rec["question_id"] = f"c{k // 2}"
        recs.append(rec)
        human[("", f"p{k}")] = h
    return ipcausal.PairSet.from_records(recs), human


def test_the_draw_is_seeded_and_uniform() -> None:
    ps, _ = _study(50)
    a, b = human_sample(ps, 10, rng=3), human_sample(ps, 10, rng=3)
    assert a == b and len(a.keys) == 10 and a.population == 50 and human_sample(ps, 10, rng=4).keys != a.keys
    counts = {}
    for s in range(2000):
        for k in human_sample(ps, 10, rng=s).keys:
            counts[k] = counts.get(k, 0) + 1
    freq = np.array([counts.get(("", f"p{k}"), 0) for k in range(50)]) / 2000
    assert np.all(np.abs(freq - 0.2) < 0.04)  # 0.2 ± 4.5 binomial SE
    cl, _ = _study(40, cluster=True)
    s = human_sample(cl, 5, rng=0, cluster="question_id")
    assert len(s.keys) == 10 and s.cluster == "question_id"  # 5 clusters of 2 pairs
    with pytest.raises(ValueError, match="`n` must be an integer from 2 to the 50 pairs there are, got 51"):
        human_sample(ps, 51)
    with pytest.raises(ValueError, match="`rng` must be a non-negative integer"):
        human_sample(ps, 5, rng=-1)


def _fill(sheet: Path, key: Path, human: dict, skip: int = 0) -> None:
    items = {it["item"]: it for it in json.loads(key.read_text())["items"]}
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    with open(sheet, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            it = items[int(r["item"])]
            if skip and int(r["item"]) <= skip:
                w.writerow(r)
                continue
            r["human"] = f"{human[(it['model'], it['pair_id'])][0 if it['side'] == 'i' else 1]:.6f}"
            w.writerow(r)


def test_sheet_round_trip_and_the_report(tmp_path: Path) -> None:
    ps, human = _study(120, flip_every=3)
    sheet, key = write_human_sheet(ps, tmp_path / "sheet.csv", n=60, rng=1)
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    assert len(rows) == 120 and list(rows[0]) == ["item", "prompt", "response", "human", "comment"]
    assert {r["response"] for r in rows} <= {f"answer {k}" for k in range(120)} | {f"reply {k}" for k in range(120)}
    _fill(sheet, key, human)
    labels = read_human(sheet)
    assert labels.n == 60 and labels.own_draw and labels.provenance()["seed"] == 1
    report = ipcausal.test(ps, human=labels, rng=0)
    (g,) = report.groups
    (h,) = report.human
    assert report.human_source.own_draw and report.human_source.same_population and not report.human_source.assumption
    assert not any("human scores" in w for w in report.warnings)
    # the same numbers from arrays oriented by hand: Δ = score(aae) − score(sae)
    df = ps.to_frame()
    sign = np.where(df["background_i"] == g.background_a, 1.0, -1.0)
    f = (df["score_j"] - df["score_i"]).to_numpy() * sign
    lab = np.array([("", p) in labels.scores for p in df["pair_id"]])
    got = [labels.scores.get(("", p), (0.0, 0.0)) for p in df["pair_id"]]  # as read back from the sheet
    hd = np.array([b - a for a, b in got]) * sign
    ref = ppi_mean_test(hd[lab], f[lab], f[~lab])
    assert (h.estimate, h.ci_low, h.ci_high, h.lam) == pytest.approx((ref.statistic, ref.ci_low, ref.ci_high, ref.lam))
    assert h.n_labelled == 60 and h.n_units == 120 and h.human_estimate == pytest.approx(hd[lab].mean())
    bias = permutation_test(hd[lab] - f[lab], rng=np.random.default_rng(5))
    assert h.bias == pytest.approx(bias.statistic) and (h.bias_pvalue <= 0.05) == (bias.pvalue <= 0.05)
    assert g.reject and not h.reject  # the judge "finds" its own bias; people see no effect
    assert h.note.startswith("the judge-only verdict may be the judge's, not the model's")
    assert "the judge's error differs between" in h.note
    (sae, aae) = h.agreement
    assert sae.background == "sae" and abs(sae.mean_difference) < 0.2 and aae.mean_difference < -0.4
    text = str(report)
    assert "effect on the human scale" in text and "the package's own seeded draw (seed 1, 60 of 120 pairs)" in text
    back = ipcausal.Report.read(report.write(tmp_path / "r.json"))
    assert back.human == report.human and back.human_source == report.human_source


def test_labels_from_elsewhere_carry_the_assumption(tmp_path: Path) -> None:
    ps, human = _study(80)
    labels = HumanLabels({k: v for k, v in list(human.items())[:40]}, source="mine.csv")  # the first 40: not random
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = ipcausal.test(ps, human=labels)
    assert not report.human_source.own_draw
    (w,) = [w for w in report.warnings if w.startswith("human scores:")]
    assert "assume the labelled pairs are a uniformly random subset" in w
    # a LABELS.csv and a DataFrame give the same numbers
    path = tmp_path / "labels.csv"
    path.write_text("pair_id,human_i,human_j\n" + "".join(f"{p},{a},{b}\n" for (_, p), (a, b) in labels.scores.items()))
    import pandas as pd

    frame = pd.read_csv(path)
    for given in (path, frame, read_human(path)):
        again = ipcausal.test(ps, human=given)
        assert again.human[0].estimate == pytest.approx(report.human[0].estimate)


def test_a_draw_from_other_pairs_and_unrated_rows_are_said(tmp_path: Path) -> None:
    ps, human = _study(100)
    sheet, key = write_human_sheet(ps, tmp_path / "s.csv", n=40, rng=0)
    _fill(sheet, key, human, skip=2)  # the first two rows left empty: up to 2 pairs unrated
    labels = read_human(sheet)
    assert labels.unrated in (1, 2)
    fewer = ps.head(90)  # pairs dropped since the draw
    report = ipcausal.test(fewer, human=labels)
    src = report.human_source
    assert src.own_draw and src.same_population is False
    assert "other than the 90 tested" in src.assumption and "missing at random" in src.assumption


def test_clusters_are_the_unit(tmp_path: Path) -> None:
    ps, human = _study(120, cluster=True)
    sheet, key = write_human_sheet(ps, tmp_path / "s.csv", n=30, rng=2, cluster="question_id")
    _fill(sheet, key, human)
    report = ipcausal.test(ps, human=read_human(sheet), cluster="question_id")
    (h,) = report.human
    assert h.unit == "clusters" and h.n_units == 60 and h.n_labelled == 30


def test_validation() -> None:
    ps, human = _study(20)
    sim = ipcausal.PairSet.from_records({"pair_id": f"p{k}", "background_i": "us", "background_j": "uk", "x_i": "q",
                                         "x_j": "q", "similarity": 0.5 + k / 50} for k in range(20))
    with pytest.raises(ValueError, match="`human`: human scores enter the test for an interval outcome"):
        ipcausal.test(sim, human=HumanLabels(human))
    with pytest.raises(TypeError, match="`human` must be HumanLabels, a path to LABELS.csv"):
        ipcausal.test(ps, human=[1, 2])
    with pytest.raises(ValueError, match="`human`: no such file"):
        ipcausal.test(ps, human="nope.csv")


def test_the_cli_validate_sample_then_test_human(tmp_path: Path, capsys) -> None:
    ps, human = _study(100)
    pairs = ps.write(tmp_path / "pairs.jsonl")
    sheet = tmp_path / "sheet.csv"
    assert main(["validate", "sample", str(pairs), "-n", "40", "--rng", "0", "-o", str(sheet)]) == 0
    assert "wrote 80 responses of 40 pairs (seed 0)" in capsys.readouterr().err
    _fill(sheet, tmp_path / "sheet.key.json", human)
    out = tmp_path / "report.json"
    assert main(["test", str(pairs), "--human", str(sheet), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "on the human scale (PPI++, 40 of 100 pairs rated by people)" in printed
    record = RunRecord.read(out)
    assert record.labels["own draw"] is True and record.labels["seed"] == 0 and record.labels["pairs labelled"] == 40
    assert main(["report", str(out), "-o", str(tmp_path / "r.html")]) == 0
    assert "On the human scale" in (tmp_path / "r.html").read_text()
    assert main(["test", str(pairs), "--human-key", "k.json"]) == 2
