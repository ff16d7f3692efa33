"""ipcausal.study.compare: per background pair, the test of D = Δ^a − Δ^b equals the plain paired
sign-flip test of the differences (pairs and whole clusters), storage orientation does not matter,
mismatched pair ids are named, and every validation message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ipcausal.pairs import PairSet
from ipcausal.stats.equivalence import equivalence_test
from ipcausal.stats.permutation import permutation_test
from ipcausal.study.groups import ClusterWarning
from ipcausal.study.compare import PairMismatchWarning, compare, differences

STYLES = ("SAE", "AAE", "ESL")


def _run(model: str, shift: float, seed: int, n: int = 40, questions: bool = False) -> pd.DataFrame:
    """Essay-like scores: one SAE score per prompt reused by both style pairs, integer ratings."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n):
        base = rng.integers(2, 6)
        y = {"SAE": base, "AAE": base - rng.binomial(1, shift), "ESL": base + rng.integers(-1, 2)}
        for other in ("AAE", "ESL"):
            rows.append({"pair_id": f"p{p}-{other}", "prompt_id": f"p{p}", "question_id": f"q{p // 2}",
                         "background_i": "SAE", "background_j": other, "x_i": f"prompt {p}",
                         "x_j": f"prompt {p} in {other}", "score_i": float(y["SAE"]), "score_j": float(y[other]),
                         "model": model})
    df = pd.DataFrame(rows)
    return df if questions else df.drop(columns=["question_id"])


def _d(a: pd.DataFrame, b: pd.DataFrame, other: str) -> np.ndarray:
    sa, sb = a[a.background_j == other], b.set_index("pair_id").loc[a[a.background_j == other].pair_id]
    return (sa.score_j - sa.score_i).to_numpy() - (sb.score_j - sb.score_i).to_numpy()


def test_each_group_is_the_paired_sign_flip_test_of_d():
    a, b = _run("big", 0.6, 1), _run("small", 0.1, 2)
    report = compare(PairSet.from_frame(a), PairSet.from_frame(b), method="exact", correction="holm")
    assert [g.group for g in report.groups] == ["SAE vs AAE", "SAE vs ESL"]
    assert {g.model for g in report.groups} == {"big − small"}
    ps = []
    for g, other in zip(report.groups, ("AAE", "ESL")):
        d = _d(a, b, other)
        ref = permutation_test(d, method="exact")
        assert g.pvalue == ref.pvalue
        assert g.effect == pytest.approx(d.mean())
        assert (g.ci_low, g.ci_high) == pytest.approx((ref.ci_low, ref.ci_high))
        ps.append(ref.pvalue)
    holm = sorted(ps)
    assert max(g.pvalue_adjusted for g in report.groups) == pytest.approx(max(min(1, 2 * holm[0]), holm[1]))
    assert "Δ(big) − Δ(small)" in report.direction


def test_orientation_of_b_does_not_matter():
    a, b = _run("A", 0.5, 3), _run("B", 0.0, 4)
    flipped = b.copy()
    rows = flipped.index[::3]
    flipped.loc[rows, ["background_i", "background_j"]] = flipped.loc[rows, ["background_j", "background_i"]].values
    flipped.loc[rows, ["score_i", "score_j"]] = flipped.loc[rows, ["score_j", "score_i"]].values
    flipped.loc[rows, ["x_i", "x_j"]] = flipped.loc[rows, ["x_j", "x_i"]].values
    r1 = compare(a, b, method="exact")
    r2 = compare(a, flipped.sample(frac=1.0, random_state=0), method="exact")
    assert [(g.pvalue, g.effect) for g in r1.groups] == [(g.pvalue, g.effect) for g in r2.groups]


def test_whole_clusters_flip_together():
    a, b = _run("A", 0.6, 5, questions=True), _run("B", 0.0, 6, questions=True)
    with pytest.warns(ClusterWarning, match="question_id"):  # ipcausal.test's warning reaches the caller
        compare(a, b, method="exact")
    report = compare(a, b, method="exact", cluster="question_id")
    for g, other in zip(report.groups, ("AAE", "ESL")):
        d = _d(a, b, other)
        sums = d.reshape(-1, 2).sum(1)  # two prompts per question, stored in order
        assert g.pvalue == permutation_test(sums, method="exact").pvalue
        assert g.n_clusters == sums.size and g.n == d.size


def test_margin_gives_the_equivalence_test_of_d():
    a = _run("A", 0.2, 7, n=120)
    b = a.copy()
    b["model"] = "B"
    rng = np.random.default_rng(0)
    b["score_j"] = b["score_j"] + rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0], size=len(b))
    report = compare(a, b, margin=0.3, method="exact")
    for g, other in zip(report.groups, ("AAE", "ESL")):
        eq = equivalence_test(_d(a, b, other), margin=0.3, method="exact", ci_method="shift")  # no bound known
        assert g.equivalence.pvalue == pytest.approx(eq.pvalue)
        assert g.equivalence.verdict == ("reject" if g.reject else ("equivalent" if eq.equivalent else "inconclusive"))


def test_joint_correction_across_background_pairs():
    a, b = _run("A", 0.7, 8), _run("B", 0.0, 9)
    report = compare(a, b, correction="westfall-young", rng=1, n_resamples=2_000)
    assert set(report.omnibus) == {"A − B"}
    assert all(g.pvalue_adjusted >= g.pvalue - 1e-12 for g in report.groups)


