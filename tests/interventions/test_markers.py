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
    assert lex.ambiguous.dtype == bool and lex.ambiguous_uk.dtype == bool and lex.ambiguous_us.dtype == bool
    assert (lex.ambiguous == (lex.ambiguous_uk | lex.ambiguous_us)).all()
    assert (lex.uk.str.lower() != lex.us.str.lower()).all()
    families = {"colour": "color", "organise": "organize", "centre": "center", "catalogue": "catalog",
                "defence": "defense", "travelled": "traveled", "lorry": "truck", "biscuit": "cookie"}
    for uk, us in families.items():
        assert ((lex.uk == uk) & (lex.us == us)).any(), uk
    for uk in ("tyre", "programme", "flat"):
        assert lex.loc[lex.uk == uk, "ambiguous"].all(), uk
    # per direction: the British word is the ambiguous one, the American one, or both
    side = {(r.uk, r.us): (r.ambiguous_uk, r.ambiguous_us) for r in lex.itertuples()}
    assert side[("flat", "apartment")] == (True, False)    # "flat" is also "level"
    assert side[("lift", "elevator")] == (True, False)     # "lift" is also a verb
    assert side[("tyre", "tire")] == (False, True)         # "tire" is also a verb
    assert side[("queue", "line")] == (False, True)
    assert side[("bill", "check")] == (True, True)
    assert side[("colour", "color")] == (False, False)
    assert lex.ambiguous_uk.sum() > lex.ambiguous.sum() // 3 and lex.ambiguous_us.sum() > lex.ambiguous.sum() // 3
    assert (lex.ambiguous & ~(lex.ambiguous_uk & lex.ambiguous_us)).sum() >= 80  # one-sided flags in use


@pytest.mark.parametrize("to", ["uk", "us"])
def test_each_direction_reads_every_source_word_one_way(to):
    """Per direction, the pairs swapped by default map each source word to one target, and
    no target word is itself swapped again (so a second swap is a no-op)."""
    src, dst = ("us", "uk") if to == "uk" else ("uk", "us")
    lex = marker_lexicon()
    active = lex[~lex[f"ambiguous_{src}"]]
    assert not active[src].str.lower().duplicated().any()
    assert not set(active[dst].str.lower()) & set(active[src].str.lower())
    assert len(active) > len(marker_lexicon(include_ambiguous=False)) + 40


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
    from ipcausal.interventions.markers import _ambiguity

    assert _ambiguity(" UK ") == (True, False) and _ambiguity("") == (False, False)
    with pytest.raises(ValueError, match="`ambiguous` must be true, false, uk or us, got 'maybe'"):
        _ambiguity("maybe")  # a bad cell in markers.csv


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
        ("a cashpoint", "us", "an ATM"),
        ("An ATM", "uk", "A cashpoint"),
        ("I rent an apartment with an elevator.", "uk", "I rent a flat with a lift."),
        ("AN APARTMENT", "uk", "A FLAT"),
        ("A CASHPOINT", "us", "AN ATM"),
        ("He drove an 18-wheeler", "uk", "He drove a juggernaut"),
        ("Put an estate agent and an estate car", "us", "Put a real estate agent and a station wagon"),
        ("a apartment", "uk", "a flat"),   # an article that did not agree is the input's choice
        ("an cashpoint", "us", "an ATM"),
        ("Buy a spanner at the pub", "us", "Buy a wrench at the bar"),
        ("Fill the car with gasoline at the apartment", "uk", "Fill the car with petrol at the flat"),
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
    assert r.text == "Colorado colour" and len(r.swaps) == 1


def test_changes_positions_and_order():
    text = "What COLOR is the truck's trunk? Gray."
    r = swap_markers(text, to="uk")
    assert r.text == "What COLOUR is the lorry's boot? Grey."  # a truck's trunk is a boot (the sense check)
    assert [tuple(c) for c in r.swaps] == [(5, 10, "COLOR", "COLOUR"), (18, 23, "truck", "lorry"),
                                             (26, 31, "trunk", "boot"), (33, 37, "Gray", "Grey")]
    for c in r.swaps:
        assert text[c.start:c.end] == c.old
    assert r.source == "us" and r.articles == ()
    assert r.to_dict()["swaps"][0] == [5, 10, "COLOR", "COLOUR"] and r.to_dict()["articles"] == []


def test_ambiguous_words_by_sense_by_default_and_undecided_ones_optional():
    # the noun "tire" reads as a tyre, the verb "check" is never "cheque"; "the program" cannot be read
    assert swap_markers("Check the tire and the program.", to="uk").text == "Check the tyre and the program."
    r = swap_markers("Check the tire and the program.", to="uk", include_ambiguous=True)
    assert r.text == "Check the tyre and the programme."
    assert [(d.word, d.sense) for d in r.senses] == [("Check", "other"), ("tire", "marker"), ("program", "undecided")]
    assert swap_markers("Can you check it?", to="uk", include_ambiguous=True) is None  # never "Tin you"


