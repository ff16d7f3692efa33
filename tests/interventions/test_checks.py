"""check_pair catches each kind of problem and passes declared edits; the builders run it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ipcausal.builders import build_demo, build_essays, build_farm, demo_pairs
from ipcausal.builders.manifest import Manifest, check_record
from ipcausal.interventions import (
    PROBLEM_KINDS,
    Problem,
    aae_features,
    check_pair,
    esl_errors,
    frame_with_markers,
    protected_spans,
    swap_markers,
)

Q = ("Which city did Maria visit in 2019? See https://example.org/trips for the list.\n"
     "A) Oakland\nB) Detroit\nC) Houston")


def kinds(problems):
    return [p.kind for p in problems]


def test_clean_pair():
    x_j = Q.replace("Which city did", "Which city has").replace("visit", "visited")
    assert check_pair(Q, x_j) == []


@pytest.mark.parametrize("x_j,kind", [
    (Q.replace("2019", "2018"), "number"),
    (Q.replace("2019", "two thousand nineteen"), "number"),
    (Q.replace("\nC) Houston", ""), "option"),
    (Q.replace("B) Detroit", "B) Chicago"), "option"),
    (Q.replace("A) ", "a) "), "option"),
    (Q.replace("Maria", "Mary"), "name"),
    (Q.replace("https://example.org/trips", "https://example.org/travel"), "url"),
    (Q.replace("Which city did Maria visit in 2019?", "Maria visited a city in 2019."), "question_form"),
    (Q, "unchanged"),
    (Q.replace(" ", "  "), "unchanged"),
])
def test_each_problem_kind(x_j, kind):
    got = check_pair(Q, x_j)
    assert kind in kinds(got), got
    p = next(p for p in got if p.kind == kind)
    assert isinstance(p, Problem) and p.detail and p.to_dict()["kind"] == kind


def test_problem_lists_what_was_lost_and_added():
    (p,) = check_pair("Ana paid 20 dollars to Ben.", "Ana paid 25 dollars to Ben.")
    assert (p.kind, p.before, p.after) == ("number", ("20",), ("25",))
    (p,) = check_pair("We met Ana in Paris.", "We met Ana in Rome.")
    assert (p.kind, p.before, p.after) == ("name", ("Paris",), ("Rome",))
    assert set(PROBLEM_KINDS) == {"unchanged", "number", "option", "name", "url", "question_form", "fluency"}


def test_statement_turned_question_and_inline_options():
    assert kinds(check_pair("Pick one of them.", "Which one do you pick?")) == ["question_form"]
    assert kinds(check_pair("Is it (A) red or (B) blue?", "Is it (A) red or blue?")) == ["option"]


def test_a_name_may_move_to_the_start_of_a_sentence():
    assert check_pair("Should Ana pay the bill?", "Ana should pay the bill, right?") == []


def test_marker_swaps_pass():
    us = "What COLOR is the truck in the parking lot? 1. Gray\n2. Red"
    sw = swap_markers(us, to="uk")
    assert kinds(check_pair(us, sw.text)) != []  # undeclared, "Gray" -> "Grey" is an option change
    assert check_pair(us, sw.text, allowed=sw.swaps) == []
    f = frame_with_markers("Which sport is most popular in Ohio?", rng=2)
    assert check_pair(f.extra["us"], f.extra["uk"], allowed=[tuple(c[2:]) for c in f.extra["edits"]]) == []


def test_declared_style_edits_pass_in_every_form():
    text = "Many people believe that the government should protect the environment."
    r = esl_errors(text, rng=1)
    assert check_pair(text, r.text, allowed=r.edits) == []
    assert check_pair(text, r.text, allowed=[list(e) for e in r.edits]) == []  # as read back from JSON
    assert check_pair(text, r.text, allowed=[s for e in r.edits for s in (e.old, e.new)]) == []
    a = aae_features("The Smiths think they are ready.", rng=0)
    assert check_pair("The Smiths think they are ready.", a.text, allowed=a.edits) == []


def test_validation():
    with pytest.raises(TypeError, match="`x_i` must be a str"):
        check_pair(None, "x")
    with pytest.raises(TypeError, match="`x_j` must be a str"):
        check_pair("x", 3)
    with pytest.raises(TypeError, match="`allowed` must be an iterable"):
        check_pair("a", "b", allowed="gray")
    with pytest.raises(TypeError, match="`allowed` must hold strings"):
        check_pair("a", "b", allowed=[3])
    with pytest.raises(TypeError, match="`text` must be a str"):
        protected_spans(b"x")
    assert check_pair("a b", "a c", allowed=None) == []


def test_protected_spans_kinds():
    spans = protected_spans("Call NASA at 5 pm or mail info@nasa.gov.\n1. Yes\n2. No")
    got = {(p.kind, p.text) for p in spans}
    assert {("name", "NASA"), ("number", "5"), ("url", "info@nasa.gov"), ("option", "1. Yes")} <= got


# ----------------------------------------------------------------- builders
def _rec(x_i, x_j, bj="aae"):
    return {"pair_id": "p1", "background_i": "sae", "background_j": bj, "x_i": x_i, "x_j": x_j}


def test_check_record_drop_and_flag():
    man = Manifest("t")
    rec = _rec("They paid 20 dollars.", "They paid 25 dollars.")
    assert check_record(rec, man, "drop") is False
    assert man.checks["number"] == 1 and man.checks["dropped"] == 1
    assert man.to_dict()["skipped"] == {"pair check failed: number": 1}
    rec = _rec("They are 20.", "They 25.")
    assert check_record(rec, man, "flag") is True
    assert json.loads(rec["check_problems"])[0]["kind"] == "number"
    assert man.checks["flagged"] == 1 and man.to_dict()["checks"]["number"] == 2
    rec = _rec("They are ready.", "They ready.")
    assert check_record(rec, man, "drop") and rec["check_problems"] is None
    assert rec["target_features_j"] is True and json.loads(rec["features_j"])["aae"] == ["copula_absence"]
    assert man.checks["clean"] == 1
    rec = _rec("They are ready.", "They is ready.", bj="sae")
    check_record(rec, man, "drop")
    assert rec["target_features_j"] is None


def test_demo_education_is_sae_aae_esl_and_checked():
    res = build_demo("education", 0)
    df = res.pairs.to_frame()
    assert set(zip(df.background_i, df.background_j)) == {("sae", "aae"), ("sae", "esl"), ("aae", "esl")}
    assert len(df) == 3 * 32
    assert res.manifest["checks"]["clean"] == len(df) and df.check_problems.isna().all()
    aae = df[df.background_j == "aae"]
    assert aae.target_features_j.mean() > 0.8
    assert all(json.loads(e) for e in aae.edits_j)
    # a prompt's pairs do not depend on how many prompts are built
    head = demo_pairs("education", 0, limit=5).to_frame()
    assert head.x_i.tolist() == df.x_i.head(15).tolist() and head.x_j.tolist() == df.x_j.head(15).tolist()
    assert demo_pairs("education", 1) != demo_pairs("education", 0)
    assert demo_pairs("education", 1) == demo_pairs("education", 1)


def test_demo_culture_and_echo_checked():
    for name, n in (("culture", 65), ("echo", 42)):
        res = build_demo(name)
        assert len(res.pairs) == n and res.manifest["checks"]["clean"] == n
    cul = demo_pairs("culture").to_frame()
    assert cul.target_features_j.all()  # every uk side shows British markers
    with pytest.raises(ValueError, match="`on_problem` must be one of"):
        demo_pairs("echo", on_problem="keep")
    with pytest.raises(ValueError, match="`limit` must be a positive integer"):
        demo_pairs("echo", limit=0)


def test_build_essays_rules_on_problem(tmp_path):
    p = tmp_path / "p.txt"
    p.write_text("Do you agree that Maria's 3 children are going to need their own rooms?\n"
                 "There are 12 reasons why people don't have any savings. Discuss.\n", encoding="utf-8")
    res = build_essays(p, styles="aae,esl", aae_rules=True, esl_rules=True, rng=4)
    m = res.manifest
    assert m["checks"]["clean"] == len(res.pairs) == 6 and m["settings"]["on_problem"] == "drop"
    with pytest.raises(ValueError, match="`on_problem` must be one of"):
        build_essays(p, styles="esl", esl_rules=True, on_problem="maybe")
    with pytest.raises(ValueError, match="need a `backend`"):
        build_essays(p, styles="aae")


_SHARED = Path(os.environ.get("IPCAUSAL_SHARED_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data"))
FARM = _SHARED / "sirnyls-AutoPersonalizationBench" / "case3_farm_with_statements"


@pytest.mark.skipif(not FARM.is_dir(), reason="research data not present")
def test_build_farm_counts_checks_on_real_data():
    res = build_farm(FARM, limit=40)
    checks = res.manifest["checks"]
    assert checks["clean"] + checks.get("flagged", 0) == len(res.pairs)
    assert checks["clean"] >= 0.9 * len(res.pairs)
    flagged = build_farm(FARM, limit=40, on_problem="flag")
    assert len(flagged.pairs) == len(res.pairs) + checks.get("dropped", 0)
