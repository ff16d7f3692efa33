"""run_case_mitigation: a registered case without and with a mitigation, against the SCM simulator (known truth).

The simulator reads the cases' own cues (a stated belief or age, culture markers): ``strip`` removes the
stated belief (truth: the effect is removed), ``markers`` reverts British markers (truth: removed) but
leaves a stated age, ``instruct`` changes no prompt (truth: not removed).
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
from ipcausal.testing.simulator import BackgroundUnknownWarning
from ipcausal.study.mitigation import Mitigation
from ipcausal.study.prepare import prepare_case
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
    # instruct keeps the stated belief, so the effect stays but every answer's noise changes: D is not trivial
    sim = SimulatedModel(effect=1.0, seed=3, backgrounds=ECHO)
    res = run_case_mitigation(prepare_case("echo", scorer=READ, limit=14), sim, "instruct")
    r = res.result
    d = _deltas(r.pairs_with) - _deltas(r.pairs_without).reindex(_deltas(r.pairs_with).index)
    assert len(d) == 14 and (d != 0).all()
    oracle = permutation_test(d.to_numpy(), method="exact")
    g = r.groups[0]
    assert g.change_pvalue == pytest.approx(oracle.pvalue)  # one background pair: no correction
    assert g.change == pytest.approx(float(d.mean()))
    assert g.effect_without == pytest.approx(float(_deltas(r.pairs_without).mean()))


def test_strip_removes_a_stated_beliefs_effect_and_removal_is_shown_with_a_margin():
    sim = SimulatedModel(effect=2.0, seed=1, backgrounds=ECHO)
    res = run_case_mitigation(prepare_case(_with_margin("echo"), scorer=READ, limit=20), sim, "strip")
    g = res.result.groups[0]
    assert g.effect_without > 1 and g.reject_without
    assert g.effect_with == 0.0  # both prompts became one text: Δ = 0 exactly
    assert g.change_reject and g.change < 0
    assert g.removed and res.status(g) == "yes" and res.result.removed


def test_without_a_margin_removal_is_not_assessed():
    sim = SimulatedModel(effect=2.0, seed=1, backgrounds=ECHO)
    res = run_case_mitigation(prepare_case("echo", scorer=READ, limit=12), sim, "strip")
    g = res.result.groups[0]
    assert res.margin is None and not g.removed and res.status(g) == "not assessed"
    assert "removal not assessed" in str(res) and "not assessed" in res.to_dict()["groups"][0]["removed"]


@pytest.mark.parametrize("kind", ["markers", "instruct"])
def test_a_mitigation_that_leaves_the_cue_is_not_removed(kind):
    # the age case's cue is a stated age: no spelling for markers to change
    sim = SimulatedModel(effect=2.0, seed=2, backgrounds=("young", "old"))
    res = run_case_mitigation(prepare_case(_with_margin("age"), scorer=READ), sim, kind)
    g = res.result.groups[0]
    assert g.reject_without and g.reject_with and g.effect_with > 0.5
    assert not g.removed and res.status(g) == "no"
    if kind == "markers":  # only "a rental flat" (age-14, both sides alike) is rewritten: read as the noun
        assert abs(g.change) < 0.1 and not g.change_reject
        assert res.result.checks.loc[res.result.checks["changed_i"], "pair_id"].tolist() == ["age-14"]


def test_rewrite_check_failures_are_counted_reported_and_dropped_from_both_runs(monkeypatch, tmp_path):
    sim = SimulatedModel(effect=2.0, seed=1, backgrounds=ECHO)
    ps = get_case("echo").source(given=False).load(0, 12)
    bad = {str(ps["pair_id"].iloc[k]) for k in (0, 3)}
    real = mod.rewrite_side

    def rewrite(kind, text, row, side, *args):
        if str(row["pair_id"]) in bad and side == "j":
            return Neutralized(text + " In 1999.", text)  # adds a number: S changed
        return real(kind, text, row, side, *args)

    monkeypatch.setattr(mod, "rewrite_side", rewrite)
    res = run_case_mitigation(prepare_case("echo", ps, scorer=READ), sim, "strip", out=tmp_path)
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
    first = run_case_mitigation(prepare_case("echo", scorer=READ, limit=10), sim, "instruct", out=tmp_path)
    again = run_case_mitigation(prepare_case("echo", scorer=READ, limit=10), sim, "instruct", out=tmp_path)
    assert first.sent == 40 and again.sent == 0  # 10 pairs × 2 sides × 2 arms
    assert again.result.groups == first.result.groups
    assert (tmp_path / "cache.sqlite").is_file()


def test_the_case_scorer_is_used_when_none_is_given():
    # the age case's own scorer reads "Answer: N", so the simulator's number is scored by it
    sim = SimulatedModel(effect=2.0, seed=2, backgrounds=("young", "old"), levels=5)  # answers on its 1-5 scale
    from ipcausal.cases.age import read_risk

    res = run_case_mitigation(prepare_case("age", limit=12), sim, "strip")
    df = res.result.pairs_without.to_frame()
    assert res.outcome == "interval" and df["score_i"].tolist() == [read_risk(y) for y in df["y_i"]]


def _us_uk(n: int, *, flip: bool = False) -> ipcausal.PairSet:
    """US/UK pairs that differ in their spelling only (with ``flip`` a third stored the other way round)."""
    us = [f"Which color should I paint room {k}, and which flavor of tea goes with it?" for k in range(n)]
    uk = [q.replace("color", "colour").replace("flavor", "flavour") for q in us]
    rows = []
    for k in range(n):
        a, b = (("uk", uk[k]), ("us", us[k])) if flip and k % 3 == 0 else (("us", us[k]), ("uk", uk[k]))
        rows.append({"pair_id": k, "background_i": a[0], "x_i": a[1], "background_j": b[0], "x_j": b[1]})
    return ipcausal.PairSet.from_records(rows)


def test_similarity_outcome_change_and_removal_above_m0():
    # markers reads every British marker as American: both prompts of a pair become one text, so one answer
    sim = SimulatedModel(effect=3.0, seed=5, backgrounds=("us", "uk"))
    ps = _us_uk(14, flip=True)
    simil = get_scorer("embedding", embedder=_Simil(sim))
    res = run_case_mitigation(prepare_case("culture", ps, scorer=simil), sim, "markers")
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
    # strip removes stated beliefs and tags: the spelling, the simulator's cue here, stays
    sim = SimulatedModel(effect=3.0, seed=5, backgrounds=("us", "uk"))
    simil = get_scorer("embedding", embedder=_Simil(sim))
    res = run_case_mitigation(prepare_case("culture", _us_uk(12), scorer=simil), sim, "strip")
    g = res.result.groups[0]
    assert not g.removed and res.status(g) == "no"


def test_bad_input_names_the_parameter(tmp_path):
    sim = SimulatedModel(effect=1.0, backgrounds=ECHO)
    with pytest.raises(ValueError, match="`mitigation` must be one of"):
        run_case_mitigation(prepare_case("echo", scorer=READ, limit=4), sim, "hide")
    with pytest.raises(TypeError, match="`mitigation` must be a Mitigation"):
        run_case_mitigation(prepare_case("echo", scorer=READ, limit=4), sim, 3)
    with pytest.raises(TypeError, match="`backend` must implement"):
        run_case_mitigation(prepare_case("echo", scorer=READ, limit=4), object(), "strip")
    with pytest.raises(TypeError, match="`tag` must be True or False"):
        run_case_mitigation(prepare_case("echo", scorer=READ, limit=4), sim, "strip", tag="yes")
    with pytest.raises(ValueError, match="`limit` must be a positive integer"):
        run_case_mitigation(prepare_case("echo", scorer=READ, limit=0), sim, "strip")
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="`out` must be a folder"):
        run_case_mitigation(prepare_case("echo", scorer=READ, limit=4), sim, "strip", out=tmp_path / "f")
    with pytest.raises(TypeError, match="`pairs` must be a PairSet"), pytest.warns(DeprecationWarning):
        tag_backgrounds([1, 2])
    with pytest.raises(ValueError, match="`mitigation` 'dialect'|`pairs` has no `edits_i`"):
        run_case_mitigation(prepare_case("echo", scorer=READ, limit=4), sim, Mitigation("dialect"))


def test_the_tags_of_the_last_release_still_work_and_warn():
    """``tag=True``/``tag_backgrounds`` (deprecated until 0.3): tagged prompts, the tag's background, the same truth."""
    sim = SimulatedModel(effect=2.0, seed=1, backgrounds=ECHO)
    with pytest.warns(DeprecationWarning, match=r"run_case_mitigation\(tag=True\) is deprecated .* known=pairs"):
        res = run_case_mitigation(prepare_case("echo", scorer=READ, limit=12), sim, "strip", tag=True)
    assert res.result.pairs_without["x_i"].str.startswith("[true_belief] ").all()
    assert res.result.groups[0].effect_with == 0.0 and res.result.groups[0].effect_without > 1
    with pytest.warns(DeprecationWarning, match="tag_backgrounds is deprecated"):
        tagged = tag_backgrounds(prepare_case("age", limit=2).pairs)
    assert tagged["x_j"].str.startswith("[old] ").all()


