"""The ``logprob`` scorer against the SCM simulator's known probability model."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ipcausal
from ipcausal.backends import Request, messages_of
from ipcausal.pairs import PairSet
from ipcausal.scoring import score_pairs
from ipcausal.scoring.logprob import (correct_index, option_continuations, option_distribution,
                                      require_option_logprobs, score_logprob)
from ipcausal.testing import SimulatedModel


def _pairs(n: int = 12, k: int = 4, correct: object = 1, **extra: object) -> PairSet:
    opts = [f"option {c}" for c in "abcdefgh"[:k]]
    return PairSet.from_records([
        {"pair_id": i, "background_i": "american", "background_j": "british",
         "x_i": f"Question number {i}? [american]", "x_j": f"Question number {i}? [british]",
         "options": opts, "correct_option": correct, **extra} for i in range(n)])


def test_scores_are_the_simulators_known_probabilities() -> None:
    sim = SimulatedModel(effect=0.7, noise=0.5, seed=4)
    ps = _pairs(correct=2)
    out = score_logprob(ps, sim)
    for r in range(len(out)):
        row = out.to_frame().iloc[r]
        assert row["score_i"] == pytest.approx(sim.option_probabilities(row["x_i"], 4)[1], rel=1e-12)
        assert row["score_j"] == pytest.approx(sim.option_probabilities(row["x_j"], 4)[1], rel=1e-12)
    assert ((out["score_i"] > 0) & (out["score_j"] < 1)).all()
    assert set(out["status_i"]) == {"ok"} and out["scorer"].iat[0].startswith("logprob")


def test_the_background_shifts_the_first_options_log_odds_by_exactly_the_effect() -> None:
    effect = 0.9
    sim = SimulatedModel(effect=effect, noise=0.0, seed=1)
    out = score_logprob(_pairs(correct=1), sim).to_frame()
    lo = lambda p: np.log(p / (1 - p))  # noqa: E731
    np.testing.assert_allclose(lo(out["score_j"].to_numpy()) - lo(out["score_i"].to_numpy()), effect, atol=1e-9)
    # no effect, no noise: identical probabilities on both sides
    same = score_logprob(_pairs(), SimulatedModel(effect=0.0, noise=0.0)).to_frame()
    np.testing.assert_allclose(same["score_i"], same["score_j"], rtol=0, atol=1e-15)


def test_a_large_effect_is_detected_by_ipcausal_test() -> None:
    sim = SimulatedModel(effect=3.0, noise=0.3, seed=2)
    rep = ipcausal.test(score_logprob(_pairs(n=30), sim), rng=0)
    assert rep.ip_detected


def test_option_distribution_is_the_softmax_of_the_backends_values() -> None:
    class Fixed:
        kind, model = "fixed", "f"

        def generate(self, requests):  # pragma: no cover - not called
            raise AssertionError

        def option_logprobs(self, request, options):
            return tuple(-float(k + 1) for k in range(len(options)))

    p = option_distribution(Fixed(), "q", ["a", "b", "c"])
    want = np.exp([-1.0, -2.0, -3.0]) / np.exp([-1.0, -2.0, -3.0]).sum()
    np.testing.assert_allclose(p, want, rtol=1e-12)


def test_continuations_sent_are_numbers_or_texts() -> None:
    seen: list[tuple[str, ...]] = []

    class Spy:
        kind, model = "spy", "s"

        def generate(self, requests):  # pragma: no cover
            raise AssertionError

        def option_logprobs(self, request, options):
            seen.append(tuple(options))
            return tuple(0.0 for _ in options)

    ps = _pairs(n=1, k=3)
    score_logprob(ps, Spy())
    score_logprob(ps, Spy(), continuation="text")
    assert seen[0] == ("1", "2", "3") and seen[-1] == ("option a", "option b", "option c")
    assert len(seen) == 4  # x_i and x_j once each per continuation style


def test_registry_entry_gives_the_same_scores_through_score_pairs() -> None:
    sim = SimulatedModel(effect=0.5, seed=3)
    ps = _pairs(y_i="Answer: 1", y_j="Answer: 2")
    res = score_pairs(ps, "logprob", backend=sim)
    direct = score_logprob(ps, sim)
    np.testing.assert_allclose(res.pairs["score_i"], direct["score_i"])
    np.testing.assert_allclose(res.pairs["score_j"], direct["score_j"])
    assert res.outcome == "interval" and res.counts["scored"] == len(ps)
    with pytest.raises(ValueError, match="`backend` is required for scorer 'logprob'"):
        score_pairs(ps, "logprob")


def test_bad_inputs_name_the_parameter() -> None:
    sim = SimulatedModel()
    with pytest.raises(ValueError, match="`continuation` must be one of"):
        score_logprob(_pairs(), sim, continuation="letter")
    with pytest.raises(ValueError, match="`correct_option` number 9 is outside 1..4"):
        score_logprob(_pairs(correct=9), sim)
    with pytest.raises(ValueError, match="`correct_option` 'nope' is not exactly one of the options"):
        correct_index("nope", ["a", "b"])
    with pytest.raises(TypeError, match="`correct_option` must be an option number"):
        correct_index(1.5, ["a", "b"])
    with pytest.raises(TypeError, match="`pairs` must be a PairSet"):
        score_logprob([], sim)
    bad = PairSet.from_records([{"pair_id": 0, "background_i": "a", "background_j": "b", "x_i": "q", "x_j": "q b",
                                 "options": "not json", "correct_option": 1}])
    with pytest.raises(ValueError, match="column `options` must hold a non-empty list"):
        score_logprob(bad, sim)
    no_opts = PairSet.from_records([{"pair_id": 0, "background_i": "a", "background_j": "b", "x_i": "q",
                                     "x_j": "q b"}])
    with pytest.raises(ValueError, match="needs the column `options`"):
        score_logprob(no_opts, sim)
    with pytest.raises(ValueError, match="`prompt` must be a non-empty text"):
        option_distribution(sim, "  ", ["a"])
    with pytest.raises(ValueError, match="`options` must be a non-empty sequence"):
        option_continuations([])
    with pytest.raises(ValueError, match="`n_options` must be a positive integer"):
        sim.option_probabilities("q", 0)
    with pytest.raises(TypeError, match="`request` must be a Request"):
        sim.option_logprobs("q", ["a"])


def test_refusal_names_backend_and_scorer_and_sends_nothing() -> None:
    class Counting:
        kind, model = "counting", "c-1"

        def __init__(self) -> None:
            self.calls = 0

        def generate(self, requests):
            self.calls += 1
            return []

    b = Counting()
    with pytest.raises(ValueError, match=r"scorer 'logprob' needs option log-probabilities, which backend "
                                         r"'counting' \(model 'c-1'\) cannot give"):
        score_logprob(_pairs(), b)
    with pytest.raises(ValueError, match="backend 'counting'"):
        score_pairs(_pairs(y_i="a", y_j="b"), "logprob", backend=b)
    assert b.calls == 0
    require_option_logprobs(SimulatedModel())  # does not raise


def test_simulator_logprobs_are_normalised_and_deterministic() -> None:
    sim = SimulatedModel(effect=1.0, seed=5)
    req = Request(messages_of("Which colour? [british]"))
    a, b = sim.option_logprobs(req, ["r", "g", "b"]), sim.option_logprobs(req, ["r", "g", "b"])
    assert a == b and math.isclose(sum(math.exp(v) for v in a), 1.0, rel_tol=1e-12)


def test_cli_score_logprob_needs_a_backend(tmp_path, capsys) -> None:
    from ipcausal.cli import main

    path = tmp_path / "answered.jsonl"
    _pairs(n=2, y_i="1", y_j="2").write(path)
    rc = main(["score", str(path), "--scorer", "logprob", "-o", str(tmp_path / "s.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2 and "--scorer logprob needs --backend" in err
    assert not (tmp_path / "s.jsonl").exists()
