"""SimulatedModel(probe_accuracy=…): probe requests are recognised and answered with the stated
accuracy; every other request is answered exactly as before; bad values are refused."""

from __future__ import annotations

import math

import pytest

from ipcausal.backends.base import GenerationConfig, Request, messages_of
from ipcausal.study.probe import parse_choice, probe_prompt
from ipcausal.testing import SimulatedModel


def _ask(sim: SimulatedModel, message: str, options, config: GenerationConfig | None = None):
    req = Request(messages_of(probe_prompt(message, options)), config or GenerationConfig())
    return sim.generate([req])[0]


def test_answers_hit_the_stated_accuracy_and_misses_are_uniform() -> None:
    sim = SimulatedModel(backgrounds=("american", "british", "x"), probe_accuracy=0.3, seed=1)
    opts = ["x", "british", "american"]
    picks = []
    for q in range(3000):
        text = _ask(sim, sim.prompt(f"q{q}", "british"), opts).text
        picks.append(parse_choice(text, opts))
    assert None not in picks
    hit = picks.count(1) / len(picks)
    assert abs(hit - 0.3) < 4 * math.sqrt(0.3 * 0.7 / 3000)
    assert abs(picks.count(0) - picks.count(2)) < 4 * math.sqrt(0.35 * 3000)  # the two misses alike


def test_message_without_a_background_is_answered_at_chance() -> None:
    sim = SimulatedModel(probe_accuracy=1.0, seed=2)
    picks = [parse_choice(_ask(sim, f"neutral question {q}", ["american", "british"]).text, ["american", "british"])
             for q in range(2000)]
    assert abs(picks.count(0) / 2000 - 0.5) < 4 * math.sqrt(0.25 / 2000)


def test_default_names_the_inferred_background_or_cannot_tell() -> None:
    sim = SimulatedModel()
    opts = ["british", "american"]
    assert parse_choice(_ask(sim, sim.prompt("q", "american"), opts).text, opts) == 1
    assert _ask(sim, "no markers at all", opts).text == "I cannot tell from this message."


def test_sampling_varies_answers_only_when_temperature_is_positive() -> None:
    sim = SimulatedModel(probe_accuracy=0.5, seed=3)
    msg, opts = sim.prompt("q1", "british"), ["american", "british"]
    greedy = _ask(sim, msg, opts, GenerationConfig(n=8))
    assert len({c.text for c in greedy.choices}) == 1
    sampled = _ask(sim, msg, opts, GenerationConfig(n=40, temperature=1.0))
    assert len({parse_choice(c.text, opts) for c in sampled.choices}) == 2


def test_other_requests_unchanged_and_model_named() -> None:
    plain, probing = SimulatedModel(effect=0.5, seed=9), SimulatedModel(effect=0.5, seed=9, probe_accuracy=0.7)
    reqs = [Request(messages_of(plain.prompt(f"q{k}", "british"))) for k in range(5)]
    assert [r.text for r in plain.generate(reqs)] == [r.text for r in probing.generate(reqs)]
    assert "probe_accuracy=0.7" in probing.model and "probe_accuracy" not in plain.model


@pytest.mark.parametrize("value,exc,match", [
    (1.5, ValueError, r"`probe_accuracy` must lie in \[0, 1\]"),
    (-0.1, ValueError, r"`probe_accuracy` must lie in \[0, 1\]"),
    ("high", ValueError, r"`probe_accuracy` must be a finite number"),
    (float("nan"), ValueError, r"`probe_accuracy` must be a finite number"),
])
def test_bad_probe_accuracy(value, exc, match) -> None:
    with pytest.raises(exc, match=match):
        SimulatedModel(probe_accuracy=value)
