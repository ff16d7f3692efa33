"""The sense check of the marker swap (issue 29): a word is swapped only where it reads as the marker.

The sentences are our own; the labelled set of benchmarks/data/sense_sentences*.jsonl holds each
ambiguous word in each of its senses, and no word read in its other sense may ever be swapped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ipcausal.interventions import decide_sense, marker_senses, swap_markers, tagger_available
from ipcausal.interventions.senses import sense_table

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
pytestmark = pytest.mark.skipif(not tagger_available(), reason="the sense tagger (ipcausal[senses]) is not installed")


@pytest.mark.parametrize(("text", "to", "expected"), [
    ("Can you recommend a good movie for the weekend?", "uk", "Can you recommend a good film for the weekend?"),
    ("How can I save money on gas for my truck?", "uk", "How can I save money on petrol for my lorry?"),
    ("Where can I find cheap diapers?", "uk", "Where can I find cheap nappies?"),
    ("Open a can of beans for the chili.", "uk", "Open a tin of beans for the chili."),
    ("We plant bulbs every fall, but I fall over the rake.", "uk", "We plant bulbs every autumn, but I fall over the rake."),
    ("Teach my son to ride without training wheels.", "uk", "Teach my son to ride without stabilisers."),
    ("Can I deposit a check at the bank? The check at dinner was high.", "uk",
     "Can I deposit a cheque at the bank? The bill at dinner was high."),
    ("Our flat is small and the road outside is flat.", "us", "Our apartment is small and the road outside is flat."),
    ("Strike a match to watch the football match.", "us", "Strike a match to watch the soccer game."),
])
def test_the_sentence_decides(text: str, to: str, expected: str) -> None:
    assert swap_markers(text, to=to).text == expected


@pytest.mark.parametrize("text", ["Can you check the oil?", "My gas bill went up this winter.",
                                  "The elephant raised its trunk.", "Toddlers tire quickly on long walks."])
def test_the_other_sense_is_never_swapped_even_when_allowed(text: str) -> None:
    assert swap_markers(text, to="uk") is None and swap_markers(text, to="uk", include_ambiguous=True) is None
    senses = {d.sense for d in marker_senses(text, "uk")}
    assert "other" in senses and "marker" not in senses


def test_decisions_say_why() -> None:
    (d,) = marker_senses("Can you help?", "uk")
    assert (d.word, d.sense, d.target, d.reason) == ("Can", "other", None, "read as an auxiliary verb (MD) here")
    (g,) = marker_senses("Is it cheaper to buy gas in the morning?", "uk")
    assert (g.sense, g.reason) == ("undecided", "no cue of either sense in the sentence")
    (t,) = marker_senses("Put it in the trunk of the car.", "uk")
    assert (t.sense, t.target, t.reason) == ("marker", "boot", "'trunk of the car'")
    (c,) = marker_senses("Hang the coats in the closet.", "uk")
    assert (c.sense, c.target) == ("marker", "wardrobe")


def _labelled(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines()]


@pytest.mark.parametrize("name", ["sense_sentences.jsonl", "sense_sentences_heldout.jsonl"])
def test_no_labelled_other_sense_is_swapped(name: str) -> None:
    """On text not written for this test's assertions: every word in its other sense stays, allowed or not."""
    rows = _labelled(name)
    assert len(rows) >= 60 and {r["sense"] for r in rows} == {"marker", "other"}
    swapped_marker = 0
    for r in rows:
        to = "uk" if r["read"] == "us" else "us"
        m = re.search(rf"(?<!\w){re.escape(r['word'])}\w*", r["text"], re.IGNORECASE)
        hits = lambda sw: [c for c in (sw.swaps if sw else ()) if c.start < m.end() and m.start() < c.end]  # noqa: E731
        if r["sense"] == "other":
            decided = [d for d in marker_senses(r["text"], to) if d.start < m.end() and m.start() < d.end]
            assert not hits(swap_markers(r["text"], to=to)), r["text"]
            if decided and decided[0].sense == "other":
                assert not hits(swap_markers(r["text"], to=to, include_ambiguous=True)), r["text"]
        else:
            swapped_marker += bool(hits(swap_markers(r["text"], to=to)))
    assert swapped_marker >= 0.75 * sum(r["sense"] == "marker" for r in rows)


def test_the_sense_table_and_validation() -> None:
    t = sense_table()
    assert len(t) >= 60 and set(t["otherwise"]) == {"marker", "undecided"} and set(t["read"]) == {"us", "uk"}
    with pytest.raises(ValueError, match=r"`read` must be 'us' or 'uk', got 'au'"):
        decide_sense("Can you?", 0, 3, "au", [("can", "tin", "n")])
    with pytest.raises(ValueError, match=r"`start`, `end` must be a span of `text`, got 5, 2"):
        decide_sense("Can you?", 5, 2, "us", [("can", "tin", "n")])
    with pytest.raises(ValueError, match=r"`candidates` must name at least one lexicon entry"):
        decide_sense("Can you?", 0, 3, "us", [])
    with pytest.raises(TypeError, match=r"`text` must be a str, got int"):
        decide_sense(3, 0, 1, "us", [("can", "tin", "n")])
