"""LLM-based generators: validation, retries and failure records (scripted backend + the real local model)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from ipcausal.interventions import (
    COMPOSE_SPEC,
    STYLE_SPEC,
    GeneratedText,
    compose_with_markers,
    embedding_model_available,
    semantic_similarity,
    style_transfer,
)
from ipcausal.interventions._llm import clean_output
from ipcausal.scm import check_intervention


from _helpers_backends import ScriptedBackend  # noqa: E402  (shared with the builder tests)
SAE = "Should children be allowed to use smartphones at school? Explain your position."
AAE = "Should kids be allowed to be usin' they smartphones at school? Explain where you stand on it."
ESL = "Should childrens be allow to use smartphone in the school? Explain you position."


def test_specs():
    for spec in (STYLE_SPEC, COMPOSE_SPEC):
        assert check_intervention(spec).target == "B"


def test_clean_output_strips_chatter():
    assert clean_output('Sure! Here is the rewritten prompt:\n\n"Is it good?"') == "Is it good?"
    assert clean_output("Rewritten prompt: Is it good?\n\nNote: I kept the meaning.") == "Is it good?"


def test_style_transfer_accepts_a_valid_rewrite():
    b = ScriptedBackend([AAE])
    r = style_transfer(SAE, b, "aae")
    assert isinstance(r, GeneratedText) and r.ok and r.text == AAE
    assert r.attempts == 1 and r.failures == ()
    assert "African-American English" in b.requests[0].messages[-1]["content"]
    assert b.requests[0].config.temperature == 0.0
    if embedding_model_available():
        assert r.similarity is not None and r.similarity >= 0.75


def test_style_transfer_retries_then_accepts():
    b = ScriptedBackend([SAE, "Here is the rewritten prompt: " + ESL])
    r = style_transfer(SAE, b, "esl", rng=5)
    assert r.ok and r.text == ESL and r.attempts == 2
    assert r.failures == ("unchanged: the output equals the input",)
    assert b.requests[1].config.seed == 6 and b.requests[1].config.temperature > 0
    assert "3 typical learner mistakes" in b.requests[0].messages[-1]["content"] or \
        "at least 3" in b.requests[0].messages[-1]["content"]


def test_style_transfer_records_every_failure():
    outs = [SAE, "Phones.", "This is written in African American English: " + AAE]
    r = style_transfer(SAE, ScriptedBackend(outs), "aae", max_attempts=3)
    assert not r.ok and r.text is None and r.attempts == 3
    assert r.failures[0].startswith("unchanged")
    assert r.failures[1].startswith("length changed") or r.failures[1].startswith("question type")
    assert "explicit background cue" in r.failures[2]
    assert r.to_dict()["failures"] == list(r.failures)


def test_style_transfer_checks_the_question_type():
    r = style_transfer(SAE, ScriptedBackend(["Kids be usin phones at school all the time and that is fine."]),
                       "aae", max_attempts=1)
    assert not r.ok and "question type" in r.failures[0]


@pytest.mark.skipif(not embedding_model_available(), reason="embedding model not installed")
def test_style_transfer_rejects_a_different_meaning():
    other = "Is it better to live in a big city or in the countryside? Explain your choice."
    r = style_transfer(SAE, ScriptedBackend([other]), "aae", max_attempts=1)
    assert not r.ok and "meaning not preserved" in r.failures[0]
    assert semantic_similarity(SAE, other) < 0.75


def test_backend_errors_are_recorded_not_raised():
    def boom(prompt, req):
        raise RuntimeError("server down")

    r = style_transfer(SAE, ScriptedBackend(boom), "aae", max_attempts=2)
    assert not r.ok and r.failures == ("backend error: RuntimeError: server down",) * 2


def test_style_transfer_validation():
    b = ScriptedBackend([AAE])
    with pytest.raises(ValueError, match="`style`"):
        style_transfer(SAE, b, "pirate")
    with pytest.raises(TypeError, match="`backend`"):
        style_transfer(SAE, object(), "aae")
    with pytest.raises(ValueError, match="`text`"):
        style_transfer("  ", b, "aae")
    with pytest.raises(ValueError, match="`max_attempts`"):
        style_transfer(SAE, b, "aae", max_attempts=0)
    with pytest.raises(ValueError, match="`min_similarity`"):
        style_transfer(SAE, b, "aae", min_similarity=2)
    with pytest.raises(ValueError, match="`n_errors`"):
        style_transfer(SAE, b, "esl", n_errors=0)


Q = "How do most people get to work in the morning?"


def test_compose_with_markers_makes_both_sides():
    out = "On the way past the car park and the petrol station, how do most people get to work in the morning?"
    r = compose_with_markers(Q, ScriptedBackend([out]), "uk", rng=0)
    assert r.ok and r.text == out
    assert r.extra["uk"] == out
    assert r.extra["us"] == "On the way past the parking lot and the gas station, how do most people get to work in the morning?"
    assert r.extra["markers"] == ["car park", "petrol station"]
    assert len(r.extra["offered_words"]) == 12


def test_compose_strips_country_cues_or_retries():
    named = "In Britain, past the car park: how do most people get to work in the morning?"
    stripped = "Everyone uses the car park. In Britain it is busy. How do most people get to work in the morning?"
    r = compose_with_markers(Q, ScriptedBackend([named, stripped]), "uk", rng=0)
    assert r.ok and "Britain" not in r.text and "car park" in r.text
    assert r.attempts == 2 and "country cue" in r.failures[0]


def test_compose_unifies_mixed_varieties():
    mixed = "After the parking lot filled up and the petrol ran out, how do most people get to work in the morning?"
    r = compose_with_markers(Q, ScriptedBackend([mixed]), "uk", rng=0)
    assert r.ok and "car park" in r.extra["uk"] and "parking lot" in r.extra["us"] and "gasoline" in r.extra["us"]


def test_compose_records_failures():
    r = compose_with_markers(Q, ScriptedBackend(["I walk to work.", Q, "How do people commute to work?"]), "uk",
                             rng=0, max_attempts=3)
    assert not r.ok and r.attempts == 3
    assert r.failures[0] == "not a question any more"
    assert r.failures[1].startswith("unchanged")
    assert r.failures[2].startswith("too few uk markers")


def test_compose_is_deterministic_in_offered_words():
    a = ScriptedBackend(["x"])
    b = ScriptedBackend(["x"])
    compose_with_markers(Q, a, "us", rng=4, max_attempts=1)
    compose_with_markers(Q, b, "us", rng=4, max_attempts=1)
    assert a.requests[0].messages == b.requests[0].messages


def test_one_rng_gives_the_words_and_the_sampling_seed():
    """``rng`` is the only source of randomness: an int is the backend's base seed, a Generator gives one."""
    a = ScriptedBackend(["x", "y"])
    compose_with_markers(Q, a, "us", rng=7, max_attempts=2)
    assert [r.config.seed for r in a.requests] == [7, 8]  # attempt k: seed + k, as `seed=7` gave before
    b, c = ScriptedBackend(["x"]), ScriptedBackend(["x"])
    compose_with_markers(Q, b, "us", rng=np.random.default_rng(3), max_attempts=1)
    compose_with_markers(Q, c, "us", rng=np.random.default_rng(3), max_attempts=1)
    assert b.requests[0].config.seed == c.requests[0].config.seed and b.requests[0].messages == c.requests[0].messages
    d = ScriptedBackend(["x"])
    style_transfer(SAE, d, "aae", rng=np.random.default_rng(3), max_attempts=1)
    assert d.requests[0].config.seed == int(np.random.default_rng(3).integers(2**31 - 1))
    with pytest.raises(TypeError, match="`rng`"):
        style_transfer(SAE, d, "aae", rng="five")
    with pytest.raises(TypeError, match="seed"):
        compose_with_markers(Q, d, "us", seed=0)  # the one randomness argument is `rng`