def test_differences_keep_integers_and_ids():
    a, b = _run("A", 0.5, 10), _run("B", 0.5, 11)
    d = differences(a, b)
    assert d["model"].unique().tolist() == ["A − B"]
    assert "prompt_id" in d.columns and "question_id" in differences(_run("A", 0.5, 10, questions=True), b).columns
    np.testing.assert_array_equal(d.deltas, (a.score_j - a.score_i).to_numpy() - (b.score_j - b.score_i).to_numpy())
    assert np.all(d.deltas == np.rint(d.deltas))


def test_same_model_name_falls_back_to_a_and_b_and_labels_override():
    a, b = _run("M", 0.5, 12), _run("M", 0.0, 13)
    assert differences(a, b)["model"].iloc[0] == "a − b"
    assert differences(a, b, labels=("without", "with"))["model"].iloc[0] == "without − with"


def test_mismatched_pair_ids_are_named_or_intersected():
    a, b = _run("A", 0.5, 14), _run("B", 0.0, 15)
    b_short = b.iloc[4:]
    with pytest.raises(ValueError, match=r"same pair ids \(only in `a`: p0-AAE, p0-ESL, p1-AAE, p1-ESL\)"):
        compare(a, b_short)
    with pytest.warns(PairMismatchWarning, match="4 pairs dropped"):
        report = compare(a, b_short, on_mismatch="intersect", method="exact")
    assert sum(g.n for g in report.groups) == len(b_short)
    with pytest.raises(ValueError, match="`on_mismatch` must be one of"):
        compare(a, b, on_mismatch="drop")
    with pytest.raises(TypeError, match=r"unexpected option\(s\) 'outcome'; the test options are alpha, "):
        compare(a, b, outcome="similarity")


def test_validation_messages():
    a, b = _run("A", 0.5, 16), _run("B", 0.0, 17)
    other = b.copy()
    other.loc[0, "background_j"] = "ESL"
    other.loc[0, "x_j"] = "other"
    with pytest.raises(ValueError, match="pair different backgrounds under the same pair id: p0-AAE"):
        compare(a, other)
    with pytest.raises(ValueError, match="`b` has no `score_i`/`score_j`"):
        compare(a, b.drop(columns=["score_i", "score_j"]))
    with pytest.raises(TypeError, match="`a` must be a PairSet"):
        compare(42, b)
    with pytest.raises(TypeError, match="`labels` must be two names"):
        compare(a, b, labels="AB")
    with pytest.raises(ValueError, match="`labels` must differ"):
        compare(a, b, labels=("x", "x"))
    with pytest.raises(ValueError, match="share no pair id"), pytest.warns(PairMismatchWarning):
        differences(a, b.assign(pair_id=b.pair_id + "-other"), on_mismatch="intersect")


def test_compare_runs_builds_the_table_of_pairs_every_run_answered():
    from ipcausal.stats.models import compare_models
    from ipcausal.study.compare import compare_runs

    runs = {"A": _run("A", 0.6, 20), "B": _run("B", 0.0, 21), "C": _run("C", 0.1, 22).iloc[6:]}
    res = compare_runs(runs, rng=3, n_resamples=2_000)
    assert list(res) == ["SAE vs AAE", "SAE vs ESL"]
    gen = np.random.default_rng(3)
    for group, other in zip(res, ("AAE", "ESL")):
        ids = sorted(set(runs["C"].pair_id[runs["C"].background_j == other]))  # the pairs every run has
        table = np.column_stack([r.set_index("pair_id").loc[ids].eval("score_j - score_i").to_numpy()
                                 for r in runs.values()])
        ref = compare_models(table, models=list(runs), rng=gen, n_resamples=2_000)
        assert res[group].n == len(ids)
        assert res[group].adjusted_pvalues == ref.adjusted_pvalues and res[group].differences == ref.differences


def test_compare_runs_with_two_runs_equals_compare():
    from ipcausal.study.compare import compare_runs

    a, b = _run("A", 0.6, 23, questions=True), _run("B", 0.0, 24, questions=True)
    res = compare_runs({"A": a, "B": b}, method="exact", cluster="question_id")
    report = compare(a, b, method="exact", cluster="question_id")
    for g in report.groups:
        assert res[g.group].pvalue == g.pvalue and res[g.group].differences[0] == pytest.approx(g.effect)
        assert res[g.group].n_clusters == g.n_clusters
    flipped = compare_runs({"A": a, "B": b}, method="exact", order=["AAE", "ESL", "SAE"])
    assert flipped["AAE vs SAE"].differences[0] == pytest.approx(-res["SAE vs AAE"].differences[0])


def test_compare_runs_validation():
    from ipcausal.study.compare import compare_runs

    a, b = _run("A", 0.6, 25), _run("B", 0.0, 26)
    with pytest.raises(TypeError, match="`runs` must be a mapping"):
        compare_runs([a, b])
    with pytest.raises(ValueError, match="`runs` needs at least 2 runs"):
        compare_runs({"A": a})
    with pytest.raises(ValueError, match="run 'B' has no `score_i`/`score_j`"):
        compare_runs({"A": a, "B": b.drop(columns=["score_i", "score_j"])})
    with pytest.raises(ValueError, match="`cluster`: run 'A' has no column 'question_id'"):
        compare_runs({"A": a, "B": b}, cluster="question_id")
    with pytest.raises(ValueError, match="nothing to compare"):
        compare_runs({"A": a, "B": b.assign(pair_id=b.pair_id + "x")})
    with pytest.raises(TypeError, match="`rng` must be None"):
        compare_runs({"A": a, "B": b}, rng=-1)
