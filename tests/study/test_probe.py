"""ipcausal.probe with the SCM simulator at known accuracies: the size at chance, power at high
accuracy, per-background counts, unparseable and failed answers, the prompt format, the parser,
and every validation message."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import ipcausal
from ipcausal import PairSet
from ipcausal.backends.base import BackendError, Choice, Response
from ipcausal.study.probe import PROBE_MARKER, parse_choice, probe, probe_prompt, read_probe_prompt
from ipcausal.testing import SimulatedModel

THREE = ("american", "british", "learner")


def _three(acc: float | None, seed: int = 0) -> SimulatedModel:
    return SimulatedModel(backgrounds=THREE, probe_accuracy=acc, seed=seed)


def test_chance_accuracy_holds_the_size() -> None:
    """probe_accuracy = 1/|B|: H0 is true, so the rejection rate is the binomial test's exact size."""
    runs = 300
    pvals = []
    for r in range(runs):  # independent studies: another model seed and other questions each time
        sim = SimulatedModel(probe_accuracy=0.5, seed=r)
        pvals.append(probe(sim.study(n=30, rng=r), sim, rng=r).pvalue)  # 60 distinct prompts
    pvals = np.array(pvals)
    # exact size of the one-sided test at α = 0.05 with n = 60, p = 1/2
    k_star = next(k for k in range(61) if stats.binom.sf(k - 1, 60, 0.5) <= 0.05)
    size = stats.binom.sf(k_star - 1, 60, 0.5)
    rate = float((pvals <= 0.05).mean())
    assert abs(rate - size) <= 3 * math.sqrt(size * (1 - size) / runs) + 1e-9
    assert abs(float((pvals <= 0.5).mean()) - stats.binom.sf(29, 60, 0.5)) < 0.12  # the middle, too


@pytest.mark.parametrize("acc", [0.0, 1 / 3, 0.6, 0.9, 1.0])
def test_stated_accuracy_is_what_the_probe_measures(acc) -> None:
    sim = _three(acc, seed=2)
    pairs = sim.study(n=60, rng=1)  # 3 background pairs × 60: 360 distinct prompts
    res = probe(pairs, sim, rng=3)
    assert res.n == 360 and res.unparseable == 0 and res.failed == 0 and res.chance == pytest.approx(1 / 3)
    assert res.ci_low <= acc <= res.ci_high or acc in (0.0, 1.0)
    assert abs(res.accuracy - acc) <= 4 * math.sqrt(max(acc * (1 - acc), 1e-12) / 360) + 1e-12
    ref = stats.binomtest(res.correct, res.n, 1 / 3, alternative="greater")
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    if acc >= 0.6:
        assert res.pvalue < 1e-6 and res.can_infer
    assert sum(r["n"] for r in res.per_background.values()) == res.n
    for b, row in res.per_background.items():
        assert row["n"] == 120 and sum(row["answered"].values()) == row["n"]
        assert row["answered"][b] == row["correct"]


def test_options_are_shuffled_per_prompt_with_the_seed() -> None:
    seen: list[str] = []

    class Recorder(SimulatedModel):
        def generate(self, requests):
            seen.extend(r.messages[-1]["content"] for r in requests)
            return super().generate(requests)

    sim = Recorder(backgrounds=THREE, probe_accuracy=1.0)
    pairs = sim.study(n=10, rng=0)
    seen.clear()
    a = probe(pairs, sim, rng=7)
    first = list(seen)
    seen.clear()
    b = probe(pairs, sim, rng=7)
    assert seen == first and a == b and a.seed == 7
    orders = {read_probe_prompt(t)[1] for t in first}
    assert len(orders) == 6  # all 3! orders occur among 60 prompts
    assert all(t.startswith(PROBE_MARKER) for t in first)
    seen.clear()
    probe(pairs, sim, rng=8)
    assert seen != first


