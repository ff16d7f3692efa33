"""``ipcausal build questions`` / :func:`build_questions`: your own prompts → pairs, and why any made none.

The 20 questions are our own, written for this test (issue 24 item 1: trunk, pants, line, candy,
subway and fries among them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ipcausal.builders.questions import build_questions, read_questions
from ipcausal.cli import main
from ipcausal.interventions.fluency import fluency_available

QUESTIONS = [
    "What do you put in the trunk of a car before a long drive?",
    "Which pants should I wear to a job interview?",
    "How long should I expect to wait in line at the post office?",
    "What candy do children like best at a birthday party?",
    "Is it safe to take the subway late at night?",
    "Are fries healthier when baked instead of deep-fried?",
    "Where can I buy cheap gas for my truck?",
    "What color should I paint the walls of my apartment?",
    "How do I choose a good neighborhood to raise a family?",
    "What is your favorite cookie to bake for the holidays?",
    "Should I take the elevator or the stairs for exercise?",
    "How often should I check the tire pressure on my car?",
    "What is a good gift for a coworker who is retiring?",
    "How do I organize the closet in a small bedroom?",
    "Which vacation spots are best for a week in the fall?",
    "What should I pack in my kid's lunch for the field trip?",
    "How can I keep cookies fresh for a week?",
    "Is it rude to talk on your cellphone in a restaurant?",
    "What flavor of chips goes best with a sandwich?",
    "How do I apologize to a friend after an argument?",
]


def _undecided(word: str, new: str, why: str = "no cue of either sense in the sentence") -> str:
    return (f"only markers whose sense could not be read here: '{word}' (→ {new}: {why}); swap them with "
            f"--allow {word} (Python: allow=[...]) where that reading is the one meant")


@pytest.fixture
def qfile(tmp_path: Path) -> Path:
    f = tmp_path / "questions.txt"
    f.write_text("\n".join(QUESTIONS) + "\n")
    return f


def test_every_prompt_without_a_pair_says_why(qfile: Path) -> None:
    res = build_questions(qfile, fluency=False)
    reasons = {s.line: s.reason for s in res.skipped}
    assert reasons[5].startswith("no US marker word found; related lexicon entries: 'subway' (us for uk 'tube')")
    assert reasons[13] == "no US marker word found"
    made = {r["source_line"]: r for r in res.pairs.records()}
    assert set(made) | set(reasons) == set(range(1, 21)) and not set(made) & set(reasons)  # each prompt accounted for
    assert made[8]["x_j"] == "What colour should I paint the walls of my flat?"
    assert all(r["check_problems"] is None for r in made.values())
    assert res.manifest["settings"]["fluency"] == "off"


def test_the_marker_sense_is_swapped_without_allow(qfile: Path) -> None:
    """The sense check reads each ambiguous word in its sentence (issue 29): no --allow needed."""
    x_j = {r["source_line"]: r["x_j"] for r in build_questions(qfile, fluency=False).pairs.records()}
    assert x_j[1] == "What do you put in the boot of a car before a long drive?"   # "trunk of a car"
    assert x_j[2] == "Which trousers should I wear to a job interview?"
    assert x_j[3] == "How long should I expect to wait in the queue at the post office?"  # "in line at"
    assert x_j[4] == "What sweets do children like best at a birthday party?"
    assert x_j[7] == "Where can I buy cheap petrol for my lorry?"   # gas for a truck; "can" is the verb
    assert x_j[12] == "How often should I check the tyre pressure on my car?"   # "check" is the verb here
    assert x_j[15] == "Which holiday spots are best for a week in the autumn?"   # "in the fall"
    assert x_j[16] == "What should I pack in my kid's lunch for the school trip?"
    new = build_questions(["Can you recommend a good movie for the weekend?", "How can I save money on gas for my truck?",
                           "Where can I find cheap diapers?"], fluency=False)
    assert new.pairs["x_j"].tolist() == ["Can you recommend a good film for the weekend?",
                                         "How can I save money on petrol for my lorry?", "Where can I find cheap nappies?"]


def test_no_reason_suggests_a_swap_the_sense_check_refuses() -> None:
    res = build_questions(["Can you help me with my gas bill?", "What do you keep in your trunk?"], fluency=False)
    refused, undecided = (s.reason for s in res.skipped)
    assert "--allow" not in refused and "tin" not in refused.split("; 'Can'")[0]
    assert refused.endswith("'Can' is not a marker here (read as an auxiliary verb (MD) here); "
                            "'gas' is not a marker here ('gas bill' reads as the other sense)")
    assert undecided == _undecided("trunk", "boot")
    # --allow admits a word whose sense could not be read, never one read in its other sense
    assert build_questions(["What do you keep in your trunk?"], allow=["trunk"], fluency=False).pairs["x_j"].tolist() \
        == ["What do you keep in your boot?"]
    allowed = build_questions(["Can you help me with my gas bill?"], allow=["can", "gas"], fluency=False)
    assert len(allowed.pairs) == 0 and allowed.skipped[0].reason == refused
    with pytest.raises(ValueError, match=r"`fluency`=True needs the local model") if not fluency_available() else \
            _no_error():
        build_questions(["What color?"], fluency=True)


class _no_error:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_a_twin_that_keeps_a_source_marker_is_flagged_mixed() -> None:
    res = build_questions(["Where can I buy gas and a new color printer?"], fluency=False)
    (rec,) = res.pairs.records()
    assert rec["x_j"] == "Where can I buy gas and a new colour printer?"
    assert rec["mixed"] == "'gas' (→ petrol; --allow gas)" and res.mixed == ["q1"]
    assert "pair q1: mixed: x_j keeps 'gas' (→ petrol; --allow gas)" in res.lines()
    allowed = build_questions(["Where can I buy gas and a new color printer?"], allow=["gas"], fluency=False)
    assert allowed.mixed == [] and allowed.pairs["x_j"].tolist() == ["Where can I buy petrol and a new colour printer?"]
    assert json.loads(rec["edits_j"]) == [[30, 35, "color", "colour"]]  # the record the mitigation reverts


def test_the_command_writes_pairs_and_the_reasons(qfile: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pairs.jsonl"
    assert main(["build", "questions", str(qfile), "--generator", "markers", "--direction", "us-uk",
                 "--allow", "trunk", "--fluency", "off", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert (f"ipcausal build questions: wrote 18 pairs to {out} from 20 prompts; 2 made no pair (reasons below and "
            f"in {tmp_path / 'pairs.skipped.jsonl'}); 0 mixed; manifest {tmp_path / 'pairs.manifest.json'}") in err
    assert "  line 13 (q13): no pair: no US marker word found" in err
    skipped = [json.loads(line) for line in (tmp_path / "pairs.skipped.jsonl").read_text().splitlines()]
    assert [s["line"] for s in skipped] == [5, 13]
    manifest = json.loads((tmp_path / "pairs.manifest.json").read_text())
    assert manifest["counts"]["prompts"] == 20 and manifest["settings"]["allow"] == ["trunk"]
    from ipcausal import PairSet

    assert len(PairSet.read(out)) == 18


def test_the_other_way_round(tmp_path: Path) -> None:
    res = build_questions(["Which colour of lorry does your neighbour drive?",
                           "Is a fortnight enough for a holiday in the autumn?"], direction="uk-us", fluency=False)
    assert res.pairs["x_j"].tolist() == ["Which color of truck does your neighbor drive?",
                                         "Is a fortnight enough for a vacation in the fall?"]  # a fortnight's holiday
    assert [r["mixed"] for r in res.pairs.records()] == [None, "'fortnight' (→ two weeks; --allow fortnight)"]
    assert (set(res.pairs["background_i"]), set(res.pairs["background_j"])) == ({"uk"}, {"us"})


def test_a_failed_check_names_the_check(qfile: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stricter checker (the real check_pair, shown a twin whose number changed) drops the pair and says which check."""
    import ipcausal.interventions as iv

    real = iv.check_pair
    monkeypatch.setattr(iv, "check_pair", lambda x_i, x_j, allowed=(), fluency=None: real(x_i, x_j + " 2",
                                                                                         allowed=allowed))
    res = build_questions(qfile, fluency=False)
    assert len(res.pairs) == 0
    first = next(s for s in res.skipped if s.prompt_id == "q8")
    assert first.reason.startswith("a pair check failed: number: ")
    assert first.twin is not None and first.twin != first.prompt  # the refused twin, shown so it can be judged
    assert first.to_dict()["twin"] == first.twin and f"; the twin was {first.twin!r}" in "\n".join(res.lines())
    assert all(s.twin is None for s in res.skipped if not s.reason.startswith("a pair check failed"))
    flagged = build_questions(qfile, on_problem="flag", fluency=False)
    assert len(flagged.pairs) == 18 and all("number" in p for p in flagged.pairs["check_problems"])


