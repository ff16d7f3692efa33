"""evaluate_mitigation against the SCM simulator (known truth) and apply_mitigation on built pairs."""

from __future__ import annotations

import pytest

import ipcausal
from ipcausal.builders import demo_pairs
from ipcausal.interventions.neutralize import Neutralized
from ipcausal.study.mitigation import transforms as mod
from ipcausal.study.mitigation import Mitigation, apply_mitigation, evaluate_mitigation
from ipcausal.testing import SimulatedModel

COLS = ["pair_id", "background_i", "background_j", "x_i", "x_j"]


def _pairs(sim: SimulatedModel, n: int, rng: int = 0, extra: dict | None = None) -> ipcausal.PairSet:
    df = sim.study(n=n, rng=rng).to_frame()[COLS]
    for k, v in (extra or {}).items():
        df[k] = v
    return ipcausal.PairSet.from_frame(df)


def test_mitigation_validates():
    with pytest.raises(ValueError, match="`kind` must be one of"):
        Mitigation("hide")
    with pytest.raises(ValueError, match="`instruction` applies to kind 'instruct' only"):
        Mitigation("markers", instruction="Be fair.")
    with pytest.raises(ValueError, match="`instruction` must be a non-empty str"):
        Mitigation("instruct", instruction="  ")
    assert Mitigation("instruct", instruction="Be fair.").system == "Be fair."
    assert Mitigation("strip").system is None


def test_apply_markers_makes_the_sides_alike():
    sim = SimulatedModel(effect=1.0, seed=2)
    ps = _pairs(sim, 20)
    out, checks = apply_mitigation(ps, "markers")
    # these pairs record no swaps: the British side is swapped by the sense check, and a word it cannot
    # read ("the torch", "the holiday" with no context) is left, found by the detector, and the pair dropped
    left = checks.loc[~checks["trusted"]]
    assert left["not_undone"].tolist() == [
        "j: British marker 'torch' that the other side lacks; i: American marker 'flashlight' that the other side lacks",
        "j: British marker 'holiday' that the other side lacks; i: American marker 'vacation' that the other side lacks"]
    assert len(out) == len(ps) - 2 and not checks["changed_i"].any()  # the American side is the default style
    assert all(sim.detect(x) != "british" for x in out["x_j"])
    assert (out["mitigation"] == "markers").all()


def test_markers_reverts_the_recorded_swaps_and_leaves_no_cue():
    """The culture demo pairs record their swaps: reverted exactly, both sides are the American source."""
    from ipcausal.interventions.neutralize import residual_cues

    ps = demo_pairs("culture")
    out, checks = apply_mitigation(ps, "markers")
    assert checks["trusted"].all() and (checks["not_undone"] == "").all() and len(out) == len(ps)
    df, src = out.to_frame(), ps.to_frame()
    assert (df["x_j"] == src["x_i"]).all() and (df["x_i"] == src["x_i"]).all()
    assert all(residual_cues("markers", a, b) == () for a, b in zip(df["x_i"], df["x_j"]))
    # a record that no longer matches the text is refused, and the pair is not trusted
    bad = src.copy()
    bad.loc[0, "x_j"] = bad.loc[0, "x_j"].replace("colour", "hue")
    _, c2 = apply_mitigation(ipcausal.PairSet.from_frame(bad), "markers")
    assert not c2["trusted"].iloc[0] and "not found where it was recorded" in c2["not_undone"].iloc[0]


def test_apply_dialect_undoes_the_recorded_edits_of_the_education_pairs():
    ps = demo_pairs("education", limit=4)
    out, checks = apply_mitigation(ps, "dialect")
    assert checks["trusted"].all() and (checks["not_undone"] == "").all()
    df, src = out.to_frame(), ps.to_frame()
    for side in ("i", "j"):
        # the undone prompt is the SAE source in the same instruction: derived from the pair file itself
        expected = [x.replace(p, s) for x, p, s in zip(src[f"x_{side}"], src[f"prompt_{side}"], src["prompt_sae"])]
        assert df[f"x_{side}"].tolist() == expected
    assert (df["x_i"] == df["x_j"]).all()