def test_unparseable_and_failed_answers_are_counted_apart() -> None:
    class Odd:
        kind, model = "odd", "odd-1"

        def generate(self, requests):
            out = []
            for r in requests:
                text = r.messages[-1]["content"]
                msg, opts = read_probe_prompt(text)
                if "FAIL" in msg:
                    raise BackendError("HTTP 500")
                body = "no idea" if "odd" in msg else f"Answer: {'ABC'[opts.index('US')]}"
                out.append(Response(choices=(Choice(text=body),), model=self.model))
            return out

    rows = [{"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": f"q{k} color",
             "x_j": f"q{k} colour" + (" odd" if k < 2 else "") + (" FAIL" if k == 2 else "")} for k in range(6)]
    res = probe(PairSet.from_records(rows), Odd(), rng=0)
    assert (res.unparseable, res.failed, res.n) == (2, 1, 9)
    assert res.per_background["US"] == {"n": 6, "correct": 6, "unparseable": 0, "failed": 0,
                                        "answered": {"US": 6, "UK": 0}, "accuracy": 1.0}
    assert res.per_background["UK"]["correct"] == 0 and res.per_background["UK"]["answered"] == {"US": 3, "UK": 0}
    assert res.accuracy == pytest.approx(6 / 9)
    assert json.loads(json.dumps(res.to_dict()))["per_background"]["UK"]["unparseable"] == 2


def test_no_answered_prompt_gives_p_one_and_plain_json() -> None:
    sim = SimulatedModel()  # probe_accuracy=None: says it cannot tell when no marker is present
    rows = [{"pair_id": 1, "background_i": "american", "background_j": "british", "x_i": "hello there",
             "x_j": "hello again"}]
    res = probe(PairSet.from_records(rows), sim, rng=0)
    assert (res.n, res.unparseable, res.pvalue) == (0, 2, 1.0)
    d = json.loads(json.dumps(res.to_dict()))
    assert d["accuracy"] is None and d["per_background"]["american"]["accuracy"] is None


def test_default_simulator_names_what_it_infers() -> None:
    sim = SimulatedModel(seed=5)
    res = ipcausal.probe(sim.study(n=20, rng=0), sim, rng=1, alternative="two-sided")
    assert res.accuracy == 1.0 and res.n == 40 and isinstance(res, ipcausal.ProbeResult)
    assert res.pvalue == pytest.approx(stats.binomtest(40, 40, 0.5).pvalue, rel=1e-12)


def test_backgrounds_widen_the_options_and_lower_chance() -> None:
    sim = SimulatedModel(probe_accuracy=1.0)
    res = probe(sim.study(n=5, rng=0), sim, backgrounds=["american", "british", "other", "fourth"], rng=0)
    assert res.chance == 0.25 and res.backgrounds == ("american", "british", "other", "fourth")
    assert res.per_background["other"]["n"] == 0


def test_cache_answers_a_second_probe(tmp_path) -> None:
    sent = []

    class Counting(SimulatedModel):
        def generate(self, requests):
            sent.append(len(requests))
            return super().generate(requests)

    sim = Counting(probe_accuracy=0.7, seed=3)
    pairs = sim.study(n=8, rng=0)
    sent.clear()
    first = probe(pairs, sim, rng=1, cache=tmp_path / "c.sqlite")
    assert sum(sent) == 16
    again = probe(pairs, sim, rng=1, cache=tmp_path / "c.sqlite")
    assert sum(sent) == 16 and again == first
    with pytest.raises(TypeError, match=r"`cache` must be a path, a ResponseCache or None"):
        probe(pairs, sim, cache=3)


def test_prompt_round_trip_and_format() -> None:
    text = "Line one.\n--- message end ---\nstill the message"  # a message that contains the end line
    prompt = probe_prompt(text, ["x", "y", "z"])
    assert read_probe_prompt(prompt) == (text, ("x", "y", "z"))
    assert read_probe_prompt("no marker here") is None
    assert read_probe_prompt(PROBE_MARKER + "\nbroken") is None