def test_compose_validation():
    b = ScriptedBackend(["x"])
    with pytest.raises(ValueError, match="`variety`"):
        compose_with_markers(Q, b, "ca")
    with pytest.raises(ValueError, match="`question`"):
        compose_with_markers("", b)
    with pytest.raises(ValueError, match="`n_words`"):
        compose_with_markers(Q, b, n_words=0)
    with pytest.raises(ValueError, match="`min_markers`"):
        compose_with_markers(Q, b, min_markers=0)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed")
def test_real_local_model_plumbing(tmp_path):
    """The real SmolLM2-135M model: quality is not the point, the records are."""
    from ipcausal.backends import get_backend
    from ipcausal.builders import build_essays

    backend = get_backend("local", n_threads=1)
    r = style_transfer("Is it better to rent or to buy a home? Explain why.", backend, "aae",
                       max_attempts=1, max_tokens=8)
    assert isinstance(r, GeneratedText) and r.attempts == 1
    assert r.ok or (r.text is None and len(r.failures) == 1)

    prompts = tmp_path / "p.txt"
    prompts.write_text("Should every town have a public library? Explain your reasons with examples.\n")
    res = build_essays(prompts, styles=("aae", "esl"), esl_rules=True, backend=backend, max_tokens=8,
                       max_attempts=1, rng=0)
    m = res.manifest
    assert m["counts"]["rewrites:esl"] == 1
    made_aae = m["counts"].get("rewrites:aae", 0)
    failed_aae = m["skipped"].get("style_transfer:aae failed validation", 0)
    assert made_aae + failed_aae == 1  # made or recorded, never dropped silently
    assert len(res.pairs) == (3 if made_aae else 1)
    assert m["settings"]["backend"].startswith("local:")


def test_llm_rewrites_must_keep_numbers_and_names():
    sae = "Should Ms. Rivera's school give students 30 minutes of recess? Explain your view."
    lost = "Should the school give kids a long recess? Explain your view."
    kept = "Should Ms. Rivera's school be givin' students 30 minutes of recess? Explain your view."
    r = style_transfer(sae, ScriptedBackend([lost, kept]), "aae", min_similarity=-1.0)
    assert r.ok and r.text == kept and r.failures[0].startswith("number not kept")
    q = "How long is the drive from Ohio to Texas, in 2 days?"
    r = compose_with_markers(q, ScriptedBackend(["How long is the drive by lorry?"]), "uk", rng=0, max_attempts=1,
                             min_similarity=-1.0)
    assert not r.ok and r.failures[0].startswith(("number not kept", "name not kept"))
