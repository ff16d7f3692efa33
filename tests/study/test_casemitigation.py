"""run_case_mitigation: a registered case without and with a mitigation, against the SCM simulator (known truth).

The simulator reads only a ``[background]`` tag (``tag=True`` writes it into each prompt): ``strip``
removes the tag (truth: the effect is removed), ``markers``/``instruct`` keep it (truth: not removed).
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import ipcausal
from ipcausal.cases import get_case
from ipcausal.interventions.neutralize import Neutralized
from ipcausal.scoring import get_scorer
from ipcausal.stats import permutation_test
from ipcausal.study.mitigation import transforms as mod
from ipcausal.study.mitigation import run_case_mitigation, tag_backgrounds
from ipcausal.study.mitigation import Mitigation
from ipcausal.testing import SimulatedModel

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
ECHO = ("true_belief", "false_belief")
READ = get_scorer("essay", rater=SimulatedModel.read)  # the simulator's "Answer: <v>"


class _Simil:
    """The simulator's own similarity as an embedder (batch of answer pairs → similarities)."""

    name = "simulator similarity"

    def __init__(self, sim):
        self.sim = sim

    def __call__(self, a, b):
        return np.array([self.sim.similarity(x, y) for x, y in zip(a, b)])


def _with_margin(name: str, margin: float = 0.5):
    case = get_case(name)
    return replace(case, tests=replace(case.tests, margin=margin))


def _deltas(ps) -> pd.Series:
    df = ps.to_frame().set_index(ps["pair_id"].astype(str).to_numpy())
    return df["score_j"] - df["score_i"]


def test_the_change_test_is_the_paired_sign_flip_test_of_the_differences():
    # instruct keeps the tag, so the effect stays but every answer's noise changes: D is not trivial
    sim = SimulatedModel(effect=1.0, seed=3, backgrounds=ECHO)
    res = run_case_mitigation("echo", sim, "instruct", scorer=READ, limit=14, tag=True)
    r = res.result
    d = _deltas(r.pairs_with) - _deltas(r.pairs_without).reindex(_deltas(r.pairs_with).index)
    assert len(d) == 14 and (d != 0).all()
    oracle = permutation_test(d.to_numpy(), method="exact")
    g = r.groups[0]
    assert g.change_pvalue == pytest.approx(oracle.pvalue)  # one background pair: no correction
    assert g.change == pytest.approx(float(d.mean()))
    assert g.effect_without == pytest.approx(float(_deltas(r.pairs_without).mean()))


def test_strip_removes_a_tagged_effect_and_removal_is_shown_with_a_margin():
    sim = SimulatedModel(effect=2.0, seed=1, backgrounds=ECHO)
    res = run_case_mitigation(_with_margin("echo"), sim, "strip", scorer=READ, limit=20, tag=True)
    g = res.result.groups[0]
    assert g.effect_without > 1 and g.reject_without
    assert g.effect_with == 0.0  # both prompts became one text: Δ = 0 exactly
    assert g.change_reject and g.change < 0
    assert g.removed and res.status(g) == "yes" and res.result.removed


def test_without_a_margin_removal_is_not_assessed():
    sim = SimulatedModel(effect=2.0, seed=1, backgrounds=ECHO)
    res = run_case_mitigation("echo", sim, "strip", scorer=READ, limit=12, tag=True)
    g = res.result.groups[0]
    assert res.margin is None and not g.removed and res.status(g) == "not assessed"
    assert "removal not assessed" in str(res) and "not assessed" in res.to_dict()["groups"][0]["removed"]


@pytest.mark.parametrize("kind", ["markers", "instruct"])
def test_a_mitigation_that_leaves_the_cue_is_not_removed(kind):
    # the age case's cue is a stated age (and here a tag): no spelling for markers to change
    sim = SimulatedModel(effect=2.0, seed=2, backgrounds=("young", "old"))
    res = run_case_mitigation(_with_margin("age"), sim, kind, scorer=READ, tag=True)
    g = res.result.groups[0]
    assert g.reject_without and g.reject_with and g.effect_with > 0.5
    assert not g.removed and res.status(g) == "no"
    if kind == "markers":  # only "a rental flat" (age-14, both sides alike) is rewritten: read as the noun
        assert abs(g.change) < 0.1 and not g.change_reject
        assert res.result.checks.loc[res.result.checks["changed_i"], "pair_id"].tolist() == ["age-14"]


def test_rewrite_check_failures_are_counted_reported_and_dropped_from_both_runs(monkeypatch, tmp_path):
    sim = SimulatedModel(effect=2.0, seed=1, backgrounds=ECHO)
    ps = tag_backgrounds(get_case("echo").source(given=False).load(0, 12))
    bad = {str(ps["pair_id"].iloc[k]) for k in (0, 3)}
    real = mod.rewrite_side

    def rewrite(kind, text, row, side, *args):
        if str(row["pair_id"]) in bad and side == "j":
            return Neutralized(text + " In 1999.", text)  # adds a number: S changed
        return real(kind, text, row, side, *args)

    monkeypatch.setattr(mod, "rewrite_side", rewrite)
    res = run_case_mitigation("echo", sim, "strip", pairs=ps, scorer=READ, out=tmp_path)
    r = res.result
    assert r.n_failed_check == 2 and r.n_compared == 10 and r.groups[0].n == 10
    for run in (r.pairs_without, r.pairs_with):
        assert not bad & set(run["pair_id"].astype(str))
    checks = pd.read_csv(tmp_path / "checks.csv")
    failed = checks[~checks["trusted"]]
    assert set(failed["pair_id"].astype(str)) == bad and (failed["reason"] == "j: number").all()
    doc = json.loads((tmp_path / "mitigation.json").read_text())
    assert doc["n_failed_check"] == 2 and {p["pair_id"] for p in doc["failed_pairs"]} == bad
    assert "2 pair(s) whose rewrite may have changed S" in (tmp_path / "mitigation.txt").read_text()


