"""Inference that respects the design (issue 11): clusters, repeated samples, `order`, PB per response."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import ipcausal
from ipcausal import PairSet
from ipcausal.study.groups import ClusterWarning


def farm_like(n_q: int = 40, rho: float = 0.9, effect: float = 0.0, seed: int = 0) -> PairSet:
    """Two strongly correlated pairs per question (same- and foreign-domain statement), 0/1 outcomes."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_q):
        shared = rng.random() < 0.5
        for dom in ("same", "foreign"):
            flip = shared if rng.random() < rho else rng.random() < 0.5
            true, false = (1, 0) if flip else (0, 1)
            if rng.random() < effect:
                false = 0
            rows.append({"pair_id": f"{q}-{dom}", "background_i": "true_belief", "background_j": "false_belief",
                         "x_i": "t", "x_j": "f", "score_i": true, "score_j": false, "question_id": f"q{q}"})
    return PairSet.from_records(rows)


def test_cluster_test_is_the_plain_test_on_cluster_sums() -> None:
    ps = farm_like(effect=0.3, seed=1)
    rep = ipcausal.test(ps, cluster="question_id", method="exact")
    (g,) = rep.groups
    sums = ps.to_frame().assign(d=ps.deltas).groupby("question_id")["d"].sum().to_numpy()
    plain = ipcausal.permutation_test(sums, method="exact")
    assert g.pvalue == plain.pvalue and g.n_clusters == 40 and g.n == 80 and g.unit == "clusters"
    assert g.effect == pytest.approx(ps.deltas.mean())  # per pair, whatever the unit
    assert (g.ci_low, g.ci_high) == pytest.approx((plain.ci_low / 2, plain.ci_high / 2))
    assert g.data.x == tuple(np.sort(sums).tolist()) or sorted(g.data.x) == sorted(sums.tolist())


def test_pairs_sharing_an_id_warn_once_and_cluster_silences_it() -> None:
    ps = farm_like()
    with pytest.warns(ClusterWarning, match="share an id") as rec:
        ipcausal.test(ps, method="exact")
    assert len([w for w in rec if issubclass(w.category, ClusterWarning)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClusterWarning)
        ipcausal.test(ps, cluster="question_id", method="exact")


def test_clustered_null_pair_test_over_rejects_cluster_test_does_not() -> None:
    """A small seeded check (the full calibration is benchmarks/calib_design.py)."""
    reps, alpha = 300, 0.05
    pair_rej = clus_rej = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClusterWarning)
        for k in range(reps):
            ps = farm_like(n_q=30, rho=0.95, seed=100 + k)
            pair_rej += ipcausal.test(ps, method="exact").ip_detected
            clus_rej += ipcausal.test(ps, method="exact", cluster="question_id").ip_detected
    se = math.sqrt(alpha * (1 - alpha) / reps)
    assert clus_rej / reps <= alpha + 3 * se
    assert pair_rej / reps > clus_rej / reps  # ignoring the clusters over-rejects


def test_unequal_cluster_sizes_interval_by_inversion() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for c in range(25):
        for k in range(1 + c % 3):
            rows.append({"pair_id": f"{c}-{k}", "background_i": "a", "background_j": "b", "x_i": "", "x_j": "",
                         "score_i": 0.0, "score_j": float(rng.normal(0.4, 1.0)), "cl": f"c{c}"})
    ps = PairSet.from_records(rows)
    (g,) = ipcausal.test(ps, cluster="cl", method="monte-carlo", n_resamples=4000, rng=1).groups
    assert g.ci_low < g.effect < g.ci_high and "bisection" in g.detail.ci_method
    assert g.effect == pytest.approx(ps.deltas.mean())


