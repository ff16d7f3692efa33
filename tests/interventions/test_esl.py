"""esl_errors: seeded learner errors, seven families, every edit recorded."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipcausal.interventions import ESL_FAMILIES, ESL_SPEC, esl_errors
from ipcausal.scm import check_intervention

TEXT = ("Many people believe that the government should protect the environment. Some argue that students "
        "always learn more when a teacher gives them advice about their work in the classroom, because children "
        "is curious.")


def _rebuild(r):
    parts, last = [], 0
    for e in r.edits:
        parts += [r.original[last:e.start], e.new]
        last = e.end
    parts.append(r.original[last:])
    return "".join(parts)


def test_at_least_six_families_and_each_one_fires():
    assert len(ESL_FAMILIES) >= 6
    examples = {
        "agreement": "The city has a park.",
        "article": "I saw the dog in the park.",
        "number": "Many people need information.",
        "preposition": "We live in the city.",
        "verb_form": "Students can learn fast.",
        "spelling": "I believe it is necessary because of the environment.",
        "word_order": "They often read books.",
        "pronoun": "Explain your position.",
    }
    for fam, text in examples.items():
        r = esl_errors(text, rng=0, n_errors=1, families=[fam])
        assert r is not None, fam
        assert r.families == (fam,)
        assert r.text != text


def test_deterministic_for_a_seed():
    assert esl_errors(TEXT, rng=7, n_errors=4) == esl_errors(TEXT, rng=7, n_errors=4)
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert esl_errors(TEXT, rng=g1) == esl_errors(TEXT, rng=g2)


def test_different_across_seeds():
    outs = {esl_errors(TEXT, rng=s, n_errors=3).text for s in range(10)}
    assert len(outs) >= 5


def test_edits_are_recorded_exactly():
    r = esl_errors(TEXT, rng=1, n_errors=5)
    assert len(r.edits) == 5
    assert _rebuild(r) == r.text
    for e in r.edits:
        assert r.original[e.start:e.end] == e.old and e.old != e.new
        assert e.family in ESL_FAMILIES
    assert len(set(r.families)) >= 4  # spread over families
    assert r.to_dict()["edits"][0][0] in ESL_FAMILIES


def test_more_than_two_errors_by_default():
    r = esl_errors(TEXT, rng=0)
    assert len(r.edits) == 3


def test_none_when_no_rule_applies():
    assert esl_errors("Zebras graze.", rng=0) is None
    assert esl_errors("", rng=0) is None


def test_fewer_places_than_requested():
    r = esl_errors("We live in the city.", rng=0, n_errors=50)
    assert 1 <= len(r.edits) < 50


def test_validation():
    with pytest.raises(ValueError, match="`n_errors`"):
        esl_errors(TEXT, n_errors=0)
    with pytest.raises(ValueError, match="`n_errors`"):
        esl_errors(TEXT, n_errors=True)
    with pytest.raises(TypeError, match="`text`"):
        esl_errors(None)
    with pytest.raises(ValueError, match="`families`"):
        esl_errors(TEXT, families=["slang"])
    with pytest.raises(TypeError, match="`families`"):
        esl_errors(TEXT, families="spelling")
    with pytest.raises(TypeError, match="`rng`"):
        esl_errors(TEXT, rng=1.5)


def test_spec():
    assert check_intervention(ESL_SPEC).name == "esl_errors"


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(TEXT.split()), min_size=1, max_size=25), st.integers(0, 2**32 - 1),
       st.integers(1, 6))
def test_edits_rebuild_text_for_any_input(words, seed, n):
    text = " ".join(words)
    r = esl_errors(text, rng=seed, n_errors=n)
    if r is None:
        return
    assert 1 <= len(r.edits) <= n
    assert _rebuild(r) == r.text
    spans = [(e.start, e.end) for e in r.edits]
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # no overlap, in order
