"""The ``rewrite`` mitigation: an LLM restates each prompt in Standard American English, checked (issue 21 item 2)."""

from __future__ import annotations

import pytest

import ipcausal
from ipcausal.cli import main
from ipcausal.interventions import swap_markers
from ipcausal.interventions.rewrite import REWRITE_TEMPLATE, check_rewrite, rewrite_default
from ipcausal.study.mitigation import Mitigation, apply_mitigation, evaluate_mitigation
from ipcausal.study.options import RunOptions
from ipcausal.testing import SimulatedModel

from _helpers_backends import ScriptedBackend

_HEAD, _TAIL = REWRITE_TEMPLATE.split("{text}")


def _text_of(prompt: str) -> str:
    assert prompt.startswith(_HEAD)
    return prompt[len(_HEAD):]


def _to_american(prompt: str, _req=None) -> str:
    """A rewriter that does what it is asked: British markers back to American ones."""
    text = _text_of(prompt)
    sw = swap_markers(text, to="us", include_ambiguous=True)  # an LLM reads "pavement" in context
    return "Here is the text: " + (sw.text if sw is not None else text)


def _pairs(n: int = 24):
    sim = SimulatedModel(effect=1.0, noise=0.5, seed=1)
    frame = sim.study(n=n, rng=0).to_frame()[["pair_id", "background_i", "background_j", "x_i", "x_j"]]
    return sim, ipcausal.PairSet.from_frame(frame)


def test_an_accepted_rewrite_is_sent_and_the_sae_side_is_left_alone() -> None:
    sim, ps = _pairs(6)
    rewriter = ScriptedBackend(_to_american)
    out, checks = apply_mitigation(ps, Mitigation("rewrite", rewriter=rewriter))
    assert len(out) == 6 and checks["trusted"].all() and checks["not_undone"].eq("").all()
    for x_i, x_j in zip(out["x_i"], out["x_j"]):
        assert sim.detect(x_i) == sim.detect(x_j)  # the British cue is gone from both sides
    assert not checks["changed_i"].any() and checks["changed_j"].all()


def test_a_rewrite_that_loses_a_number_is_rejected_and_reported() -> None:
    ps = ipcausal.PairSet.from_records([{"pair_id": 1, "background_i": "us", "background_j": "uk",
                                          "x_i": "Is 20 dollars a fair price for a color print?",
                                          "x_j": "Is 20 dollars a fair price for a colour print?"}])
    bad = ScriptedBackend(lambda p, r: _text_of(p).replace("20", "twenty-five").replace("colour", "color"))
    out, checks = apply_mitigation(ps, Mitigation("rewrite", rewriter=bad))
    (row,) = checks.to_dict("records")
    assert row["trusted"] and not row["changed_i"] and not row["changed_j"]  # left as they were: nothing unchecked
    i, j = row["not_undone"].split("; j: ")
    assert i.startswith("i: LLM rewrite rejected (3 attempts): number not kept") and "number not kept" in j
    assert list(out["x_j"]) == list(ps["x_j"]) and list(out["x_i"]) == list(ps["x_i"])
    assert len(bad.requests) == 3 + 3  # both sides tried 3 times (greedy, then two sampled seeds)


def test_check_rewrite_reasons() -> None:
    assert check_rewrite("What is 2 + 2?", "") == "empty output"
    assert check_rewrite("Should Ana pay the bill?", "Should she pay it?", min_similarity=-1).startswith("name not kept")
    assert check_rewrite("Is it far?", "It is far.", min_similarity=-1).startswith("question type changed")
    assert check_rewrite("Is it far?", "Is it far away from the town centre where we live now?" * 3,
                         min_similarity=-1).startswith("length changed too much")


def test_the_mitigation_removes_a_marker_effect_and_a_rerun_asks_the_rewriter_nothing(tmp_path) -> None:
    sim, ps = _pairs(30)
    rewriter = ScriptedBackend(_to_american)
    res = evaluate_mitigation(ps, sim, Mitigation("rewrite", rewriter=rewriter), scorer=sim.score, margin=0.3,
                              run_options=RunOptions(cache=tmp_path / "cache.sqlite"), rng=0)
    (g,) = res.groups
    assert g.effect_without > 0.5 and abs(g.effect_with) < 0.05 and g.change_reject and g.removed
    asked = len(rewriter.requests)
    assert asked == 60  # one request per distinct prompt (the American ones come back unchanged)
    again = evaluate_mitigation(ps, sim, Mitigation("rewrite", rewriter=rewriter), scorer=sim.score, margin=0.3,
                                run_options=RunOptions(cache=tmp_path / "cache.sqlite"), rng=0)
    assert len(rewriter.requests) == asked and again.groups[0].effect_with == g.effect_with


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="`rewriter` .* is required by kind 'rewrite'"):
        Mitigation("rewrite")
    with pytest.raises(ValueError, match="`rewriter` .* applies to it only"):
        Mitigation("markers", rewriter=SimulatedModel())
    with pytest.raises(TypeError, match="`rewriter` must implement ipcausal.backends.Backend"):
        Mitigation("rewrite", rewriter=object())
    with pytest.raises(ValueError, match="`mitigation` 'rewrite' needs its rewriting model"):
        apply_mitigation(_pairs(2)[1], "rewrite")
    with pytest.raises(ValueError, match="`text` must be a non-empty str"):
        rewrite_default(" ", SimulatedModel())
    with pytest.raises(ValueError, match="`max_tokens` must be a positive integer"):
        rewrite_default("Hi?", SimulatedModel(), max_tokens=0)


def test_the_command_needs_its_rewriter(tmp_path, capsys) -> None:
    _, ps = _pairs(4)
    path = ps.write(tmp_path / "pairs.jsonl")
    assert main(["mitigate", str(path), "--mitigation", "rewrite", "--scorer", "mcq", "--backend", "local",
                 "-o", str(tmp_path / "out")]) == 2
    assert "--mitigation rewrite needs --rewriter-backend" in capsys.readouterr().err