def test_repeated_samples_are_the_plain_test_of_per_pair_means() -> None:
    rng = np.random.default_rng(5)
    rows = []
    for k in range(30):
        si = rng.integers(1, 6, 5).tolist()
        sj = (rng.integers(1, 6, 5) + (k % 4 == 0)).clip(1, 5).tolist()
        rows.append({"pair_id": k, "background_i": "sae", "background_j": "aae", "x_i": "", "x_j": "",
                     "score_i": si[0], "score_j": sj[0], "scores_i": si, "scores_j": sj})
    ps = PairSet.from_records(rows)
    (g,) = ipcausal.test(ps, method="exact").groups
    means = np.array([np.mean(r["scores_j"]) - np.mean(r["scores_i"]) for r in rows])
    plain = ipcausal.permutation_test(means, method="exact")
    assert g.pvalue == pytest.approx(plain.pvalue, rel=1e-12) and g.effect == pytest.approx(means.mean())
    assert g.detail.method == "exact-lattice"  # the sums of 5 integer scores stay on the lattice
    first_only = ipcausal.test(ps.drop_columns("scores_i", "scores_j"), method="exact").groups[0]
    assert first_only.effect == pytest.approx(np.mean([r["score_j"] - r["score_i"] for r in rows]))
    # unequal counts: means, not sums
    rows[0]["scores_i"] = rows[0]["scores_i"][:3]
    (g2,) = ipcausal.test(PairSet.from_records(rows), method="monte-carlo", rng=0).groups
    means[0] = np.mean(rows[0]["scores_j"]) - np.mean(rows[0]["scores_i"])
    assert g2.effect == pytest.approx(means.mean())


def test_order_fixes_the_direction_whatever_the_storage() -> None:
    rows = []
    for k in range(20):
        fwd = k % 3 != 0
        si, sj = (3, 4) if fwd else (4, 3)  # "b" always scores one more than "a"
        bi, bj = ("a", "b") if fwd else ("b", "a")
        rows.append({"pair_id": k, "background_i": bi, "background_j": bj, "x_i": "", "x_j": "",
                     "score_i": si, "score_j": sj})
    ps = PairSet.from_records(rows)
    (g,) = ipcausal.test(ps, design=ipcausal.Design(order=["b", "a"])).groups
    assert (g.background_a, g.background_b, g.effect) == ("b", "a", -1.0)
    (g,) = ipcausal.test(ps, design=ipcausal.Design(order=["a", "b"]), alternative="greater").groups
    assert g.effect == 1.0 and g.pvalue < 1e-4
    with pytest.raises(ValueError, match="`order`: group a vs b .* stored both ways"):
        ipcausal.test(ps, alternative="greater")


def test_pb_counts_a_reused_response_once() -> None:
    rows = []
    for p in range(12):
        sae = 3.0 + (p % 2)
        for other, score in (("aae", 2.0), ("esl", 5.0)):
            rows.append({"pair_id": f"{p}-{other}", "background_i": "sae", "background_j": other, "x_i": "",
                         "x_j": "", "score_i": sae, "score_j": score, "prompt_id": f"p{p}"})
    ps = PairSet.from_records(rows)
    rep = ipcausal.test(ps, method="exact")
    pb = rep.pb["(model not given)"]
    assert pb.counts == {"aae": 12, "esl": 12, "sae": 12}  # not 24 SAE responses
    assert pb.statistic == pytest.approx(np.std([2.0, 5.0, 3.5], ddof=0))


def test_pb_bootstrap_resamples_prompts() -> None:
    values = np.array([1.0, 2.0, 1.5, 3.0, 0.5, 2.5])
    labels = np.array(["a", "b", "a", "b", "a", "b"], dtype=object)
    prompts = np.array(["p1", "p1", "p2", "p2", "p3", "p3"], dtype=object)
    pb = ipcausal.personalization_bias(values, labels, clusters=prompts, n_resamples=500, rng=7)
    from ipcausal.stats._kernels import boot_indices
    from ipcausal.stats._validate import seed_from

    # the same draws, written out: 3 prompts drawn with replacement from the counter-based stream
    idx = boot_indices(3, 500, seed_from(np.random.default_rng(7)), 0)
    w = np.stack([np.bincount(row, minlength=3) for row in idx])
    ma = (w @ np.array([1.0, 1.5, 0.5])) / w.sum(axis=1)
    mb = (w @ np.array([2.0, 3.0, 2.5])) / w.sum(axis=1)
    lo, hi = np.quantile(np.abs(ma - mb) / 2, [0.025, 0.975])
    assert (pb.ci_low, pb.ci_high) == pytest.approx((lo, hi), rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"cluster": "nope"}, ValueError, "`cluster`: `pairs` has no column 'nope'"),
        ({"cluster": 3}, TypeError, "`cluster` must be a column name"),
        ({"order": "ab"}, TypeError, "`order` must be a list"),
        ({"order": ["true_belief"]}, ValueError, r"`order` must list every background.*false_belief"),
        ({"order": ["true_belief", "true_belief", "false_belief"]}, ValueError, "`order` names a background twice"),
    ],
)
def test_validation(kwargs, exc, match) -> None:
    with pytest.raises(exc, match=match):
        if "order" in kwargs:
            ipcausal.test(farm_like(n_q=4), design=ipcausal.Design(**kwargs))
        else:
            ipcausal.test(farm_like(n_q=4), **kwargs)


