"""The one reader of numbers, ratings and choices (ipcausal.scoring.read): formats, rules, and real text.

Three kinds of text: the formats models write (the issue's list and more), the stated rule for
replies with several numbers, and text not written for these tests — the released answers of the
study's models (../shared/data, skipped when absent).  The local model's replies are read in
tests/scoring/test_read_local.py.
"""

from __future__ import annotations

import ast
import csv
from pathlib import Path

import pytest

from ipcausal.scoring import NumberReader, mcq_correct, number_reader, parse_choice, parse_rating, read_choice, \
    read_number

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")


@pytest.mark.parametrize("text", [
    "Answer: 4", "A: 4", "**4**", "4/5", "4 out of 5", "I'd rate it a 4", "Rating: four", "answer is 4",
    "Answer: **4**. The bus is rare.", "Final answer: 4", "Score: 4 out of 5", "(4)", "4", "4.", "Four.",
    "4 - you live far from the shops.", "Sure! I'd give it a four.", "I would say 4, since the bus is rare.",
    "Level: 4", "Rating = 4", "The answer would be 4 because", "Well... Answer:\n4",
    "On a scale from 1 to 5 I would pick 4, since the bus is rare.",
    "N runs from 1 (no car needed at all) to 5 (a car is essential). Mine: 4",
    "1 = no car, 5 = essential. I think 4.",
    "It is 12 km away, so 4.", "I have 5,000 dollars; answer: 4",
])
def test_read_number_reads_every_format_as_4(text: str) -> None:
    assert read_number(text, low=1, high=5) == 4.0


@pytest.mark.parametrize("text", [
    "Either 2 or 4.",  # two candidates on the scale, no label
    "1. Take the bus. 2. Buy a car.",  # a numbered list, not an answer
    "One of the best options is to cycle.",  # a number word inside prose is not an answer
    "Answer: 7",  # labelled, but off the scale: the model named it
    "8/10",  # a fraction on another scale
    "I have 5,000 dollars.",
    "40% of people drive.",
    "It depends.", "", "Answer: N",
])
def test_read_number_says_none_rather_than_guess(text: str) -> None:
    assert read_number(text, low=1, high=5) is None


def test_read_number_rules_for_several_numbers() -> None:
    # the first label decides, even when other numbers on the scale come before or after it
    assert read_number("Out of 3 choices, Answer: 2, then 5", low=1, high=5) == 2.0
    assert read_number("Rating: 3. Final answer: 5", low=1, high=5) == 5.0  # "final" beats a plain label
    # a label off the scale is unparseable: no fallback to another number
    assert read_number("Answer: 9, or maybe 3", low=1, high=5) is None
    # without a scale a reply with one number is read; with two it is not
    assert read_number("about 12 minutes") == 12.0 and read_number("about 12 or 13 minutes") is None
    # decimals count unless `integer`
    assert read_number("A: 1.15", low=1, high=5) == 1.15
    assert read_number("Rating: 3.5", low=1, high=5, integer=True) is None
    assert read_number("−2", low=-3, high=3) == -2.0  # a Unicode minus


def test_read_number_validates() -> None:
    with pytest.raises(TypeError, match="`text` must be text"):
        read_number(4)
    with pytest.raises(ValueError, match="`low` must be below `high`"):
        read_number("4", low=5, high=1)
    with pytest.raises(ValueError, match="`high` must be a finite number or None"):
        read_number("4", low=1, high=float("inf"))
    with pytest.raises(TypeError, match="`integer` must be True or False"):
        read_number("4", integer=1)


OPTS = ["Sydney", "Canberra", "Melbourne", "Perth"]


@pytest.mark.parametrize("text", [
    "(B)", "option 2", "Option 2", "Answer: B", "Answer: (b)", "The answer is 2.", "The answer is: 2.", "2",
    "2.", "B", "b", "B) Canberra", "**B**", "Canberra", "It is Canberra.", "I choose two", "I'd go with B.",
    "2. Canberra", "1. Canberra", "choice #2", "I think 2 is right.", "The capital is canberra!",
])
def test_read_choice_reads_every_format_as_the_second_option(text: str) -> None:
    assert read_choice(text, OPTS) == 1