def test_ambiguity_is_read_per_direction():
    # the American words are clear, so American -> British swaps them ...
    r = swap_markers("The apartment has an elevator; the phone line by the faucet", to="uk")
    assert r.text == "The flat has a lift; the phone line by the tap"   # a phone line is not a queue
    # ... but the British words are ambiguous when read: each one is read in its sentence
    assert swap_markers("The flat tyre; give us a lift; the tap", to="us").text == "The flat tire; give us a lift; the tap"
    assert swap_markers("Queue at the pub for the lift", to="us").text == "Line at the bar for the lift"
    assert swap_markers("Take the lift up to our flat.", to="us").text == "Take the elevator up to our apartment."
    assert find_markers("a flat with a lift", "uk") == ["flat", "lift"]  # a flat's lift is an elevator
    assert find_markers("a flat road and a flat battery", "uk") == []
    assert find_markers("an apartment with an elevator", "us") == ["apartment", "elevator"]


@pytest.mark.parametrize(
    ("phrase", "article"),
    [("apartment", "an"), ("flat", "a"), ("hour", "an"), ("honest broker", "an"), ("university", "a"),
     ("one-way ticket", "a"), ("onerous task", "an"), ("urge", "an"), ("user", "a"), ("hourly rate", "an"), ("European", "a"), ("umbrella", "an"), ("ATM", "an"), ("GP", "a"), ("MOT", "an"),
     ("A-level", "an"), ("18-wheeler", "an"), ("11-seater", "an"), ("8 km", "an"), ("100 m", "a"),
     ("1,800", "a"), ("(eraser)", "an"), ("", None), ("…", None)],
)
def test_indefinite_article_by_sound(phrase, article):
    from ipcausal.interventions._articles import indefinite_article as _indefinite_article

    assert _indefinite_article(phrase) == article


def test_longest_match_first():
    r = swap_markers("She drove an articulated lorry.", to="us")
    assert r.text == "She drove a trailer truck."
    assert len(r.swaps) == 1  # one multi-word change, not "lorry" alone
    assert [tuple(c) for c in r.articles] == [(10, 12, "an", "a")]


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
_FULL = marker_lexicon()
_FULL = _FULL[_FULL.uk.str.islower() & _FULL.us.str.islower()]
_UK_READ = sorted(_FULL.uk[~_FULL.ambiguous_uk])  # swapped British -> American, incl. one-way pairs
_US_READ = sorted(_FULL.us[~_FULL.ambiguous_us])
_FILLERS = ["the", "quick", "we", "see", "big", "house", "today", "and", "it", "was", "very", "nice", "on",
            "blue", "river", "friend", "slowly"]
_ALL_FORMS = set(_LEX.uk.str.lower()) | set(_LEX.us.str.lower())
assert not set(_FILLERS) & _ALL_FORMS
_CASE = st.sampled_from(["lower", "title", "upper"])


def _cased(word: str, how: str) -> str:
    return word.upper() if how == "upper" else word[:1].upper() + word[1:] if how == "title" else word


def _with_article(word: str, how: str) -> str:
    """``word`` (lower case in the lexicon) after the article that agrees with it: a grammatical input."""
    from ipcausal.interventions._articles import indefinite_article as _indefinite_article

    return f"{_indefinite_article(word)} {_cased(word, how)}"


def _texts(words: list[str]):
    marker = st.tuples(st.sampled_from(words), _CASE)
    token = st.one_of(st.sampled_from(_FILLERS), marker.map(lambda t: _cased(*t)), marker.map(lambda t: _with_article(*t)))
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
@given(_texts(_US_READ), st.sampled_from(["uk", "us"]))
def test_second_swap_same_direction_is_idempotent(text, to):
    if to == "us":
        text = text if (sw := swap_markers(text, to="uk")) is None else sw.text  # a British text
    once = swap_markers(text, to=to)
    if once is None:
        return
    assert swap_markers(once.text, to=to) is None


@settings(max_examples=150, deadline=None)
@given(_texts(_UK_READ + _US_READ), st.sampled_from(["uk", "us"]))
def test_no_change_outside_matched_words(text, to):
    r = swap_markers(text, to=to)
    if r is None:
        return
    rebuilt, last = [], 0
    for c in sorted(r.swaps + r.articles):
        assert text[c.start:c.end] == c.old and c.start >= last
        rebuilt += [text[last:c.start], c.new]
        last = c.end
    rebuilt.append(text[last:])
    assert "".join(rebuilt) == r.text
    starts = [c.start for c in r.swaps]
    assert starts == sorted(starts)
    for a in r.articles:  # an article edit sits right before a changed word
        assert a.old.lower() in ("a", "an") and any(c.start > a.end and not text[a.end:c.start].strip()
                                                     for c in r.swaps)


# --------------------------------------------------------------------------- frames
def test_every_frame_carries_markers_and_round_trips():
    exact = 0
    for f in MARKER_FRAMES:
        r = swap_markers(f, to="uk")
        assert r is not None and len(r.swaps) >= 2, f
        back = swap_markers(r.text, to="us").text
        assert swap_markers(back, to="uk").text == r.text  # the British form is reached again
        exact += back == f  # a one-way pair (french fries -> chips) is not undone
    assert exact >= len(MARKER_FRAMES) // 2


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