def test_bad_sample_scores() -> None:
    rows = [{"pair_id": k, "background_i": "a", "background_j": "b", "x_i": "", "x_j": "", "score_i": 1,
             "score_j": 2, "scores_i": [1, 2], "scores_j": "oops"} for k in range(3)]
    with pytest.raises(ValueError, match="`scores_i`/`scores_j` must hold lists"):
        ipcausal.test(PairSet.from_records(rows))


def test_score_pairs_scores_every_sample() -> None:
    from ipcausal.scoring import score_pairs

    opts = ["Paris", "Rome"]
    rows = [{"pair_id": k, "background_i": "true_belief", "background_j": "false_belief", "x_i": "", "x_j": "",
             "options": opts, "correct_option": 1, "y_i": "Paris", "y_j": "Rome",
             "samples_i": ["Paris", "Paris", "Rome"], "samples_j": ["Rome", "Paris", "no idea"]} for k in range(4)]
    res = score_pairs(PairSet.from_records(rows), "mcq")
    assert res.pairs["scores_i"].tolist() == [[1.0, 1.0, 0.0]] * 4
    assert res.pairs["scores_j"].tolist() == [[0.0, 1.0]] * 4  # the unparseable sample is left out
    zero = score_pairs(PairSet.from_records(rows), "mcq", unparseable="zero")
    assert zero.pairs["scores_j"].tolist() == [[0.0, 1.0, 0.0]] * 4
    (g,) = ipcausal.test(res.pairs, method="exact").groups
    assert g.effect == pytest.approx(0.5 - 2 / 3)
    sim = score_pairs(PairSet.from_records([{**r, "samples_j": ["Rome", "Paris"]} for r in rows]), "choice")
    # 3 x 2 sample pairs (P,R) (P,P) (P,R) (P,P) (R,R) (R,P): the same option in 3 of 6
    assert sim.pairs["similarity"].tolist() == pytest.approx([3 / 6] * 4)
    assert sim.pairs["similarity_first"].tolist() == [0.0] * 4


def test_cli_cluster_and_order(tmp_path, capsys) -> None:
    from ipcausal.cli import main

    path = farm_like(effect=0.4, seed=2).write(tmp_path / "farm.jsonl")
    assert main(["test", str(path), "--cluster", "question_id", "--method", "exact", "--json"]) == 0
    import json

    g = json.loads(capsys.readouterr().out)["groups"][0]
    assert g["n_clusters"] == 40 and g["unit"] == "clusters"
    assert main(["test", str(path), "--order", "false_belief,true_belief", "--cluster", "question_id",
                 "--json"]) == 0
    g2 = json.loads(capsys.readouterr().out)["groups"][0]
    assert g2["background_a"] == "false_belief" and g2["effect"] == pytest.approx(-g["effect"])
    assert main(["test", str(path), "--order", "x"]) == 2
    assert "argument --order: must name at least two backgrounds" in capsys.readouterr().err


