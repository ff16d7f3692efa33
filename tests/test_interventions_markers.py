"""swap_markers, the marker lexicon, find_markers and frame_with_markers."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipcausal.interventions import (
    FRAME_SPEC,
    MARKER_FRAMES,
    MARKER_SPEC,
    find_markers,
    frame_with_markers,
    marker_lexicon,
    swap_markers,
)
from ipcausal.scm import check_intervention


# --------------------------------------------------------------------------- lexicon
def test_lexicon_shape_and_size():
    lex = marker_lexicon()
    assert {"uk", "us", "category", "ambiguous"} <= set(lex.columns)
    assert len(lex) >= 400
    assert set(lex.category) == {"spelling", "vocabulary"}
    assert lex.ambiguous.dtype == bool
    assert (lex.uk.str.lower() != lex.us.str.lower()).all()
    families = {"colour": "color", "organise": "organize", "centre": "center", "catalogue": "catalog",
                "defence": "defense", "travelled": "traveled", "lorry": "truck", "biscuit": "cookie"}
    for uk, us in families.items():
        assert ((lex.uk == uk) & (lex.us == us)).any(), uk
    for uk in ("tyre", "programme", "flat"):
        assert lex.loc[lex.uk == uk, "ambiguous"].all(), uk


def test_lexicon_unambiguous_entries_form_a_bijection():
    lex = marker_lexicon(include_ambiguous=False)
    assert not lex.uk.str.lower().duplicated().any()
    assert not lex.us.str.lower().duplicated().any()
    assert not set(lex.uk.str.lower()) & set(lex.us.str.lower())
    assert len(marker_lexicon(include_ambiguous=False)) < len(marker_lexicon())


def _norm(s: str) -> str:
    s = re.sub(r"\([^)]*\)", " ", str(s)).lower().replace('"', " ")
    s = re.sub(r"^\s*to\s+", "", s)
    return " ".join(s.split())


def test_lexicon_covers_the_study_word_list(shared_data):
    study = pd.read_csv(shared_data / "jiarui-liu-IP/case_1/list_uk_us.csv", sep=";", dtype=str)
    assert len(study) == 203
    lex = marker_lexicon()
    ours = {(_norm(u), _norm(a)) for u, a in zip(lex.uk, lex.us)}
    covered = [(_norm(u), _norm(a)) in ours for u, a in zip(study.uk_usage, study.us_usage)]
    share = sum(covered) / len(covered)
    assert share >= 0.80, share


def test_lexicon_validation():
    with pytest.raises(TypeError, match="`include_ambiguous`"):
        marker_lexicon(include_ambiguous="yes")


# --------------------------------------------------------------------------- swap cases
@pytest.mark.parametrize(
    ("text", "to", "expected"),
    [
        ("Color", "uk", "Colour"),
        ("COLOR", "uk", "COLOUR"),
        ("color", "uk", "colour"),
        ("The colors were organized.", "uk", "The colours were organised."),
        ("the truck's engine", "uk", "the lorry's engine"),
        ("the trucks' engines", "uk", "the lorries' engines"),
        ("It was gray.", "uk", "It was grey."),
        ("(gray)", "uk", "(grey)"),
        ("\"theater\"", "uk", "\"theatre\""),
        ("Park in the parking lot.", "uk", "Park in the car park."),
        ("A Parking Lot", "uk", "A Car Park"),
        ("I got a flat tire.", "uk", "I got a flat tyre."),
        ("She realised the centre was closed.", "us", "She realized the center was closed."),
        ("We travelled to the theatre", "us", "We traveled to the theater"),
        ("The estate agent", "us", "The real estate agent"),
        ("The real estate agent", "uk", "The estate agent"),
        ("colour-coded files", "us", "color-coded files"),
        ("Father Christmas came", "us", "Santa Claus came"),
        ("a cashpoint", "us", "a ATM"),
        ("centred, centring", "us", "centered, centering"),
    ],
)
def test_swap_cases(text, to, expected):
    r = swap_markers(text, to=to)
    assert r is not None and r.text == expected
    assert r.to == to and r.original == text


@pytest.mark.parametrize("text", ["Colorado is entirely landlocked.", "The entire theory", "Decorum",
                                  "", "No markers here at all."])
def test_none_when_nothing_matches(text):
    assert swap_markers(text, to="uk") is None


def test_whole_words_only():
    assert swap_markers("Colorado and colorectal", to="uk") is None
    r = swap_markers("Colorado color", to="uk")
    assert r.text == "Colorado colour" and len(r.changes) == 1


def test_changes_positions_and_order():
    text = "What COLOR is the truck's trunk? Gray."
    r = swap_markers(text, to="uk")
    assert r.text == "What COLOUR is the lorry's trunk? Grey."
    assert [tuple(c) for c in r.changes] == [(5, 10, "COLOR", "COLOUR"), (18, 23, "truck", "lorry"),
                                             (33, 37, "Gray", "Grey")]
    for c in r.changes:
        assert text[c.start:c.end] == c.old
    assert r.source == "us"
    assert r.to_dict()["changes"][0] == [5, 10, "COLOR", "COLOUR"]


def test_ambiguous_excluded_by_default_and_optional():
    assert swap_markers("Check the tire and the program.", to="uk") is None
    r = swap_markers("Check the tire and the program.", to="uk", include_ambiguous=True)
    assert r is not None and "tyre" in r.text and "programme" in r.text


def test_longest_match_first():
    r = swap_markers("She drove an articulated lorry.", to="us")
    assert r.text == "She drove an trailer truck."
    assert len(r.changes) == 1  # one multi-word change, not "lorry" alone


def test_swap_validation():
    with pytest.raises(ValueError, match="`to`"):
        swap_markers("color", to="au")
    with pytest.raises(TypeError, match="`text`"):
        swap_markers(3, to="uk")
    with pytest.raises(TypeError, match="`include_ambiguous`"):
        swap_markers("color", to="uk", include_ambiguous=1)


def test_find_markers():
    assert find_markers("My neighbour's favourite biscuits", "uk") == ["neighbour", "favourite", "biscuits"]
    assert find_markers("My neighbour's favourite biscuits", "us") == []
    with pytest.raises(ValueError, match="`variety`"):
        find_markers("x", "fr")


def test_specs_declare_an_intervention_on_b():
    for spec in (MARKER_SPEC, FRAME_SPEC):
        assert check_intervention(spec).target == "B" and "S" in spec.holds


# --------------------------------------------------------------------------- hypothesis
_LEX = marker_lexicon(include_ambiguous=False)
_LOWER = _LEX[_LEX.uk.str.islower() & _LEX.us.str.islower()]
_UK_WORDS = sorted(_LOWER.uk)
_US_WORDS = sorted(_LOWER.us)
_FILLERS = ["the", "quick", "we", "see", "a", "big", "house", "today", "and", "it", "was", "very", "nice", "on",
            "blue", "river", "friend", "slowly"]
_ALL_FORMS = set(_LEX.uk.str.lower()) | set(_LEX.us.str.lower())
assert not set(_FILLERS) & _ALL_FORMS
_CASE = st.sampled_from(["lower", "title", "upper"])


def _cased(word: str, how: str) -> str:
    return word.upper() if how == "upper" else word[:1].upper() + word[1:] if how == "title" else word


def _texts(words: list[str]):
    token = st.one_of(st.sampled_from(_FILLERS), st.tuples(st.sampled_from(words), _CASE).map(lambda t: _cased(*t)))
    punct = st.sampled_from([" ", " ", ", ", ". ", "; ", " (", ") "])
    return st.lists(st.tuples(token, punct), min_size=1, max_size=12).map(
        lambda parts: "".join(t + p for t, p in parts).strip())


@settings(max_examples=150, deadline=None)
@given(_texts(_UK_WORDS))
def test_round_trip_uk_us_uk(text):
    there = swap_markers(text, to="us")
    if there is None:
        return
    back = swap_markers(there.text, to="uk")
    assert back is not None and back.text == text


@settings(max_examples=150, deadline=None)
@given(_texts(_US_WORDS))
def test_round_trip_us_uk_us(text):
    there = swap_markers(text, to="uk")
    if there is None:
        return
    back = swap_markers(there.text, to="us")
    assert back is not None and back.text == text


@settings(max_examples=150, deadline=None)
@given(_texts(_US_WORDS))
def test_second_swap_same_direction_is_idempotent(text):
    once = swap_markers(text, to="uk")
    if once is None:
        return
    assert swap_markers(once.text, to="uk") is None


@settings(max_examples=150, deadline=None)
@given(_texts(_UK_WORDS + _US_WORDS))
def test_no_change_outside_matched_words(text):
    r = swap_markers(text, to="us")
    if r is None:
        return
    rebuilt, last = [], 0
    for c in r.changes:
        assert text[c.start:c.end] == c.old
        rebuilt += [text[last:c.start], c.new]
        last = c.end
    rebuilt.append(text[last:])
    assert "".join(rebuilt) == r.text
    starts = [c.start for c in r.changes]
    assert starts == sorted(starts)


# --------------------------------------------------------------------------- frames
def test_every_frame_carries_markers_and_round_trips():
    for f in MARKER_FRAMES:
        r = swap_markers(f, to="uk")
        assert r is not None and len(r.changes) >= 2, f
        assert swap_markers(r.text, to="us").text == f


def test_frame_with_markers_is_seeded_and_keeps_the_question():
    q = "How many people live in the largest city?"
    a, b = frame_with_markers(q, rng=3), frame_with_markers(q, rng=3)
    assert a == b
    assert a.extra["uk"].endswith(q) and a.extra["us"].endswith(q)
    assert a.extra["uk"] != a.extra["us"]
    assert find_markers(a.extra["uk"], "uk") and find_markers(a.extra["us"], "us")
    seen = {frame_with_markers(q, rng=s).extra["frame"] for s in range(20)}
    assert len(seen) > 3
    us = frame_with_markers("What color is it?", variety="us", rng=0)
    assert "color" in us.text and "colour" in us.extra["uk"]


def test_frame_validation():
    with pytest.raises(ValueError, match="`question`"):
        frame_with_markers("  ")
    with pytest.raises(ValueError, match="`variety`"):
        frame_with_markers("Why?", variety="ca")
    with pytest.raises(TypeError, match="`rng`"):
        frame_with_markers("Why?", rng="seed")