def test_apply_dialect_reports_llm_rewrites_as_not_undone():
    ps = demo_pairs("education", limit=2).to_frame()
    ps.loc[0, "edits_j"] = None
    ps.loc[0, "generator_j"] = "style_transfer:aae"
    out, checks = apply_mitigation(ipcausal.PairSet.from_frame(ps), "dialect")
    assert checks.loc[0, "not_undone"].startswith("j: rewritten by style_transfer:aae: no edits recorded to undo; "
                                                  "j: AAE feature ")  # the detector finds the cue left in
    assert not checks.loc[0, "trusted"] and checks.loc[1, "trusted"]  # dropped from both arms
    assert ps.loc[0, "pair_id"] not in out["pair_id"].tolist() and len(out) == len(ps) - 1
    with pytest.raises(ValueError, match="`pairs` has no `edits_i`/`edits_j` columns"):
        apply_mitigation(_pairs(SimulatedModel(), 3), "dialect")


def test_apply_strip_on_the_echo_pairs():
    ps = demo_pairs("echo")
    out, checks = apply_mitigation(ps, "strip")
    assert checks["trusted"].all()
    df = out.to_frame()
    assert (df["x_i"] == df["x_j"]).all()
    assert not any("I believe" in x for x in df["x_i"])


def test_apply_bad_input():
    with pytest.raises(TypeError, match="`pairs` must be a PairSet"):
        apply_mitigation([], "markers")
    with pytest.raises(ValueError, match="`mitigation` must be one of"):
        apply_mitigation(_pairs(SimulatedModel(), 3), "hide")
    with pytest.raises(TypeError, match="`mitigation` must be a Mitigation"):
        apply_mitigation(_pairs(SimulatedModel(), 3), 3)


def test_markers_remove_a_marker_driven_effect():
    sim = SimulatedModel(effect=1.0, noise=0.5, seed=4)
    res = evaluate_mitigation(_pairs(sim, 40), sim, "markers", scorer=sim.score, margin=0.3, rng=1)
    g = res.groups[0]
    assert g.reject_without and g.effect_without > 0.5
    assert g.change_reject and g.change < 0
    assert g.equivalence == "equivalent" and g.removed and res.removed
    # 8 pairs keep a word the sense check cannot read without context ("the torch"): not trusted, not compared
    assert g.n == res.n_compared == 32 and res.n_failed_check == 8


def test_strip_removes_a_tag_driven_effect_exactly():
    sim = SimulatedModel(effect=2.0, noise=1.0, backgrounds=("sae", "aae"), seed=5)
    res = evaluate_mitigation(_pairs(sim, 30), sim, "strip", scorer=sim.score, margin=0.5, rng=2)
    g = res.groups[0]
    assert g.effect_with == 0.0  # the stripped prompts are the same text, so the same answer
    assert g.removed and g.change_reject


def test_instruct_does_not_change_the_simulator():
    # the simulator reads no instruction: the effect is the same with it (the known truth)
    sim = SimulatedModel(effect=1.5, noise=0.5, seed=6)
    res = evaluate_mitigation(_pairs(sim, 40), sim, "instruct", scorer=sim.score, margin=0.3, rng=3)
    g = res.groups[0]
    assert g.reject_with and g.reject_without
    assert g.equivalence == "reject" and not g.removed and not res.removed
    assert abs(g.change) < 0.5
    # the instruction was sent: every answer with it differs from the one without
    assert (res.pairs_with["y_i"].to_numpy() != res.pairs_without["y_i"].to_numpy()).all()
    assert "Not shown removed" in str(res)


def test_no_margin_no_removal_claim():
    sim = SimulatedModel(effect=0.0, seed=7)
    res = evaluate_mitigation(_pairs(sim, 20), sim, "markers", scorer=sim.score, rng=0)
    g = res.groups[0]
    assert g.margin is None and g.equivalence is None and not g.removed
    assert "Removal not assessed" in str(res)
    d = res.to_dict()
    assert d["mitigation"] == "markers" and d["groups"][0]["group"] == g.group
    assert d["failed_pairs"] == ["2937467307694268567-7", "2937467307694268567-17"]  # a cue left: dropped