@pytest.mark.parametrize("text", [
    "maybe", "Sydney or Canberra", "A car is faster.", "1. Sydney\n2. Canberra",  # the options listed back
    "3. Sydney",  # a number naming another option's text
    "(A) or (B)", "",
])
def test_read_choice_says_none_rather_than_guess(text: str) -> None:
    assert read_choice(text, OPTS) is None


def test_read_choice_rules() -> None:
    numbers = ["Two", "Three", "Four", "Five"]  # options whose text is a number word
    assert read_choice('The answer is "Three"', numbers) == 1  # the option named Three, not option 3
    assert read_choice("Four", numbers) == 2 and read_choice("4", numbers) == 3
    assert read_choice("(D), 7.", list("abcd")) == 3  # the letter, not the trailing number
    assert read_choice("A: 3", list("abcd")) == 2  # "A:" abbreviates "Answer:" before a number
    assert read_choice("Yes, it is.", ["Yes", "No"]) == 0 and read_choice("No.", ["Yes", "No"]) == 1
    assert read_choice("100 °C", ["90 °C", "100 °C"]) == 1  # an option's text with a number in it
    assert read_choice("Probably the british one", ["american", "british"], labels={"british": "UK"}) == 1
    assert read_choice("the UK", ["american", "british"], labels={"british": "UK"}) == 1
    with pytest.raises(ValueError, match="`options` must be a non-empty list of option texts"):
        read_choice("B", [])
    with pytest.raises(TypeError, match="`labels` must map option texts to other names"):
        read_choice("B", OPTS, labels=["x"])


def test_every_scorer_reads_through_it() -> None:
    # the names the scorers use are the reader (one implementation)
    assert parse_choice is read_choice or parse_choice("option 2", OPTS) == read_choice("option 2", OPTS)
    assert parse_rating("I'd rate it a four", 1, 5) == 4 and parse_rating("Rating: 3.5", 1, 5) is None
    assert mcq_correct("**B**", OPTS, 2) == (1.0, "ok")


def test_number_reader_with_named_points() -> None:
    levels = ("Keep it safe", "Some risk", "A lot of risk")
    r = number_reader(1, 3, what="risk", options=levels)
    assert isinstance(r, NumberReader) and r.name == "risk read from the reply (1-3, named points)"
    assert [r(t) for t in ["1. Some risk", "3", "Answer: 2", "A lot of risk.", "I'd rate it a 3 out of 3",
                           "1. Keep it safe\n2. Some risk"]] == [2.0, 3.0, 2.0, 3.0, 3.0, None]
    with pytest.raises(ValueError, match="`options` must name each point of the integer scale 1..3 once"):
        number_reader(1, 3, options=levels[:2])
    with pytest.raises(ValueError, match="`what` must be non-empty text"):
        NumberReader(1, 5, what=" ")


# -- text not written for these tests: the study's released answers -------------------------
SUBJECTIVE = DATA / "jiarui-liu-IP" / "case_1" / "subjective" / "results"


def _released(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 30)
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter=";"))


@pytest.mark.skipif(not SUBJECTIVE.is_dir(), reason="../shared/data not present")
@pytest.mark.parametrize("name", ["gpt_results.csv", "results_llama7B.csv", "results_vicuna13B.csv"])
def test_released_answers_read_as_the_authors_matched_them(name: str) -> None:
    """GPT-4 wrote "(D), 7." and Llama "D": read as a letter, it is the option the authors matched."""
    rows = _released(SUBJECTIVE / name)
    read = agree = 0
    for row in rows:
        options = ast.literal_eval(row["options_dict"])  # {"A": text, ...}
        texts = [str(options[k]) for k in sorted(options)]
        for side in ("us", "uk"):
            got = read_choice(row[f"model_answer_{side}"], texts)
            if got is None:
                continue
            read += 1
            match = row[f"model_answer_{side}_option_match"].strip()
            agree += texts[got].startswith(match[:40]) or match.startswith(texts[got][:40])
    assert read >= 0.9 * 2 * len(rows), (read, len(rows))
    assert agree >= 0.98 * read, (agree, read)