def three_backgrounds(n: int = 60, shift: float = 0.0, seed: int = 0, esl_shift: float = 0.0) -> PairSet:
    """One response per (prompt, background), reused by the two groups that contain it; AAE and
    ESL lie ``shift`` and ``esl_shift`` SD below SAE."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n):
        base = rng.normal(0, 1)
        s = {"sae": base + rng.normal(0, 1), "aae": base + rng.normal(0, 1) - shift,
             "esl": base + rng.normal(0, 1) - esl_shift}
        for a, b in (("sae", "aae"), ("sae", "esl"), ("aae", "esl")):
            rows.append({"pair_id": f"{p}{a}{b}", "background_i": a, "background_j": b, "x_i": "", "x_j": "",
                         "score_i": s[a], "score_j": s[b], "prompt_id": f"p{p}"})
    return PairSet.from_records(rows)


def test_westfall_young_in_the_report_and_against_the_engine() -> None:
    ps = three_backgrounds(shift=0.6, seed=3)
    rep = ipcausal.test(ps, correction="westfall-young", n_resamples=20_000, rng=5)
    model = "(model not given)"
    assert set(rep.omnibus) == {model} and rep.omnibus[model].k == 3
    order = ["aae", "esl", "sae"]
    y = np.array([[r[b] for b in order] for r in _prompt_rows(ps, order)])
    fam = [(order.index(g.background_a), order.index(g.background_b)) for g in rep.groups]
    ref = ipcausal.stats.westfall_young(y, pairs=fam, n_resamples=20_000, rng=5)
    for got, want in zip([g.pvalue_adjusted for g in rep.groups], ref.adjusted_pvalues):  # other draws: MC error
        assert abs(got - want) <= 4 * math.sqrt(max(want, 1e-4) * (1 - want) / 20_000) * math.sqrt(2)
    assert rep.omnibus[model].pvalue == min(g.pvalue_adjusted for g in rep.groups)
    bonf = ipcausal.adjust_pvalues([g.pvalue for g in rep.groups], "bonferroni")
    assert all(w <= b + 1e-12 for w, b in zip([g.pvalue_adjusted for g in rep.groups], bonf))
    assert "joint test, no background matters" in str(rep)
    assert ipcausal.Report.from_dict(rep.to_dict()).to_dict() == rep.to_dict()


def test_westfall_young_closed_recovers_what_the_step_down_loses(tmp_path, capsys) -> None:
    """With one background far from the others, the step-down's last step relabels all three
    backgrounds and loses SAE–ESL; the closed form tests {SAE, ESL} by its own relabelings.
    AAE lies 2 SD from the others, ESL 0.45 SD below SAE."""
    ps = three_backgrounds(n=50, shift=2.0, esl_shift=0.45)
    L = 20_000
    get = {c: {(g.background_a, g.background_b): g for g in ipcausal.test(ps, correction=c, n_resamples=L,
                                                                           rng=1).groups}
           for c in ("holm", "westfall-young", "westfall-young-closed")}
    key = ("sae", "esl")
    closed, step, holm = (get[c][key].pvalue_adjusted for c in ("westfall-young-closed", "westfall-young", "holm"))
    assert closed <= 0.05 < step and get["westfall-young-closed"][key].reject
    se = math.sqrt(holm * (1 - holm) / L)
    assert closed <= holm + 4 * math.sqrt(2) * se  # here as powerful as Holm of the same raw p (MC error)
    # the engine with procedure="closed" on the same prompt table, within MC error
    order = ["aae", "esl", "sae"]
    y = np.array([[r[b] for b in order] for r in _prompt_rows(ps, order)])
    ref = ipcausal.stats.westfall_young(y, pairs=[(1, 2)], n_resamples=L, rng=2, procedure="closed")
    assert abs(closed - ref.adjusted_pvalues[0]) <= 4 * math.sqrt(2) * se + 1e-3
    # and through the CLI
    from ipcausal.cli import main

    path = ps.write(tmp_path / "three.jsonl")
    assert main(["test", str(path), "--correction", "westfall-young-closed", "--resamples", "5000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["correction"] == "westfall-young-closed" and data["omnibus"]


def _prompt_rows(ps: PairSet, order: list[str]) -> list[dict]:
    table: dict[str, dict] = {}
    for r in ps.records():
        table.setdefault(r["prompt_id"], {})[r["background_i"]] = r["score_i"]
        table[r["prompt_id"]][r["background_j"]] = r["score_j"]
    return list(table.values())


def test_westfall_young_names_the_prompts_that_lack_a_background() -> None:
    ps = three_backgrounds(n=10)
    df = ps.to_frame()
    df = df[~((df.prompt_id == "p3") & (df.background_j == "esl"))]
    with pytest.raises(ValueError, match="prompts lack one, e.g. p3"):
        ipcausal.test(PairSet.from_frame(df), correction="westfall-young")
    with pytest.raises(ValueError, match="needs a `prompt_id` column"):
        ipcausal.test(ps.drop_columns("prompt_id"), correction="westfall-young")
    with pytest.raises(ValueError, match="`correction`='westfall-young-closed' needs a `prompt_id` column"):
        ipcausal.test(ps.drop_columns("prompt_id"), correction="westfall-young-closed")
    with pytest.raises(ValueError, match="`correction`='westfall-young-closed' needs an interval outcome"):
        ipcausal.test(ps, correction="westfall-young-closed", method="paper-compat")
    with pytest.raises(ValueError, match="`correction`='westfall-young-closed' randomises whole prompts"):
        ipcausal.test(ps, correction="westfall-young-closed", cluster="pair_id")


def test_margin_gives_reject_equivalent_inconclusive() -> None:
    rng = np.random.default_rng(0)

    def pairs(mean: float, n: int) -> PairSet:
        d = rng.normal(mean, 0.5, n)
        return PairSet.from_records({"pair_id": k, "background_i": "a", "background_j": "b", "x_i": "", "x_j": "",
                                     "score_i": 0.0, "score_j": float(d[k])} for k in range(n))

    big_null = ipcausal.test(pairs(0.0, 400), margin=0.2, rng=1).groups[0]
    assert big_null.equivalence.verdict == "equivalent" and -0.2 < big_null.equivalence.ci_low
    small = ipcausal.test(pairs(0.0, 6), margin=0.2, rng=1).groups[0]
    assert small.equivalence.verdict == "inconclusive" and not small.reject
    effect = ipcausal.test(pairs(1.0, 50), margin=0.2, rng=1).groups[0]
    assert effect.equivalence.verdict == "reject" and effect.reject
    # TOST by the engine on the same data agrees
    ps = pairs(0.05, 300)
    g = ipcausal.test(ps, margin=0.2, method="exact" if False else "monte-carlo", rng=2).groups[0]
    eq = ipcausal.stats.equivalence_test(ps.deltas, margin=0.2, method="monte-carlo", rng=np.random.default_rng(2),
                                         ci_method="shift")  # no bound known: the shift model's TOST
    assert (g.equivalence.verdict == "equivalent") == eq.equivalent and g.equivalence.ci_method.startswith("shift")
    assert g.ci_method.startswith("shift: ")
    # a declared bound: the betting TOST and interval on the same data (level α for every bounded Δ)
    clipped = PairSet.from_frame(ps.to_frame().assign(score_j=np.clip(ps.deltas, -2, 2)))
    gb = ipcausal.test(clipped, margin=0.2, design=ipcausal.Design(bound=2), rng=2).groups[0]
    eb = ipcausal.stats.equivalence_test(clipped.deltas, margin=0.2, bound=2)
    assert gb.equivalence.ci_method == gb.ci_method == "betting-fixed-n"
    assert (gb.equivalence.verdict == "equivalent") == eb.equivalent and gb.equivalence.pvalue == eb.pvalue
    assert gb.pvalue == g.pvalue or gb.detail.method == "monte-carlo"  # the p is the sign-flip test's either way
    with pytest.raises(ValueError, match="`margin` must be a positive finite"):
        ipcausal.test(ps, margin=0)


def test_distribution_test_is_the_engine_on_the_similarity_matrices() -> None:
    rng = np.random.default_rng(8)
    words = ["yes", "no", "maybe"]
    rows = []
    for k in range(20):
        p_i = [0.6, 0.3, 0.1]
        p_j = [0.3, 0.6, 0.1] if k % 2 else p_i
        rows.append({"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q",
                     "samples_i": list(rng.choice(words, 3, p=p_i)), "samples_j": list(rng.choice(words, 3, p=p_j))})
    ps = PairSet.from_records(rows)
    calls: list[tuple[str, str]] = []

    def same(a: str, b: str) -> float:
        calls.append((a, b))
        return float(a == b)

    rep = ipcausal.distribution_test(ps, similarity=same, rng=3, n_resamples=5000)
    (g,) = rep.groups
    mats = ipcausal.stats.similarity_matrices([r["samples_i"] for r in rows], [r["samples_j"] for r in rows],
                                        lambda a, b: float(a == b))
    ref = ipcausal.stats.mmd_permutation_test(mats, rng=np.random.default_rng(3), n_resamples=5000)
    assert g.statistic == ref.statistic and g.pvalue == ref.pvalue and rep.outcome == "distribution"
    assert len(calls) == len({frozenset(c) for c in calls})  # each unordered response pair scored once
    assert ipcausal.Report.from_dict(rep.to_dict()).to_dict() == rep.to_dict()
    assert "MMD est." in str(rep)


def test_distribution_test_validation() -> None:
    rows = [{"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q", "y_i": "a",
             "y_j": "b"} for k in range(3)]
    with pytest.raises(ValueError, match="no `samples_i` column"):
        ipcausal.distribution_test(PairSet.from_records(rows), similarity=lambda a, b: 1.0)
    rows = [{**r, "samples_i": ["a", "b"], "samples_j": ["a", "b"]} for r in rows]
    with pytest.raises(ValueError, match="`similarity` must be one of"):
        ipcausal.distribution_test(PairSet.from_records(rows), similarity="cosine")
    with pytest.raises(ValueError, match="needs `backend`"):
        ipcausal.distribution_test(PairSet.from_records(rows), similarity="judge")


def test_case_culture_with_samples_runs_the_distribution_test(tmp_path) -> None:
    from ipcausal.study.cases import run_case
    from ipcausal.testing import SimulatedModel

    class Words:  # a small similarity kernel instead of the embedding model: 1 if the same words
        name = "same words"

        def __call__(self, a, b):
            return np.array([float(set(x.lower().split()) == set(y.lower().split())) for x, y in zip(a, b)])

    sim = SimulatedModel(backgrounds=("us", "uk"), seed=2)
    from ipcausal.scoring import get_scorer

    from ipcausal.study.cases import prepare_case

    prepared = prepare_case("culture", limit=6, scorer=get_scorer("embedding", embedder=Words()))
    res = run_case(prepared, sim, samples=3, progress=False, out=tmp_path)
    assert res.report.outcome == "distribution" and res.settings["generation"]["n"] == 3
    answered = ipcausal.PairSet.read(tmp_path / "responses.jsonl")
    assert all(len(s) == 3 for s in answered["samples_i"])
    with pytest.raises(ValueError, match="`samples` > 1 .* needs a free-text similarity .* not 'mcq'"):
        run_case("echo", sim, samples=3, progress=False)


def test_cli_margin(tmp_path, capsys) -> None:
    from ipcausal.cli import main

    rng = np.random.default_rng(1)
    rows = [{"pair_id": k, "background_i": "a", "background_j": "b", "x_i": "", "x_j": "", "score_i": 0.0,
             "score_j": float(rng.normal(0, 0.3))} for k in range(300)]
    path = PairSet.from_records(rows).write(tmp_path / "p.jsonl")
    assert main(["test", str(path), "--margin", "0.2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "equivalent within ±0.2" in out and " yes" in out and "no IP shown (every |mean Δ| < 0.2 by TOST at α): YES" in out
    assert main(["test", str(path), "--margin", "0"]) == 2


def test_case_passes_the_cluster_only_when_a_group_has_several_pairs_of_one() -> None:
    from ipcausal.study.groups import natural_cluster

    assert natural_cluster(farm_like(n_q=5)) == "question_id"  # two pairs per question in the group
    assert natural_cluster(three_backgrounds(n=5)) is None  # a prompt appears once per background pair


def test_the_scorers_bound_travels_with_the_scored_pairs_to_the_interval_of_the_mean() -> None:
    """Issue 28: `score_pairs` writes the scorer's bound (mcq: |Δ| ≤ 1); `ipcausal.test` then shows the
    betting interval of the mean and takes the betting TOST, and says so in the text report."""
    import warnings

    from ipcausal.scoring import score_pairs

    g = np.random.default_rng(0)
    rows = [{"pair_id": i, "background_i": "true_belief", "background_j": "false_belief", "x_i": "q", "x_j": "q",
             "options": ["yes", "no"], "correct_option": 1, "y_i": "1" if g.random() < 0.8 else "2",
             "y_j": "1" if g.random() < 0.6 else "2"} for i in range(60)]
    scored = score_pairs(PairSet.from_records(rows), "mcq").pairs
    assert scored["bound"].tolist() == [1.0] * len(scored)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ipcausal.test(scored, margin=0.1, rng=0)
        plain = ipcausal.test(PairSet.from_frame(scored.to_frame().drop(columns=["bound"])), margin=0.1, rng=0)
    g0, p0 = rep.groups[0], plain.groups[0]
    ref = ipcausal.stats.bounded_mean_test(_oriented(scored), bound=1)
    assert g0.ci_method == g0.equivalence.ci_method == "betting-fixed-n"
    assert (g0.ci_low, g0.ci_high) == (ref.ci_low, ref.ci_high) and g0.pvalue == p0.pvalue
    assert p0.ci_method.startswith("shift: ") and "95% CI of the mean" in str(rep) and "shift interval" in str(plain)


def _oriented(ps: PairSet) -> np.ndarray:
    """Δ = score(false_belief) − score(true_belief), in the pairs' order (all stored true → false here)."""
    f = ps.to_frame()
    return (f["score_j"] - f["score_i"]).to_numpy(np.float64)