def test_a_rewrite_that_changes_s_is_excluded(monkeypatch):
    sim = SimulatedModel(effect=1.0, seed=8)
    ps = _pairs(sim, 12)
    bad_id = str(ps["pair_id"].iloc[0])
    real = mod.rewrite_side

    def rewrite(kind, text, row, side, *args):
        if str(row["pair_id"]) == bad_id and side == "j":
            return Neutralized(text + " In 1999.", text)  # adds a number: S changed
        return real(kind, text, row, side, *args)

    monkeypatch.setattr(mod, "rewrite_side", rewrite)
    res = evaluate_mitigation(ps, sim, "markers", scorer=sim.score, rng=0)
    assert res.n_failed_check == 2 and res.n_compared == 10  # the changed S, and a pair with a cue left
    assert res.to_dict()["failed_pairs"] == [bad_id, "2937467307694268567-7"]
    assert res.checks.loc[~res.checks["trusted"], "problems_j"].iloc[0] == "number"


def test_clusters_are_flipped_whole():
    sim = SimulatedModel(effect=1.0, noise=0.5, seed=9)
    ps = _pairs(sim, 20, extra={"unit": [f"u{k // 2}" for k in range(20)]})
    res = evaluate_mitigation(ps, sim, "markers", scorer=sim.score, cluster="unit", rng=0)
    assert res.comparison.groups[0].n_clusters == 10


def test_evaluate_bad_input():
    sim = SimulatedModel(seed=1)
    ps = _pairs(sim, 4)
    with pytest.raises(TypeError, match="`pairs` must be a PairSet"):
        evaluate_mitigation(ps.to_frame(), sim, "markers", scorer=sim.score)
    with pytest.raises(TypeError, match="`scorer` must be a scorer name or a callable"):
        evaluate_mitigation(ps, sim, "markers", scorer=3)
    with pytest.raises(ValueError, match="`margin` must be a positive finite number"):
        evaluate_mitigation(ps, sim, "markers", scorer=sim.score, margin=0)
    with pytest.warns(DeprecationWarning, match="`run_options` as a mapping is deprecated"):
        with pytest.raises(ValueError, match=r"`run_options` has key\(s\) \['batch_size'\] that a RunOptions does not"):
            evaluate_mitigation(ps, sim, "markers", scorer=sim.score, run_options={"batch_size": 4})
    with pytest.raises(TypeError, match="`scoring` must be a mapping"):
        evaluate_mitigation(ps, sim, "markers", scorer=sim.score, scoring=["k"])
    with pytest.raises(TypeError, match="`run_options` must be a RunOptions"):
        evaluate_mitigation(ps, sim, "markers", scorer=sim.score, run_options="fast")
    with pytest.raises(ValueError, match="`cluster` names no column"):
        evaluate_mitigation(ps, sim, "markers", scorer=sim.score, cluster="unit")


def test_run_options_as_a_mapping_still_work_with_a_warning():
    """Before 0.2 `run_options` was a mapping of ipcausal.run keywords; until 0.3 it is read and warns."""
    from ipcausal.backends.base import GenerationConfig
    from ipcausal.study.options import RunOptions

    sim = SimulatedModel(effect=1.0, noise=0.5, seed=1)
    ps = _pairs(sim, 20)
    config = GenerationConfig(max_tokens=8)
    with pytest.warns(DeprecationWarning, match="`run_options` as a mapping is deprecated"):
        old = evaluate_mitigation(ps, sim, "markers", scorer=sim.score, margin=0.3, rng=0,
                                  run_options={"config": config, "progress": False})
    new = evaluate_mitigation(ps, sim, "markers", scorer=sim.score, margin=0.3, rng=0,
                              run_options=RunOptions(config=config))
    assert old.to_dict() == new.to_dict()
