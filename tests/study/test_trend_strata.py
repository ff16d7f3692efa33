"""``ipcausal.test(pairs, design=Design(trend=[…], strata=COLUMN))``: the trend row and the per-cue rows (issue 21, items 3-4)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ipcausal
from ipcausal import Design
from ipcausal.pairs import PairSet
from ipcausal.stats.ordered import heterogeneity_test, trend_test

LEVELS = ["sae", "esl_light", "esl_heavy"]


def _ordered(n: int = 12, seed: int = 0) -> tuple[PairSet, np.ndarray]:
    """Pairs of the three levels per prompt (stored in mixed orientations) and the hand-built y."""
    rng = np.random.default_rng(seed)
    y = rng.integers(1, 6, size=(n, 3)).astype(float)
    recs = []
    for p in range(n):
        for a, b in ((0, 1), (0, 2), (1, 2)):
            i, j = (a, b) if (p + a) % 2 else (b, a)  # some pairs stored the other way round
            recs.append({"pair_id": f"p{p}:{i}{j}", "prompt_id": f"p{p:02d}", "background_i": LEVELS[i],
                         "background_j": LEVELS[j], "x_i": "q", "x_j": "q", "score_i": y[p, i], "score_j": y[p, j]})
    return PairSet.from_records(recs), y


def _cued(n: int = 10, seed: int = 1) -> tuple[PairSet, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = rng.integers(-2, 3, size=(n, 2)).astype(float)
    d[:, 1] += 1
    recs = []
    for p in range(n):
        for c, cue in enumerate(("spelling", "vocabulary")):
            recs.append({"pair_id": f"p{p}:{cue}", "prompt_id": f"p{p:02d}", "background_i": "us",
                         "background_j": "uk", "x_i": "q", "x_j": "q", "score_i": 3.0, "score_j": 3.0 + d[p, c],
                         "cue": cue})
    return PairSet.from_records(recs), d


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_trend_row_is_trend_test_on_the_hand_built_matrix() -> None:
    ps, y = _ordered(n=6)
    r = ipcausal.test(ps, design=Design(trend=LEVELS), method="exact", rng=0)
    (t,) = r.trend
    ref = trend_test(y, method="exact")
    assert t.levels == tuple(LEVELS) and t.n_prompts == y.shape[0]
    assert t.statistic == pytest.approx(ref.statistic) and t.pvalue == pytest.approx(ref.pvalue)
    assert t.level_means == pytest.approx(ref.level_means) and t.slope == pytest.approx(ref.slope)
    reversed_ = ipcausal.test(ps, design=Design(trend=LEVELS[::-1]), method="exact", rng=0).trend[0]
    assert reversed_.statistic == pytest.approx(-ref.statistic)  # the order given is the order tested


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_trend_and_strata_leave_the_rest_of_the_report_alone() -> None:
    ps, _ = _ordered()
    plain = ipcausal.test(ps, rng=3, n_resamples=999).to_dict()
    with_trend = ipcausal.test(ps, design=Design(trend=LEVELS), rng=3, n_resamples=999).to_dict()
    assert with_trend.pop("trend") and plain.pop("trend") == []
    assert with_trend == plain


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_strata_per_cue_effects_are_the_test_of_each_subset() -> None:
    ps, d = _cued()
    r = ipcausal.test(ps, design=Design(strata="cue"), method="exact", rng=0)
    (s,) = r.strata
    frame = ps.to_frame()
    for row in s.cues:
        sub = ipcausal.test(PairSet(frame[frame["cue"] == row.cue]), method="exact", rng=0).groups[0]
        assert (row.n, row.effect, row.pvalue) == (sub.n, pytest.approx(sub.effect), pytest.approx(sub.pvalue))
        assert (row.ci_low, row.ci_high) == (pytest.approx(sub.ci_low), pytest.approx(sub.ci_high))
    assert s.pooled_effect == pytest.approx(d.mean(axis=0).mean())
    het = heterogeneity_test(d, method="exact")
    assert s.heterogeneity_n == d.shape[0]
    assert s.heterogeneity_pvalue == pytest.approx(het.pvalue)
    assert s.heterogeneity_statistic == pytest.approx(het.statistic)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pooled_stratified_weights_each_cue_once() -> None:
    ps, d = _cued()
    frame = ps.to_frame()
    extra = frame[frame["cue"] == "spelling"].copy()  # the spelling cue twice as often
    extra["pair_id"] = extra["pair_id"] + "b"
    extra["prompt_id"] = extra["prompt_id"] + "b"
    big = PairSet(__import__("pandas").concat([frame, extra], ignore_index=True))
    s = ipcausal.test(big, design=Design(strata="cue"), rng=0, n_resamples=999).strata[0]
    assert s.pooled_effect == pytest.approx((d[:, 0].mean() + d[:, 1].mean()) / 2)
    assert s.heterogeneity_pvalue is None and "every prompt" in s.heterogeneity_note


def test_report_read_keeps_the_parts_and_reads_files_without_them(tmp_path) -> None:
    ps, _ = _cued()
    r = ipcausal.test(ps, design=Design(strata="cue"), rng=0, n_resamples=999, cluster="prompt_id")
    back = ipcausal.Report.read(r.write(tmp_path / "r.json"))
    assert back.to_dict() == r.to_dict() and back.strata[0].cues == r.strata[0].cues
    payload = json.loads((tmp_path / "r.json").read_text())
    del payload["report"]["strata"], payload["report"]["trend"]  # a file written before the parts
    (tmp_path / "old.json").write_text(json.dumps(payload))
    old = ipcausal.Report.read(tmp_path / "old.json")
    assert old.strata == () and old.trend == () and old.groups == r.groups


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"trend": ["sae", "esl_light", "esl_mid"]}, ValueError, r"`trend`: unknown level\(s\) \['esl_mid'\]"),
    ({"trend": "sae"}, TypeError, "`trend` must be a list of background names"),
    ({"trend": ["sae"]}, ValueError, "`trend` must name 2 to 8 distinct levels"),
    ({"strata": "nope"}, ValueError, "`strata`='nope' is not a column of `pairs`"),
    ({"strata": 3}, TypeError, "`strata` must be a column name"),
    ({"strats": "cue"}, TypeError, "unexpected keyword argument 'strats'"),
])
def test_bad_design_keywords(kwargs, exc, match) -> None:
    ps, _ = _ordered()
    with pytest.raises(exc, match=match):
        ipcausal.test(ps, design=Design(**kwargs))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_prompt_missing_a_level_is_left_out_and_counted() -> None:
    ps, y = _ordered(n=7)
    frame = ps.to_frame()
    keep = ~((frame["prompt_id"] == "p03") & ((frame["background_i"] == "esl_heavy") | (frame["background_j"] == "esl_heavy")))
    (t,) = ipcausal.test(PairSet(frame[keep]), design=Design(trend=LEVELS), method="exact", rng=0).trend
    ref = trend_test(np.delete(y, 3, axis=0), method="exact")  # the complete prompts' rows only
    assert (t.n_prompts, t.n_incomplete) == (6, 1)
    assert t.statistic == pytest.approx(ref.statistic) and t.pvalue == pytest.approx(ref.pvalue)
    from ipcausal.study.text import trend_line

    assert "6 prompts; 1 incomplete left out" in trend_line(t)


def test_too_few_complete_prompts_is_an_error() -> None:
    # every pairwise group has 3 pairs, but only p0 has a score under all three levels
    plan = {"p0": [(0, 1), (0, 2), (1, 2)], "p1": [(1, 2)], "p2": [(1, 2)], "p3": [(0, 2)], "p4": [(0, 2)],
            "p5": [(0, 1)], "p6": [(0, 1)]}
    recs = [{"pair_id": f"{p}:{a}{b}", "prompt_id": p, "background_i": LEVELS[a], "background_j": LEVELS[b],
             "x_i": "q", "x_j": "q", "score_i": 1.0 + k, "score_j": 2.0 + a} for p, ab in plan.items()
            for k, (a, b) in enumerate(ab)]
    with pytest.raises(ValueError, match=r"`trend`: model .* has 1 prompt\(s\) with a score under every level .*"
                                         r"\(6 incomplete\); the test needs >= 2"):
        ipcausal.test(PairSet.from_records(recs), design=Design(trend=LEVELS))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_test_options_carry_trend_and_strata() -> None:
    from ipcausal.study.options import TestOptions

    ps, _ = _ordered()
    opts = TestOptions(design=Design(trend=LEVELS), n_resamples=999)
    assert opts.design.trend == tuple(LEVELS) and opts.design.strata is None
    assert "design" not in TestOptions().kwargs()
    r = ipcausal.test(ps, rng=0, **opts.kwargs())
    assert r.trend[0].levels == tuple(LEVELS)
    with pytest.raises(TypeError, match="`trend` must be a list of background names"):
        Design(trend="sae")
    with pytest.raises(TypeError, match="`strata` must be a column name"):
        Design(strata=1)
    with pytest.raises(TypeError, match="`design` must be a Design or None, got dict"):
        TestOptions(design={"trend": LEVELS})


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_trend_past_the_exact_limit_takes_the_monte_carlo_route() -> None:
    """Issue 28: 200 prompts crashed `ipcausal.test(pairs, trend=[…])` on the Monte Carlo route
    (`ordered.py:97`, the thread check); it now runs and equals trend_test on the same matrix."""
    ps, y = _ordered(n=200, seed=4)
    (t,) = ipcausal.test(ps, design=Design(trend=LEVELS), n_resamples=2000, rng=1).trend
    assert t.method == "monte-carlo" and t.n_prompts == 200
    assert t.statistic == pytest.approx(trend_test(y, n_resamples=2000, rng=1).statistic)
