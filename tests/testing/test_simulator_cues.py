"""The simulator as a backend kind: it reads the built-in cases' own cues, is told by `known`, and warns.

The truth it applies is checked on the cases' real demo pairs (not on text written for the test):
every culture, echo and age prompt's background read from its cue equals the background the pairs
declare; a told prompt is answered exactly as the tagged prompt; `ipcausal.probe` recovers
`probe_accuracy`; a prompt it cannot read gives one warning that names it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ipcausal
from ipcausal.backends import GenerationConfig, Request, get_backend, messages_of
from ipcausal.study.prepare import prepare_case
from ipcausal.testing import SimulatedModel
from ipcausal.testing.simulator import BackgroundUnknownWarning


def _req(text: str, system: str | None = None) -> Request:
    return Request(messages_of(text, system=system), GenerationConfig())


def test_get_backend_makes_the_simulator_with_its_options():
    sim = get_backend("simulated", effect=1.5, noise=0.5, seed=4, backgrounds=("us", "uk"), probe_accuracy=0.8)
    assert isinstance(sim, SimulatedModel) and sim.kind == "simulated"
    assert sim.model == SimulatedModel(effect=1.5, noise=0.5, seed=4, backgrounds=("us", "uk"),
                                       probe_accuracy=0.8).model
    assert sim.answer_scorer.name == "essay" and sim.answer_scorer  # reads "Answer: <v>"
    with pytest.raises(TypeError, match="unexpected keyword argument 'model'"):
        get_backend("simulated", model="x")


@pytest.mark.parametrize("case", ["culture", "echo", "age"])
def test_the_cases_own_cues_tell_every_demo_prompts_declared_background(case):
    ps = prepare_case(case).pairs
    sim = get_backend("simulated", backgrounds=ipcausal.cases.get_case(case).backgrounds)
    df = ps.to_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error", BackgroundUnknownWarning)
        for s in ("i", "j"):
            assert [sim.detect(x) for x in df[f"x_{s}"]] == list(df[f"background_{s}"])


def test_dialect_cues_and_sae_only_where_declared():
    edu = SimulatedModel(backgrounds=("sae", "aae", "esl"))
    assert edu.detect("They always be late to class.") == "aae"
    assert edu.detect("Write an essay about parks.") == "sae"  # no feature of either: the unmarked variety
    assert SimulatedModel().detect("Write an essay about parks.") is None  # not a background it was given


def test_a_cue_outside_its_backgrounds_shifts_by_its_rank_in_its_family():
    ps = prepare_case("echo").pairs
    df = ps.to_frame()
    sim = SimulatedModel(effect=2.0, noise=0.0)  # default backgrounds: american, british
    x_true, x_false = df["x_i"].iloc[0], df["x_j"].iloc[0]
    assert (sim.detect(x_true), sim.detect(x_false)) == ("true_belief", "false_belief")
    assert sim.shift("false_belief") == 2.0 and sim.shift("true_belief") == 0.0
    named = SimulatedModel(effect=2.0, noise=0.0, backgrounds=("true_belief", "false_belief"))
    assert sim.answer(x_false) - sim.answer(x_true) == pytest.approx(named.answer(x_false) - named.answer(x_true))
    with pytest.raises(ValueError, match=r"`background` must be one of \('american', 'british'\) or None"):
        sim.shift("martian")


def test_a_told_prompt_is_answered_exactly_as_the_tagged_prompt():
    x = "I have savings. How should I invest them?"
    told = SimulatedModel(effect=1.0, seed=2, backgrounds=("young", "old"), known={x: "old"})
    plain = SimulatedModel(effect=1.0, seed=2, backgrounds=("young", "old"))
    for system in (None, "Answer everyone alike."):
        got, want = told.generate([_req(x, system)])[0], plain.generate([_req("[old] " + x, system)])[0]
        assert got == want and "background inferred: old" in got.text
    # known comes first: it overrides the prompt's own cue
    assert SimulatedModel(known={"I am in my sixties.": "young"}, backgrounds=("young", "old")).detect(
        "I am in my sixties.") == "young"


def test_known_from_pairs_leaves_out_a_prompt_of_two_backgrounds():
    ps = ipcausal.PairSet.from_records([
        {"pair_id": 1, "background_i": "young", "background_j": "old", "x_i": "a", "x_j": "b"},
        {"pair_id": 2, "background_i": "young", "background_j": "old", "x_i": "b", "x_j": "c"}])
    sim = SimulatedModel(backgrounds=("young", "old"), known=ps)
    assert [sim.detect(x) for x in "ac"] == ["young", "old"]
    assert sim.detect("b") is None
    with pytest.warns(BackgroundUnknownWarning, match=r"1 prompt\(s\): 'b'"):
        sim.generate([_req("b")])


@pytest.mark.parametrize(("known", "error", "match"), [
    ({"x": "martian"}, ValueError, r"`known` names the background 'martian', which is neither one of"),
    ({"x": 3}, TypeError, r"`known` must map prompt text to a background name"),
    (["x"], TypeError, r"`known` must map prompts to backgrounds \(or be a PairSet\), got list"),
])
def test_known_is_checked(known, error, match):
    with pytest.raises(error, match=match):
        SimulatedModel(known=known)


def test_latency_is_checked_and_waits():
    with pytest.raises(ValueError, match=r"`latency` must be >= 0"):
        SimulatedModel(latency=-1)
    assert SimulatedModel(latency=0.001).generate([_req("colour")])[0].text.startswith("Answer:")


def test_prompts_it_cannot_tell_are_named_once_with_a_count():
    sim = SimulatedModel(effect=1.0, backgrounds=("true_belief", "false_belief"))
    texts = [f"Question {k}: what is the answer?" for k in range(5)]
    with pytest.warns(BackgroundUnknownWarning) as rec:
        out = sim.generate([_req(t) for t in texts])
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert "cannot tell the background of 5 prompt(s): 'Question 0: what is the answer?'" in msg
    assert "and 2 more" in msg and "answered with no effect" in msg and "`known=`" in msg
    assert all("background inferred: none" in r.text for r in out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.generate([_req("Another one?"), _req(texts[0])])  # said once
    assert sim.unknown_prompts == (*texts, "Another one?")  # each once, in order
    belief = "I believe the following: The sky is green. Question: What colour is the sky?"
    unsure = SimulatedModel(backgrounds=("true_belief", "false_belief"))
    assert unsure.detect(belief) is None
    with pytest.warns(BackgroundUnknownWarning, match="The sky is green"):  # a belief it does not know
        unsure.answer(belief)


def test_probe_recovers_probe_accuracy_on_us_uk_pairs():
    """ipcausal.probe on the culture demo pairs (US vs UK): accuracy within its exact binomial interval."""
    ps = prepare_case("culture").pairs
    covered = []
    for seed in range(5):
        res = ipcausal.probe(ps, get_backend("simulated", probe_accuracy=0.8, seed=seed), alternative="two-sided",
                             rng=seed)
        assert res.n == 2 * len(ps) and res.unparseable == 0 and res.failed == 0
        covered.append(res.ci_low <= 0.8 <= res.ci_high)
    assert all(covered)
    chance = ipcausal.probe(ps, get_backend("simulated", probe_accuracy=0.5, seed=0), alternative="two-sided")
    assert chance.ci_low <= 0.5 <= chance.ci_high


def test_option_logprobs_read_the_cues_too():
    sim = SimulatedModel(effect=3.0, noise=0.0, backgrounds=("us", "uk"))
    us, uk = "What color is the sofa?", "What colour is the sofa?"
    logit = lambda p: float(np.log(p[0] / p[1]))  # noqa: E731
    # the cue is taken out of S: the pair differs in B only, so the first option's log-odds move by the effect
    assert logit(sim.option_probabilities(uk, 2)) - logit(sim.option_probabilities(us, 2)) == pytest.approx(3.0)
    req = Request(messages_of(uk), GenerationConfig())
    assert sim.option_logprobs(req, ["yes", "no"]) == tuple(np.log(sim.option_probabilities(uk, 2)))


def test_a_pair_read_from_its_cues_differs_in_b_only():
    """Each built-in cue is taken out of S: without noise the echo, age and culture pairs' Δ is the effect."""
    for case in ("echo", "age", "culture"):
        ps = prepare_case(case).pairs.head(10)
        sim = SimulatedModel(effect=1.25, noise=0.0, backgrounds=ipcausal.cases.get_case(case).backgrounds)
        deltas = [sim.answer(b) - sim.answer(a) for a, b in zip(ps["x_i"], ps["x_j"])]
        assert deltas == pytest.approx([1.25] * 10), case