def test_a_stripped_prompt_carries_no_cue_and_the_simulator_says_so():
    sim = SimulatedModel(effect=2.0, seed=1, backgrounds=ECHO)
    with pytest.warns(BackgroundUnknownWarning, match=r"cannot tell the background of 1 prompt\(s\): 'Question: "):
        res = run_case_mitigation(prepare_case("echo", scorer=READ, limit=12), sim, "strip")
    stripped = set(res.result.pairs_with["x_i"]) | set(res.result.pairs_with["x_j"])
    assert set(sim.unknown_prompts) <= stripped and len(sim.unknown_prompts) >= 10  # a question with 'color' reads US
    assert not set(sim.unknown_prompts) & (set(res.result.pairs_without["x_i"]) | set(res.result.pairs_without["x_j"]))


def test_strip_removes_a_stated_age_and_leaves_no_cue_in_a_trusted_pair():
    # the age case's cue is a stated age ("I am in my sixties."): strip takes it out of both sides, so the
    # simulator (which reads that cue) can no longer tell the sides apart and the effect goes (the truth)
    from ipcausal.interventions.neutralize import residual_cues

    sim = SimulatedModel(effect=2.0, seed=2, backgrounds=("young", "old"))
    with pytest.warns(BackgroundUnknownWarning):
        res = run_case_mitigation(prepare_case(_with_margin("age"), scorer=READ), sim, "strip")
    g = res.result.groups[0]
    assert g.reject_without and g.effect_without > 1 and g.effect_with == 0.0 and g.change_reject
    checks = res.result.checks
    assert checks["changed_i"].all() and checks["changed_j"].all() and checks["trusted"].all()
    w = res.result.pairs_with
    assert not w["x_i"].str.contains("in my ").any() and (w["x_i"] == w["x_j"]).all()
    assert all(residual_cues("strip", a, b) == () for a, b in zip(w["x_i"], w["x_j"]))
    # and a strip that leaves an age behind is caught: the residual check names it
    assert residual_cues("strip", "I'm 67 years old. Which fund?", "Which fund?") == (
        "i: a stated age ('I'm 67 years old.')",)
