"""ipcausal.placebo: the same prompt twice, tested like the real pairs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import ipcausal
from ipcausal.backends import BackendError, GenerationConfig
from ipcausal.study.options import RunOptions, TestOptions
from ipcausal.study.placebo import PlaceboResult, placebo
from ipcausal.testing import SimulatedModel

HOT = GenerationConfig(temperature=0.7)
RUN_HOT = RunOptions(config=HOT)


def test_greedy_copies_are_identical_so_the_floor_is_zero():
    sim = SimulatedModel(effect=1.0, seed=4)
    pairs = sim.study(n=30, rng=0)
    res = placebo(pairs, sim, score=sim.score, sides="both")
    assert isinstance(res, PlaceboResult) and res.outcome == "interval" and res.temperature == 0.0
    assert np.all(res.pairs.deltas == 0)
    assert {g.group for g in res.placebo.groups} == {
        "american (copy 1) vs american (copy 2)",
        "british (copy 1) vs british (copy 2)",
    }
    assert all(g.pvalue == 1.0 for g in res.placebo.groups)
    assert res.real is not None and res.real.ip_detected  # scored pairs are tested too
    assert res.real_beyond_floor is True and not res.false_positive
    text = str(res)
    assert "temperature 0" in text and "placebo  american (copy 1)" in text and "real     american vs british" in text
    assert "above the noise floor" in text


def test_labels_and_ids_are_documented():
    sim = SimulatedModel(seed=4)
    pairs = sim.study(n=3, rng=0)
    res = placebo(pairs, sim, score=sim.score, sides="j")
    df = res.pairs.to_frame()
    assert list(df.pair_id) == [f"{p}/placebo-j" for p in pairs["pair_id"]]
    assert list(df.source_pair_id) == list(pairs["pair_id"])
    assert set(df.background_i) == {"british (copy 1)"} and set(df.background_j) == {"british (copy 2)"}
    assert list(df.x_i) == list(df.x_j) == list(pairs["x_j"])


def test_sampling_noise_that_m0_cannot_tolerate_is_a_false_positive():
    # the simulator's null median similarity is 0.8; demanding m0 = 0.95 makes noise alone "IP"
    sim = SimulatedModel(effect=0.0, outcome="similarity", seed=5)
    pairs = sim.study(n=60, rng=1)
    res = placebo(pairs, sim, similarity=sim.similarity, options=RUN_HOT, tests=TestOptions(m0=0.95))
    assert res.false_positive and res.real is not None and res.real.ip_detected
    assert res.real_beyond_floor is False
    assert "placebo REJECTED" in str(res) and "REJECTED" in res.verdict()
    # at the simulator's own m0 neither is rejected
    calm = placebo(pairs, sim, similarity=sim.similarity, options=RUN_HOT, tests=TestOptions(m0=0.8))
    assert not calm.false_positive and not calm.real.ip_detected
    assert "neither" in calm.verdict()


def test_placebo_copies_at_temperature_behave_like_the_null():
    # two samples of one prompt: similarity below m0 half the time (the simulator's null)
    sim = SimulatedModel(outcome="similarity", seed=6)
    pairs = sim.study(n=1500, rng=2)
    res = placebo(pairs, sim, similarity=sim.similarity, options=RUN_HOT, real=None)
    s = res.pairs["similarity"].to_numpy()
    assert abs(np.mean(s < 0.8) - 0.5) < 3 * math.sqrt(0.25 / s.size)
    assert len(set(res.pairs["y_i"])) == len(s)  # fresh questions, distinct answers


def test_copy_one_comes_from_the_real_runs_cache(tmp_path):
    sim = SimulatedModel(effect=0.5, seed=7)
    bare = sim.study(n=8, rng=3).drop_columns("y_i", "y_j", "score_i", "score_j", "model")
    cache = tmp_path / "responses.sqlite"
    ran = ipcausal.run(bare, sim, cache=cache, config=HOT, progress=False)
    res = placebo(ran, sim, score=sim.score, options=RunOptions(config=HOT, cache=cache))
    assert list(res.pairs["y_i"]) == list(ran["y_i"])  # sample 0 = the real answer
    assert all(a != b for a, b in zip(res.pairs["y_i"], res.pairs["y_j"]))
    assert res.real is None  # `ran` carries no scores and none was given


def test_a_given_real_report_is_kept():
    sim = SimulatedModel(effect=0.8, seed=8)
    pairs = sim.study(n=20, rng=4)
    real = ipcausal.test(pairs, alpha=0.01)
    res = placebo(pairs, sim, score=sim.score, real=real)
    assert res.real is real
    frame = res.to_frame()
    assert list(frame.kind) == ["placebo", "real"]
    d = json.loads(json.dumps(res.to_dict(), default=str))
    assert d["verdict"] == res.verdict() and d["real"]["alpha"] == 0.01


class _Flaky:
    """A backend that fails for prompts mentioning the biscuit."""

    kind = "flaky"

    def __init__(self) -> None:
        self.inner = SimulatedModel(seed=9)
        self.model = self.inner.model

    def generate(self, requests):
        for r in requests:
            if "biscuit" in r.messages[-1]["content"] or "cookie" in r.messages[-1]["content"]:
                raise BackendError("simulated outage")
        return self.inner.generate(requests)


def test_failed_copies_are_counted_not_hidden():
    backend = _Flaky()
    pairs = backend.inner.study(n=40, rng=5)
    failing = sum("cookie" in x for x in pairs["x_i"])
    assert 0 < failing < 38
    res = placebo(pairs, backend, score=backend.inner.score, options=RUN_HOT)
    assert res.n_failed == failing and len(res.pairs) == len(pairs) - failing
    assert f"{failing} placebo pair(s) dropped" in str(res)


def test_bad_arguments():
    sim = SimulatedModel()
    pairs = sim.study(n=3, rng=0)
    with pytest.raises(ValueError, match="exactly one of `score`"):
        placebo(pairs, sim)
    with pytest.raises(ValueError, match="exactly one of `score`"):
        placebo(pairs, sim, score=sim.score, similarity=sim.similarity)
    with pytest.raises(TypeError, match="`score`"):
        placebo(pairs, sim, score=3)
    with pytest.raises(ValueError, match="`sides`"):
        placebo(pairs, sim, score=sim.score, sides="k")
    with pytest.raises(TypeError, match="`pairs`"):
        placebo(pairs.to_frame(), sim, score=sim.score)
    with pytest.raises(TypeError, match="`real`"):
        placebo(pairs, sim, score=sim.score, real="report")
    with pytest.raises(TypeError, match="`options` must be a RunOptions"):
        placebo(pairs, sim, score=sim.score, options={"temperature": 1.0})
    with pytest.raises(TypeError, match="`config` must be a GenerationConfig"):
        placebo(pairs, sim, score=sim.score, options=RunOptions(config={"temperature": 1.0}))
    with pytest.raises(TypeError, match="`tests` must be a TestOptions"):
        placebo(pairs, sim, score=sim.score, tests={"alpha": 2.0})
    with pytest.raises(ValueError, match="`alpha`"):
        placebo(pairs, sim, score=sim.score, tests=TestOptions(alpha=2.0))


def test_the_public_name_is_the_function():
    import ipcausal.study.placebo  # noqa: F401

    sim = SimulatedModel()
    pairs = sim.study(n=3, rng=0)
    assert ipcausal.placebo(pairs, sim, score=sim.score).placebo.groups[0].n == 3
