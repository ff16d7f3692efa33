"""Intervals and statements a statistician would sign (issue 24 item 3): bounded per-background
intervals, the unreachable-level warning, PB's descriptive line, labels with the real names."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import ipcausal
from ipcausal import PairSet
from ipcausal.study.test import LevelUnreachableWarning


def _pairs(score_i: list[float], score_j: list[float], a: str = "sae", b: str = "esl", **extra: object) -> PairSet:
    return PairSet.from_records({"pair_id": k, "background_i": a, "background_j": b, "x_i": "q", "x_j": "q'",
                                 "score_i": si, "score_j": sj, **extra} for k, (si, sj) in enumerate(zip(score_i, score_j)))


def test_mean_per_background_is_exact_binomial_for_0_1() -> None:
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LevelUnreachableWarning)
        r = ipcausal.test(_pairs([0, 0, 0, 0, 0], [1, 0, 0, 0, 0]))
    per = r.backgrounds["(model not given)"]
    lo, hi = proportion.proportion_confint(1, 5, alpha=0.05, method="beta")
    assert (per["esl"]["ci_low"], per["esl"]["ci_high"]) == pytest.approx((lo, hi))  # not [-0.355, 0.755]
    lo0, hi0 = proportion.proportion_confint(0, 5, alpha=0.05, method="beta")
    assert (per["sae"]["ci_low"], per["sae"]["ci_high"]) == pytest.approx((lo0, hi0))  # not [0, 0]
    assert per["sae"]["ci_high"] > 0.5


def test_ratings_get_an_interval_inside_their_range() -> None:
    rng = np.random.default_rng(0)
    si, sj = rng.integers(1, 7, 12).tolist(), rng.integers(1, 7, 12).tolist()
    r = ipcausal.test(_pairs(si, sj), rng=1)
    for name, values in (("sae", si), ("esl", sj)):
        b = r.backgrounds["(model not given)"][name]
        assert min(values) <= b["ci_low"] <= b["mean"] <= b["ci_high"] <= max(values)
    again = ipcausal.test(_pairs(si, sj), rng=1)
    assert again.backgrounds == r.backgrounds and again.pb == r.pb


def test_a_group_that_cannot_reach_alpha_says_so() -> None:
    five = _pairs([0] * 5, [1, 1, 0.5, 2, 1])
    msg = ("(model not given): sae vs esl: cannot reject whatever the data: with 5 informative pairs (Δ ≠ 0) the "
           "smallest attainable p is 0.0625, above the (corrected) level 0.05 it must reach; it needs at least 6 "
           "informative pairs (Δ ≠ 0)")
    with pytest.warns(LevelUnreachableWarning, match=r"with 5 informative pairs \(Δ ≠ 0\) the smallest attainable "
                                                     r"p is 0\.0625, above the \(corrected\) level 0\.05"):
        r = ipcausal.test(five)
    assert r.warnings == (msg,) and r.groups[0].pvalue == 0.0625
    assert f"warning: {msg}" in str(r)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LevelUnreachableWarning)
        six = ipcausal.test(_pairs([0] * 6, [1, 1, 0.5, 2, 1, 3]))  # 2⁻⁵ = 0.03125 ≤ 0.05: no warning
    assert six.warnings == () and six.groups[0].pvalue == pytest.approx(0.03125)
    with pytest.warns(LevelUnreachableWarning, match=r"it needs at least 5 informative pairs"):
        ipcausal.test(_pairs([0] * 4, [1, 1, 0.5, 2]), alternative="greater")  # one-sided: 2⁻⁴ > 0.05


def test_similarity_groups_are_checked_too() -> None:
    ps = PairSet.from_records({"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q",
                               "similarity": s} for k, s in enumerate([0.5, 0.6, 0.8, 0.7]))
    with pytest.warns(LevelUnreachableWarning, match=r"with 3 informative pairs \(s ≠ m0\) the smallest attainable "
                                                     r"p is 0\.125"):
        ipcausal.test(ps)


def test_str_names_the_backgrounds_the_outcome_and_what_pb_is() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LevelUnreachableWarning)  # 4 informative pairs: tested above
        text = str(ipcausal.test(_pairs([1, 2, 3, 1, 2, 3, 1], [2, 2, 4, 3, 2, 4, 1])))
    lines = text.splitlines()
    assert lines[0] == "ipcausal report — rating / score difference"
    assert "Δ = score(esl) − score(sae); effect = mean(Δ)" in lines
    assert "background_a" not in text and "interval outcome" not in text
    assert ("  (PB is descriptive (the spread of the per-background means): above 0 in a finite sample even without "
            "any effect, unless the means are exactly equal, and not a test; its interval can exclude 0 where the test "
            "does not reject)") in lines


def test_a_floating_point_zero_effect_prints_as_0() -> None:
    from ipcausal.report import plain_lines

    si = [0.7, 0.1, 0.3] * 3
    sj = [a + d for a, d in zip(si, [0.1, 0.2, -0.3] * 3)]
    r = ipcausal.test(_pairs(si, sj))
    assert r.groups[0].effect != 0 and abs(r.groups[0].effect) < 1e-15  # the data's own rounding
    assert "scored no different on average than to sae prompts (mean Δ = score(esl) − score(sae) = 0, d_z = 0.00, 95 % " \
        in plain_lines(r)[0]
    row = next(line for line in str(r).splitlines() if line.strip().startswith("sae vs esl"))
    assert row.split()[5] == "0"  # pair (3 words), n, method, mean Δ


def test_a_two_point_exact_null_is_two_bars() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ipcausal.report.plots import _hist
    from ipcausal.stats.null import Distribution

    fig, ax = plt.subplots()
    _hist(ax, Distribution("pmf", (-1.0, 1.0), (0.5, 0.5)), "grey", 40)
    bars = sorted(ax.patches, key=lambda p: p.get_x())
    assert len(bars) == 2 and bars[0].get_x() + bars[0].get_width() < bars[1].get_x()  # a gap between them
    plt.close(fig)


def test_reports_are_titled_with_the_input_and_the_model(tmp_path: Path) -> None:
    from ipcausal.cli import main

    f = tmp_path / "scored.jsonl"
    _pairs([1, 2, 3, 1, 2, 3, 1], [2, 2, 4, 3, 2, 4, 1], model="smollm2").write(f)
    assert main(["test", str(f), "-o", str(tmp_path / "report.json")]) == 0
    assert json.loads((tmp_path / "report.json").read_text())["title"] == "scored.jsonl — smollm2"
    assert main(["report", str(tmp_path / "report.json"), "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "<h1>ipcausal report — scored.jsonl — smollm2</h1>" in page
    assert "rating / score difference (interval)" in page
    assert main(["report", str(f), "-o", str(tmp_path / "r.md")]) == 0
    assert (tmp_path / "r.md").read_text().startswith("# ipcausal report — scored — smollm2")