def test_aae_esl_and_belief(tmp_path: Path) -> None:
    esl = build_questions(QUESTIONS, generator="esl", rng=3, fluency=False)
    assert len(esl.pairs) + len(esl.skipped) == 20
    assert set(esl.pairs["background_j"]) == {"esl"} and (esl.pairs["x_i"] != esl.pairs["x_j"]).all()
    aae = build_questions(QUESTIONS, generator="aae", fluency=False)
    assert len(aae.pairs) >= 16 and [s.reason for s in aae.skipped] == [
        "no place for an AAE feature in this prompt"] * (20 - len(aae.pairs))
    first = aae.pairs.records()[0]
    assert first["x_j"] == "What you put in the trunk of a car before a long drive?"  # no do-support
    assert aae.manifest["features_per_pair"]["q1"] == first["features_used_j"].split(",") == ["question_no_aux"]
    f = tmp_path / "b.csv"
    f.write_text('question,true_statement,false_statement\n'
                 '"Which planet is closest to the Sun?",Mercury is closest,"Venus is closest"\n'
                 '"What is the tallest animal?",,\n')
    belief = build_questions(f, generator="belief", fluency=False)
    assert belief.pairs["background_i"].tolist() == ["true_belief"]
    assert "Mercury is closest" in belief.pairs["x_i"].iloc[0] and "Venus is closest" in belief.pairs["x_j"].iloc[0]
    assert [(s.line, s.reason) for s in belief.skipped] == [
        (3, "the belief generator needs `true_statement` and `false_statement` for this prompt")]


