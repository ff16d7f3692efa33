"""ipcausal.test: grouping, orientation, families, corrections, warnings, paper mode."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import ipcausal
from ipcausal import PairSet
from ipcausal.study.test import MonteCarloResolutionWarning


def interval_pairs(n: int = 40, shift: float = 0.0, seed: int = 0, models: tuple[str, ...] = ()) -> PairSet:
    rng = np.random.default_rng(seed)
    rows = []
    bgs = [("SAE", "AAE"), ("SAE", "ESL"), ("AAE", "ESL")]
    for m in models or (None,):
        for a, b in bgs:
            for k in range(n):
                si = float(rng.integers(1, 6))
                sj = si + float(rng.integers(-1, 2)) + (shift if b == "AAE" or a == "AAE" else 0.0) * (1 if b == "AAE" else -1)
                row = {"pair_id": f"{m}-{a}-{b}-{k}", "background_i": a, "background_j": b, "x_i": "p", "x_j": "p'",
                       "score_i": si, "score_j": sj}
                if m is not None:
                    row["model"] = m
                rows.append(row)
    return PairSet.from_records(rows)


def test_one_group_per_unordered_pair_and_orientation() -> None:
    rows = [
        {"pair_id": 1, "background_i": "US", "background_j": "UK", "x_i": "a", "x_j": "b", "score_i": 1, "score_j": 3},
        {"pair_id": 2, "background_i": "UK", "background_j": "US", "x_i": "b", "x_j": "a", "score_i": 3, "score_j": 1},
        {"pair_id": 3, "background_i": "US", "background_j": "UK", "x_i": "a", "x_j": "b", "score_i": 2, "score_j": 3},
    ]
    report = ipcausal.test(PairSet.from_records(rows))
    (g,) = report.groups
    assert (g.background_a, g.background_b) == ("US", "UK")
    assert g.effect == pytest.approx((2 + 2 + 1) / 3)  # pair 2 flipped into US -> UK orientation (the majority)
    reordered = ipcausal.test(PairSet.from_records(rows[::-1]))
    assert reordered.groups[0].group == "US vs UK" and reordered.groups[0].effect == g.effect
    tie = ipcausal.test(PairSet.from_records(rows[:2] + [{**rows[2], "pair_id": 4, "background_i": "UK",
                                                         "background_j": "US", "score_i": 3, "score_j": 2}]))
    assert tie.groups[0].group == "UK vs US"  # 2 of 3 stored UK -> US


def test_three_backgrounds_bonferroni_and_holm() -> None:
    ps = interval_pairs(shift=1.0)
    rep = ipcausal.test(ps)
    assert len(rep.groups) == 3 and rep.correction == "bonferroni"
    for g in rep.groups:
        assert g.pvalue_adjusted == pytest.approx(min(1.0, 3 * g.pvalue))
        assert g.reject == (g.pvalue_adjusted <= 0.05)
    assert rep.ip_detected
    holm = ipcausal.test(ps, correction="holm")
    assert all(h.pvalue_adjusted <= b.pvalue_adjusted + 1e-15 for h, b in zip(holm.groups, rep.groups))


def test_families_per_model() -> None:
    ps = interval_pairs(n=20, models=("m1", "m2"))
    rep = ipcausal.test(ps)
    assert len(rep.groups) == 6
    assert set(rep.ip_detected_by_model()) == {"m1", "m2"}
    for g in rep.groups:
        assert g.pvalue_adjusted == pytest.approx(min(1.0, 3 * g.pvalue))  # m = 3 per model, not 6
    frame = rep.to_frame()
    assert list(frame["model"].unique()) == ["m1", "m2"]
    assert {"group", "n", "test", "statistic", "effect", "ci_low", "ci_high", "pvalue", "pvalue_adjusted", "reject"} <= set(frame)
    assert set(rep.pb) == {"m1", "m2"}


def test_no_effect_no_detection() -> None:
    rep = ipcausal.test(interval_pairs(n=60, shift=0.0, seed=3))
    assert not rep.ip_detected


def test_similarity_outcome_and_text_report() -> None:
    rng = np.random.default_rng(1)
    rows = [{"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": "color", "x_j": "colour",
             "similarity": float(rng.beta(2, 3))} for k in range(50)]
    rep = ipcausal.test(pd.DataFrame(rows))
    (g,) = rep.groups
    assert g.test == "sign" and rep.outcome == "similarity" and rep.m0 == 0.8
    assert g.pvalue < 1e-6 and rep.ip_detected
    text = str(rep)
    assert "median(similarity) < 0.8" in text and "US vs UK" in text and "YES" in text
    data = json.loads(rep.to_json())
    assert data["ip_detected"] is True and data["groups"][0]["detail"]["n_ties"] == 0
    assert rep.pb == {}


def test_reads_a_path(tmp_path) -> None:
    path = interval_pairs(n=10).write(tmp_path / "p.csv")
    assert len(ipcausal.test(path).groups) == 3


def test_monte_carlo_resolution_warning() -> None:
    rng = np.random.default_rng(2)
    rows = []
    bgs = ["a", "b", "c", "d", "e", "f"]
    k = 0
    for i, a in enumerate(bgs):
        for b in bgs[i + 1:]:
            for _ in range(30):
                rows.append({"pair_id": k, "background_i": a, "background_j": b, "x_i": "", "x_j": "",
                             "score_i": float(rng.normal()), "score_j": float(rng.normal())})
                k += 1
    with pytest.warns(MonteCarloResolutionWarning, match="raise `n_resamples`"):
        rep = ipcausal.test(PairSet.from_records(rows), method="monte-carlo", n_resamples=100, rng=0)
    assert len(rep.groups) == 15 and rep.warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ipcausal.test(PairSet.from_records(rows), method="monte-carlo", n_resamples=2000, rng=0)


def test_reproducible_with_seed() -> None:
    ps = interval_pairs(n=200, seed=9)
    a = ipcausal.test(ps, method="monte-carlo", rng=4, n_resamples=5000)
    b = ipcausal.test(ps, method="monte-carlo", rng=4, n_resamples=5000)
    assert a.to_dict() == b.to_dict()


def test_paper_compat_mode() -> None:
    ps = interval_pairs(shift=2.0)
    rep = ipcausal.test(ps, method="paper-compat", rng=0)
    assert rep.paper_compat and rep.correction == "none"
    assert all(g.detail.method == "paper-compat" and g.detail.n_resamples == 1000 for g in rep.groups)
    assert any(g.pvalue == 0.0 for g in rep.groups)  # b / L, as released
    assert "paper-compatibility mode" in str(rep)


def test_pytest_does_not_collect_test(tmp_path) -> None:
    """A user's test module that imports ``test`` must not get it collected as a test."""
    import subprocess
    import sys

    mod = tmp_path / "test_user_suite.py"
    mod.write_text("from ipcausal import test\n\n\ndef test_real():\n    assert callable(test)\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(mod)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    collected = [line for line in out.stdout.splitlines() if "::" in line]
    assert collected == [f"{mod.name}::test_real"], out.stdout


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"alpha": 0}, ValueError, "`alpha` must lie in"),
        ({"alpha": 1.0}, ValueError, "`alpha` must lie in"),
        ({"correction": "fdr"}, ValueError, "`correction` must be one of"),
        ({"method": "fast"}, ValueError, "`method` must be one of"),
        ({"outcome": "binary"}, ValueError, "`outcome` must be one of"),
        ({"outcome": "similarity"}, ValueError, "needs the column `similarity`"),
        ({"n_resamples": 0}, ValueError, "`n_resamples` must be >= 1"),
        ({"m0": float("nan")}, ValueError, "`m0` must be a finite number"),
        ({"m0": 5}, ValueError, r"`m0` must lie in \(0, 1\]"),
        ({"m0": -1}, ValueError, r"`m0` must lie in \(0, 1\]"),
        ({"m0": 0.0}, ValueError, r"`m0` must lie in \(0, 1\]"),
        ({"alternative": "up"}, ValueError, "`alternative` must be one of"),
        ({"method": "paper"}, ValueError, "`method` must be one of .*paper-compat"),
    ],
)
def test_validation(kwargs, exc, match) -> None:
    with pytest.raises(exc, match=match):
        if "outcome" in kwargs:
            ipcausal.test(interval_pairs(n=5), design=ipcausal.Design(**kwargs))
        else:
            ipcausal.test(interval_pairs(n=5), **kwargs)


def test_bad_pairs() -> None:
    with pytest.raises(TypeError, match="`pairs` must be a PairSet"):
        ipcausal.test([1, 2, 3])
    no_outcome = PairSet.from_records([{"pair_id": 1, "background_i": "a", "background_j": "b", "x_i": "", "x_j": ""}])
    with pytest.raises(ValueError, match="`pairs` has no outcome"):
        ipcausal.test(no_outcome)
    one = PairSet.from_records([{"pair_id": 1, "background_i": "a", "background_j": "b", "x_i": "", "x_j": "",
                                 "score_i": 1, "score_j": 2}])
    with pytest.raises(ValueError, match="a test needs >= 2"):
        ipcausal.test(one)
    both = one.with_columns(similarity=0.5)
    with pytest.raises(ValueError, match="both scores and similarity"):
        ipcausal.test(both)