@pytest.mark.parametrize("answer,expected", [
    ("B", 1), ("b", 1), ("(C)", 2), ("C.", 2), ("Answer: A", 0), ("The answer is (b).", 1),
    ("Option C", 2), ("A) american", 0), ("B. british, I think", 1), ("Probably British.", 1),
    ("learner english", 2), ("A British writer", 1), ("Answer: D", None), ("A or B", None),
    ("american or british", None), ("", None), ("I cannot tell.", None), ("Z", None),
])
def test_parse_choice(answer, expected) -> None:
    assert parse_choice(answer, ["american", "british", "learner english"]) == expected


def test_longer_name_wins_over_a_name_it_contains() -> None:
    assert parse_choice("they write learner english", ["english", "learner english"]) == 1
    assert parse_choice("they write english", ["english", "learner english"]) == 0


def test_bad_inputs_name_the_parameter(tmp_path) -> None:
    sim = SimulatedModel(probe_accuracy=0.5)
    pairs = sim.study(n=3, rng=0)
    with pytest.raises(TypeError, match=r"`pairs` must be a PairSet or a path"):
        probe([1, 2], sim)
    with pytest.raises(TypeError, match=r"`backend` must implement"):
        probe(pairs, object())
    with pytest.raises(ValueError, match=r"`backgrounds` lacks \['british'\]"):
        probe(pairs, sim, backgrounds=["american", "other"])
    with pytest.raises(ValueError, match=r"`backgrounds` must be distinct"):
        probe(pairs, sim, backgrounds=["american", "british", "british"])
    with pytest.raises(TypeError, match=r"`backgrounds` must be a sequence"):
        probe(pairs, sim, backgrounds="american")
    with pytest.raises(ValueError, match=r"`alternative` must be one of"):
        probe(pairs, sim, alternative="up")
    with pytest.raises(ValueError, match=r"`confidence_level` must lie in \(0, 1\)"):
        probe(pairs, sim, confidence_level=2)
    with pytest.raises(TypeError, match=r"`config` must be a GenerationConfig"):
        probe(pairs, sim, config={"max_tokens": 3})
    with pytest.raises(ValueError, match=r"`system` must be a non-empty string"):
        probe(pairs, sim, system=" ")
    with pytest.raises(TypeError, match=r"`rng` must be None"):
        probe(pairs, sim, rng="x")
    with pytest.raises(ValueError, match=r"`text` must be a non-empty string"):
        probe_prompt(" ", ["a", "b"])
    path = pairs.write(tmp_path / "p.jsonl")
    assert probe(path, sim, rng=0).n == 6


def test_options_carry_readable_labels_and_answers_naming_a_label_are_read() -> None:
    from ipcausal.study.probe import BACKGROUND_LABELS, parse_choice

    prompt = probe_prompt("Is it far?", ["sae", "aae"], {"sae": BACKGROUND_LABELS["sae"]})
    assert "A. sae (a writer of Standard American English)\nB. aae\n" in prompt
    assert read_probe_prompt(prompt) == ("Is it far?", ("sae", "aae"))
    labels = {"sae": BACKGROUND_LABELS["sae"], "aae": BACKGROUND_LABELS["aae"]}
    assert parse_choice("Most likely a speaker of African American English.", ["sae", "aae"], labels) == 1
    assert parse_choice("Most likely a speaker of African American English.", ["sae", "aae"]) is None


def test_probe_prompts_show_the_labels_and_labels_are_checked() -> None:
    sim = SimulatedModel(probe_accuracy=1.0, seed=2)
    seen = []

    class Spy:
        kind, model = "spy", "spy"

        def generate(self, requests):
            seen.extend(r.messages[-1]["content"] for r in requests)
            return sim.generate(requests)

    res = probe(sim.study(n=4, rng=0), Spy(), rng=0, labels={"american": "", "british": "from Britain"})
    assert res.accuracy == 1.0 and all("british (from Britain)" in p and "american (" not in p for p in seen)
    with pytest.raises(TypeError, match="`labels` must be a mapping of background name to label text"):
        probe(sim.study(n=4, rng=0), sim, labels={"american": 3})