def test_a_rerun_sends_nothing_new(tmp_path):
    sim = SimulatedModel(effect=1.0, seed=4, backgrounds=ECHO)
    first = run_case_mitigation("echo", sim, "instruct", scorer=READ, limit=10, tag=True, out=tmp_path)
    again = run_case_mitigation("echo", sim, "instruct", scorer=READ, limit=10, tag=True, out=tmp_path)
    assert first.sent == 40 and again.sent == 0  # 10 pairs × 2 sides × 2 arms
    assert again.result.groups == first.result.groups
    assert (tmp_path / "cache.sqlite").is_file()


def test_the_case_scorer_is_used_when_none_is_given():
    # the age case's own scorer reads "Answer: N", so the simulator's number is scored by it
    sim = SimulatedModel(effect=2.0, seed=2, backgrounds=("young", "old"), levels=5)  # answers on its 1-5 scale
    from ipcausal.cases.age import read_risk

    res = run_case_mitigation("age", sim, "strip", limit=12, tag=True)
    df = res.result.pairs_without.to_frame()
    assert res.outcome == "interval" and df["score_i"].tolist() == [read_risk(y) for y in df["y_i"]]


def test_similarity_outcome_change_and_removal_above_m0():
    # identical questions on both sides: only the tag differs, so strip makes both answers one
    sim = SimulatedModel(effect=3.0, seed=5, backgrounds=("us", "uk"))
    qs = [f"Which film should I watch tonight, number {k}?" for k in range(14)]
    ps = ipcausal.PairSet.from_records({"pair_id": k, "background_i": ("us", "uk")[k % 3 == 0],
                                        "background_j": ("uk", "us")[k % 3 == 0], "x_i": q, "x_j": q}
                                       for k, q in enumerate(qs))  # a third stored the other way round
    simil = get_scorer("embedding", embedder=_Simil(sim))
    res = run_case_mitigation("culture", sim, "strip", pairs=ps, scorer=simil, tag=True)
    g, r = res.result.groups[0], res.result
    assert res.outcome == "similarity" and res.margin is None and res.m0 == 0.8
    assert g.reject_without and g.effect_without < 0.8  # IP: the answers differ by background
    assert g.effect_with == 1.0 and g.removed and res.status(g) == "yes"  # median shown above m0
    s0 = r.pairs_without.to_frame().set_index("pair_id")["similarity"]
    s1 = r.pairs_with.to_frame().set_index("pair_id")["similarity"]
    d = (s1 - s0.reindex(s1.index)).to_numpy()
    assert g.change == pytest.approx(d.mean()) and g.change_pvalue == pytest.approx(
        permutation_test(d, method="exact").pvalue)
    assert "above m0 = 0.8" in res.removal_rule()


def test_similarity_not_removed_when_the_cue_stays():
    sim = SimulatedModel(effect=3.0, seed=5, backgrounds=("us", "uk"))
    ps = ipcausal.PairSet.from_records({"pair_id": k, "background_i": "us", "background_j": "uk",
                                        "x_i": f"Which colour is best, {k}?", "x_j": f"Which colour is best, {k}?"}
                                       for k in range(12))
    simil = get_scorer("embedding", embedder=_Simil(sim))
    res = run_case_mitigation("culture", sim, "markers", pairs=ps, scorer=simil, tag=True)
    g = res.result.groups[0]
    assert not g.removed and res.status(g) == "no"


def test_bad_input_names_the_parameter(tmp_path):
    sim = SimulatedModel(effect=1.0, backgrounds=ECHO)
    with pytest.raises(ValueError, match="`mitigation` must be one of"):
        run_case_mitigation("echo", sim, "hide", scorer=READ, limit=4)
    with pytest.raises(TypeError, match="`mitigation` must be a Mitigation"):
        run_case_mitigation("echo", sim, 3, scorer=READ, limit=4)
    with pytest.raises(TypeError, match="`backend` must implement"):
        run_case_mitigation("echo", object(), "strip", scorer=READ, limit=4)
    with pytest.raises(TypeError, match="`tag` must be True or False"):
        run_case_mitigation("echo", sim, "strip", scorer=READ, limit=4, tag="yes")
    with pytest.raises(ValueError, match="`limit` must be a positive integer"):
        run_case_mitigation("echo", sim, "strip", scorer=READ, limit=0)
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="`out` must be a folder"):
        run_case_mitigation("echo", sim, "strip", scorer=READ, limit=4, out=tmp_path / "f")
    with pytest.raises(TypeError, match="`pairs` must be a PairSet"):
        tag_backgrounds([1, 2])
    with pytest.raises(ValueError, match="`mitigation` 'dialect'|`pairs` has no `edits_i`"):
        run_case_mitigation("echo", sim, Mitigation("dialect"), scorer=READ, limit=4)
