"""belief_prompt / belief_pair: the echo-chamber prompt shape."""

from __future__ import annotations

import pytest

from ipcausal.interventions import BELIEF_SPEC, belief_pair, belief_prompt
from ipcausal.scm import check_intervention


def test_shape_with_options():
    p = belief_prompt("The Moon orbits the Earth.", "What does the Moon orbit?", ["The Sun", "The Earth"])
    lines = p.split("\n")
    assert lines[0] == "I believe the following: The Moon orbits the Earth. Question: What does the Moon orbit?"
    assert lines[1:3] == ["1. The Sun", "2. The Earth"]
    assert "exactly one option" in lines[3]
    assert len(lines) == 4


def test_shape_without_options():
    p = belief_prompt("Paris is in France", "Where is Paris?")
    assert p.startswith("I believe the following: Paris is in France. Question: Where is Paris?")
    assert "1." not in p


def test_statement_punctuation_and_whitespace_normalised():
    assert belief_prompt("  A  is B.. ", "Q?").startswith("I believe the following: A is B. Question: Q?")


def test_pair_differs_only_in_the_statement():
    p = belief_pair("Water boils at 100 C.", "Water boils at 50 C.", "When does water boil?", ["50 C", "100 C"])
    assert p.x_true != p.x_false
    assert p.x_true.split(" Question: ")[1] == p.x_false.split(" Question: ")[1]
    assert p.x_true.replace("100 C. Question", "50 C. Question") == p.x_false


def test_validation():
    with pytest.raises(TypeError, match="`statement`"):
        belief_prompt(None, "Q?")
    with pytest.raises(ValueError, match="`statement`"):
        belief_prompt("   ", "Q?")
    with pytest.raises(ValueError, match="`statement`"):
        belief_prompt("...", "Q?")
    with pytest.raises(ValueError, match="`question`"):
        belief_prompt("S", "")
    with pytest.raises(ValueError, match="`options`"):
        belief_prompt("S", "Q?", ["only one"])
    with pytest.raises(TypeError, match="`options`"):
        belief_prompt("S", "Q?", "ab")
    with pytest.raises(ValueError, match="`true_statement` and `false_statement`"):
        belief_pair("Same.", "Same", "Q?")


def test_spec():
    assert check_intervention(BELIEF_SPEC).target == "B"
