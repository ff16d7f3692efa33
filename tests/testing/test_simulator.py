"""The SCM simulator: backend protocol, documented B detection, known truth, calibration."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ipcausal
from ipcausal.study.test import MonteCarloResolutionWarning
from ipcausal.backends import Backend, GenerationConfig, Request, chat, messages_of
from ipcausal.stats.permutation import permutation_test
from ipcausal.stats.sign import sign_tests
from ipcausal.testing import SimulatedModel

ALPHA = 0.05


def _req(text: str, **cfg) -> Request:
    return Request(messages_of(text), GenerationConfig(**cfg))


# -- the backend protocol ------------------------------------------------------------------
def test_is_a_backend_and_answers_deterministically():
    sim = SimulatedModel(effect=0.5, seed=1)
    assert isinstance(sim, Backend) and sim.kind == "simulated"
    (r1,), (r2,) = sim.generate([_req("my favourite colour")]), sim.generate([_req("my favourite colour")])
    assert r1 == r2 and r1.model == sim.model and r1.text.startswith("Answer: ")
    assert "background inferred: british" in r1.text
    assert chat(sim, "my favourite colour") == r1.text
    assert SimulatedModel(effect=0.5, seed=2).generate([_req("my favourite colour")])[0].text != r1.text


def test_samples_differ_only_when_the_model_samples():
    sim = SimulatedModel()
    greedy = sim.generate([_req("the gray truck", n=3, temperature=0.0)])[0]
    assert len(greedy.choices) == 3 and len({c.text for c in greedy.choices}) == 1
    hot = sim.generate([_req("the gray truck", n=3, temperature=0.8)])[0]
    assert len({c.text for c in hot.choices}) == 3
    # a sample is fixed by the request seed and its index
    again = sim.generate([_req("the gray truck", n=3, temperature=0.8)])[0]
    assert [c.text for c in again.choices] == [c.text for c in hot.choices]
    shifted = sim.generate([_req("the gray truck", n=2, temperature=0.8, seed=1)])[0]
    assert shifted.choices[0].text == hot.choices[1].text


def test_model_name_encodes_every_parameter():
    names = {
        SimulatedModel().model,
        SimulatedModel(effect=0.1).model,
        SimulatedModel(noise=2.0).model,
        SimulatedModel(seed=1).model,
        SimulatedModel(levels=5).model,
        SimulatedModel(outcome="similarity").model,
        SimulatedModel(m0=0.7).model,
    }
    assert len(names) == 7  # the cache keys on kind + model, so each is a different model


def test_generate_rejects_bad_requests():
    with pytest.raises(TypeError, match="`requests`"):
        SimulatedModel().generate("hello")
    with pytest.raises(TypeError, match="`requests`"):
        SimulatedModel().generate(["hello"])


# -- B detection and S, as documented --------------------------------------------------------
@pytest.mark.parametrize(
    "prompt, expected",
    [
        ("What is your favourite colour?", "british"),
        ("What is your FAVORITE color?", "american"),
        ("colour and color", None),  # a tie
        ("the weather today", None),  # no marker
        ("[british] the weather", "british"),  # the tag
        ("[American] my colour", None),  # tag and marker tie
        ("colours and theatres", "british"),  # not its own markers (whole words), but the culture-marker cue
        ("the lorry, the biscuit, the truck", "british"),
    ],
)
def test_detection_rule(prompt, expected):
    assert SimulatedModel().detect(prompt) == expected


def test_own_markers_match_whole_words_only():
    sim = SimulatedModel()
    assert sim.semantics("colours and theatres") == "colours and theatres"  # no marker replaced
    assert sim.semantics("colour and theatre") == sim.semantics("color and theater") != "colour and theatre"


def test_tags_and_custom_markers():
    sim = SimulatedModel(backgrounds=("SAE", "AAE", "ESL"), markers={"AAE": ["finna"], "SAE": ["going"]})
    assert sim.detect("[ESL] Write an essay") == "ESL"
    assert sim.detect("I am finna write") == "AAE"
    assert sim.semantics("I am finna write") == sim.semantics("I am going write")
    assert sim.semantics("[ESL] Write an essay!") == sim.semantics("[AAE] write an essay")


def test_semantics_ignore_markers_so_only_b_moves_the_answer():
    sim = SimulatedModel(effect=2.0, noise=0.0)
    us, uk = "my favorite color and the truck", "my favourite colour and the lorry"
    assert sim.semantics(us) == sim.semantics(uk)
    assert sim.answer(uk) - sim.answer(us) == pytest.approx(2.0)
    assert sim.answer("the weather") == pytest.approx(sim.answer("[american] the weather"))


def test_known_truth_with_three_backgrounds():
    sim = SimulatedModel(effect=0.5, noise=0.0, backgrounds=("SAE", "AAE", "ESL"))
    ps = sim.study(n=4, rng=0)
    df = ps.to_frame().assign(delta=ps.deltas)
    for (a, b), sub in df.groupby(["background_i", "background_j"]):
        assert np.allclose(sub.delta, sim.mean_delta(a, b))
    assert sim.mean_delta("SAE", "ESL") == 1.0
    mapped = SimulatedModel(effect={"ESL": -1.0}, noise=0.0, backgrounds=("SAE", "AAE", "ESL"))
    assert mapped.mean_delta("SAE", "ESL") == -1.0 and mapped.mean_delta("SAE", "AAE") == 0.0


def test_levels_give_ratings_and_read_scores_back():
    ps = SimulatedModel(effect=1.0, levels=5).study(n=50, rng=3)
    scores = np.concatenate([ps["score_i"], ps["score_j"]])
    assert set(np.unique(scores)) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    res = ipcausal.test(ps)
    assert res.groups[0].detail.method.startswith("exact") and res.ip_detected


def test_scorers():
    sim = SimulatedModel(m0=0.8)
    assert sim.read("Answer: -1.5e-3 (note)") == -0.0015
    assert sim.similarity("Answer: 1.0", "Answer: 1.0") == 1.0
    c = sim.noise * math.sqrt(2) * 0.6744897501960817
    assert sim.similarity("Answer: 0", f"Answer: {c!r}") == pytest.approx(0.8)
    with pytest.raises(ValueError, match="`text`"):
        sim.read("no number here")
    with pytest.raises(TypeError, match="`text`"):
        sim.read(3.0)


def test_study_goes_through_the_backend_and_ipcausal_run_agrees(tmp_path):
    sim = SimulatedModel(effect=0.3, seed=5)
    ps = sim.study(n=6, rng=9)
    bare = ps.drop_columns("y_i", "y_j", "score_i", "score_j", "model")
    ran = ipcausal.run(bare, sim, cache=tmp_path / "c.sqlite", progress=False)
    assert list(ran["y_i"]) == list(ps["y_i"]) and list(ran["y_j"]) == list(ps["y_j"])
    again = ipcausal.run(bare, sim, cache=tmp_path / "c.sqlite", progress=False)
    assert bool(again["cached_i"].all()) and list(again["y_j"]) == list(ps["y_j"])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(effect=float("nan")), "`effect`"),
        (dict(effect={"martian": 1.0}), "`effect`"),
        (dict(noise=-1.0), "`noise`"),
        (dict(outcome="ordinal"), "`outcome`"),
        (dict(backgrounds=("a",)), "`backgrounds`"),
        (dict(backgrounds=("a", "A")), "`backgrounds`"),
        (dict(seed=-1), "`seed`"),
        (dict(levels=1), "`levels`"),
        (dict(levels=5, outcome="similarity"), "`levels`"),
        (dict(m0=1.0), "`m0`"),
        (dict(markers={"martian": ["x"]}), "`markers`"),
        (dict(markers={"american": ["two words"]}), "`markers`"),
        (dict(markers={"american": ["color"], "british": ["color"]}), "`markers`"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SimulatedModel(**kwargs)


def test_bad_study_arguments():
    with pytest.raises(ValueError, match="`n`"):
        SimulatedModel().study(n=0)
    with pytest.raises(TypeError, match="`config`"):
        SimulatedModel().study(n=2, config={"temperature": 1})
    with pytest.raises(ValueError, match="`background`"):
        SimulatedModel().shift("martian")


# -- calibration: the tests hold their level when B plays no role, and see a real effect ------
R, N = 2000, 20  # replications, pairs per replication


def test_type_one_error_permutation_test():
    """effect = 0: the permutation test rejects at rate α (±3 SE over R seeded replications).

    One study of R·N independent questions is cut into R studies of N pairs (identical in law
    to R separate studies); the Monte Carlo test with L + 1 = 2000 is exact-level for
    continuous Δ.  Measured at writing: 0.053 (SE 0.0049).
    """
    ps = SimulatedModel(effect=0.0, seed=11).study(n=R * N, rng=123)
    d = ps.deltas.reshape(R, N)
    p = np.array([permutation_test(d[r], method="monte-carlo", n_resamples=1999, rng=r).pvalue for r in range(R)])
    rate, se = float(np.mean(p <= ALPHA)), math.sqrt(ALPHA * (1 - ALPHA) / R)
    assert abs(rate - ALPHA) <= 3 * se, (rate, se)


def test_type_one_error_sign_test():
    """effect = 0: the sign test rejects at its exact size (the binomial's attainable level ≤ α).

    Measured at writing: 0.0155 against the exact size 0.0207 (SE 0.0032).
    """
    sim = SimulatedModel(effect=0.0, seed=12, outcome="similarity")
    s = sim.study(n=R * N, rng=321)["similarity"].to_numpy().reshape(R, N)
    assert abs(np.mean(s < sim.m0) - 0.5) < 3 * math.sqrt(0.25 / s.size)  # the null median is m0
    p = sign_tests((s < sim.m0).sum(1), (s > sim.m0).sum(1))
    size = ipcausal.power(0.5, n=N, outcome="similarity").power
    rate, se = float(np.mean(p <= ALPHA)), math.sqrt(size * (1 - size) / R)
    assert size <= ALPHA and abs(rate - size) <= 3 * se, (rate, size, se)


def test_type_one_error_end_to_end_through_ipcausal_test():
    """The whole path (study → ipcausal.test) at effect 0, 300 seeded studies: rate within ±3 SE of α.

    Measured at writing: 0.047 (SE 0.013).
    """
    sim = SimulatedModel(effect=0.0, seed=13)
    reps = 300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MonteCarloResolutionWarning)
        rejected = [ipcausal.test(sim.study(n=16, rng=k), method="exact").ip_detected for k in range(reps)]
    rate, se = float(np.mean(rejected)), math.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert abs(rate - ALPHA) <= 3 * se, (rate, se)


def test_power_matches_the_planned_power():
    """effect = 0.5, noise 1 (sd of Δ = √2): the rejection rate matches ipcausal.power's simulation.

    The planned power (0.465 at n = 30 by the noncentral-t approximation; d_z = 0.5/√2) is
    within 3 SE + 0.02.  Measured at writing: 0.453.
    """
    sim = SimulatedModel(effect=0.5, seed=14)
    reps, n = 600, 30
    d = sim.study(n=reps * n, rng=7).deltas.reshape(reps, n)
    p = np.array([permutation_test(d[r], method="monte-carlo", n_resamples=1999, rng=r).pvalue for r in range(reps)])
    planned = ipcausal.power(sim.mean_delta("american", "british"), n=n, sd=sim.delta_sd).power
    rate, se = float(np.mean(p <= ALPHA)), math.sqrt(planned * (1 - planned) / reps)
    assert abs(rate - planned) <= 3 * se + 0.02, (rate, planned)


def test_similarity_power_matches_the_exact_binomial():
    """Measured at writing: q = 0.692 (empirical 0.691); rejection rate 0.480, exact power 0.475."""
    sim = SimulatedModel(effect=1.5, seed=15, outcome="similarity")  # q = P(s < m0) ≈ 0.69
    reps, n = 1000, 25
    q = sim.share_below("american", "british")
    s = sim.study(n=reps * n, rng=8)["similarity"].to_numpy()
    assert abs(np.mean(s < sim.m0) - q) < 3 * math.sqrt(q * (1 - q) / s.size)
    s = s.reshape(reps, n)
    p = sign_tests((s < sim.m0).sum(1), (s > sim.m0).sum(1))
    planned = ipcausal.power(q, n=n, outcome="similarity").power
    rate, se = float(np.mean(p <= ALPHA)), math.sqrt(planned * (1 - planned) / reps)
    assert abs(rate - planned) <= 3 * se, (rate, planned, se)


@pytest.mark.parametrize("outcome", ["interval", "similarity"])
def test_large_effect_is_detected(outcome):
    sim = SimulatedModel(effect=3.0, seed=16, outcome=outcome)
    for k in range(5):
        assert ipcausal.test(sim.study(n=30, rng=k)).ip_detected