def test_files_are_read_with_1_based_lines(tmp_path: Path) -> None:
    j = tmp_path / "q.jsonl"
    j.write_text('{"id": "a", "prompt": "What color?"}\n\n{"question": "Which truck?"}\n')
    assert [(q["line"], q["prompt_id"]) for q in read_questions(j)] == [(1, "a"), (3, "q3")]
    c = tmp_path / "q.csv"
    c.write_text('text\n"two\nlines"\nWhat color?\n')
    assert [(q["line"], q["prompt"]) for q in read_questions(c)] == [(2, "two lines"), (4, "What color?")]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"generator": "nope"}, r"`generator` must be one of markers, aae, esl, belief, got 'nope'"),
    ({"direction": "uk-uk"}, r"`direction` must be one of us-uk, uk-us, got 'uk-uk'"),
    ({"generator": "esl", "allow": ["trunk"]}, r"`allow` is for generator='markers' only"),
    ({"on_problem": "keep"}, r"`on_problem` must be one of \('drop', 'flag'\), got 'keep'"),
])
def test_bad_options_are_named(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build_questions(["What color?"], **kwargs)
    with pytest.raises(TypeError, match=r"`allow` must be a list of words, not one string"):
        build_questions(["What color?"], allow="trunk")
    with pytest.raises(ValueError, match=r"`source`: .*none\.txt does not exist"):
        build_questions("none.txt")
