"""The mitigation rewrites: markers to the default style, recorded edits undone, cues stripped."""

from __future__ import annotations

import json

import pytest

from ipcausal.interventions import aae_features, belief_prompt, check_pair, esl_errors
from ipcausal.interventions.neutralize import default_markers, strip_cues, undo_edits

TEXTS = [
    "They are ready for the test, and she is always busy on weekends.",
    "He doesn't have any money, so those people are going to help him.",
    "There are many reasons why their school is closed. Do you agree?",
    "The children were late because the bus is slow and he thinks it is far.",
]


def test_default_markers_rewrites_british_words_only():
    r = default_markers("My neighbour painted the centre of the theatre.")
    assert r.text == "My neighbor painted the center of the theater."
    assert r.edits == (("neighbour", "neighbor"), ("centre", "center"), ("theatre", "theater"))
    assert check_pair(r.original, r.text, allowed=r.edits) == []


def test_default_markers_leaves_american_and_neutral_text():
    for t in ("My neighbor likes the color blue.", "Where is the nearest bus stop?"):
        r = default_markers(t)
        assert r.text == t and r.edits == () and not r.changed and r.undone


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("text", TEXTS)
def test_undo_edits_restores_the_aae_source(text, seed):
    a = aae_features(text, rng=seed)
    if a is None:
        pytest.skip("no AAE feature fits this text")
    r = undo_edits(a.text, a.edits)
    assert r.text == text and r.undone
    assert len(r.edits) == len(a.edits)
    # the JSON records a builder writes undo the same way
    assert undo_edits(a.text, json.dumps([list(e) for e in a.edits])).text == text


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("text", TEXTS)
def test_undo_edits_restores_the_esl_source(text, seed):
    e = esl_errors(text, rng=seed, n_errors=3)
    if e is None:
        pytest.skip("no ESL error fits this text")
    assert undo_edits(e.text, e.edits).text == text


def test_undo_edits_inside_a_wrapped_prompt():
    a = aae_features(TEXTS[0], rng=1)
    wrapped = f"Write an essay on this prompt:\n{a.text}\nKeep it short."
    r = undo_edits(wrapped, a.edits, source=a.text)
    assert r.text == f"Write an essay on this prompt:\n{TEXTS[0]}\nKeep it short."


def test_undo_edits_refuses_what_it_cannot_find():
    a = aae_features(TEXTS[0], rng=1)
    tampered = a.text.replace(a.edits[0].new, "XYZ", 1) if a.edits[0].new else "Q " + a.text
    r = undo_edits(tampered, a.edits)
    assert not r.undone and r.text == tampered and "not found" in r.reason
    r = undo_edits("a different prompt", a.edits, source=a.text)
    assert not r.undone and "not inside" in r.reason


def test_undo_edits_without_records_is_a_no_op():
    for edits in (None, [], "[]", "null"):
        r = undo_edits("She be working.", edits)
        assert r.text == "She be working." and r.undone and r.edits == ()


def test_undo_edits_bad_input():
    with pytest.raises(ValueError, match="`edits` must be a JSON list"):
        undo_edits("x", "{not json")
    with pytest.raises(ValueError, match=r"`edits`: each record must end with \(start, end, old, new\)"):
        undo_edits("x", [["f", 1, 2]])
    with pytest.raises(ValueError, match=r"`edits`: each record must end with"):
        undo_edits("x", [["f", "1", 2, "a", "b"]])
    with pytest.raises(TypeError, match="`edits` must be a list"):
        undo_edits("x", 3)
    with pytest.raises(TypeError, match="`text` must be a str"):
        undo_edits(3, [])
    with pytest.raises(TypeError, match="`source` must be a str"):
        undo_edits("x", [["f", 0, 1, "y", "x"]], source=5)


def test_strip_cues_removes_the_belief_and_keeps_the_question():
    t = belief_prompt("The Sun orbits the Earth", "Which body is at the centre of the solar system?",
                      ["The Sun", "The Earth"])
    f = belief_prompt("The Earth orbits the Sun", "Which body is at the centre of the solar system?",
                      ["The Sun", "The Earth"])
    rt, rf = strip_cues(t), strip_cues(f)
    assert rt.text == rf.text
    assert rt.text.startswith("Question: Which body")
    assert rt.edits == (("I believe the following: The Sun orbits the Earth.", ""),)
    assert check_pair(t, rt.text, allowed=rt.edits) == []


def test_strip_cues_tags_and_untouched_text():
    assert strip_cues("[ESL] [sae] Tell me a story.", ["sae", "esl"]).text == "Tell me a story."
    assert strip_cues("[other] Tell me.", ["sae"]).text == "[other] Tell me."
    r = strip_cues("Tell me a story.", ["sae"])
    assert not r.changed and r.edits == ()
    with pytest.raises(TypeError, match="`backgrounds` must be a sequence"):
        strip_cues("x", "sae")
    with pytest.raises(TypeError, match="`text` must be a str"):
        strip_cues(None)


# ---------------------------------------------------------------- issue 29: the mitigation keeps its word
def test_revert_markers_both_ways_and_a_stale_record_is_refused() -> None:
    from ipcausal.interventions import swap_markers
    from ipcausal.interventions.neutralize import revert_markers

    us = "How can I save money on gas for my truck?"
    sw = swap_markers(us, to="uk")
    rec = [list(e) for e in sw.edits]
    assert revert_markers(sw.text, rec).text == us                    # the British twin, back to its source
    uk = "Where is the lift in your flat?"
    to_us = swap_markers(uk, to="us")
    made = revert_markers(uk, [list(e) for e in to_us.edits], apply=True)  # a British source, made American
    assert made.text == to_us.text == "Where is the elevator in your apartment?"
    stale = revert_markers("How can I save money on diesel for my lorry?", rec)
    assert not stale.undone and "not found where it was recorded" in stale.reason
    wrong = revert_markers(uk.replace("lift", "stair"), [list(e) for e in to_us.edits], apply=True)
    assert not wrong.undone and wrong.reason == "swap 'lift' -> 'elevator' not found where it was recorded"
    assert revert_markers("Is the colour grey?").text == "Is the color gray?"  # no record: the sense-checked swap


def test_residual_cues_of_each_kind() -> None:
    from ipcausal.interventions.neutralize import residual_cues

    assert residual_cues("markers", "Put it in the trunk.", "Put it in the trunk.") == ()  # undecided, alike
    assert residual_cues("markers", "Put it in the trunk.", "Put it in the boot.") == (
        "j: British marker 'boot'", "i: American marker 'trunk' that the other side lacks")  # "in the boot": read
    assert residual_cues("markers", "We rent a flat.", "We rent a flat.") == (
        "i: British marker 'flat'", "j: British marker 'flat'")  # read in its marker sense: a cue, on both sides
    assert residual_cues("dialect", "Do you agree?", "You agree?") == ("j: AAE feature 'question_no_aux'",)
    assert residual_cues("dialect", "The students are late.", "The students is late.") == ("j: ESL error 'agreement'",)
    assert residual_cues("strip", "[aae] How do I apply?", "How do I apply?", ["aae", "sae"]) == ("i: tag '[aae]'",)
    assert residual_cues("strip", "I believe the following: x. Question: y?", "Question: y?") == (
        "i: a stated belief ('I believe the following: ...')",)
    with pytest.raises(ValueError, match=r"`kind` must be one of \('markers', 'dialect', 'strip'\), got 'instruct'"):
        residual_cues("instruct", "a", "b")
    with pytest.raises(TypeError, match=r"`x_j` must be a str, got int"):
        residual_cues("markers", "a", 3)
