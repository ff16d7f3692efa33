"""aae_features: each feature, protection of numbers/names/options, seeding, validation; detect_features."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from ipcausal.interventions import (
    AAE_FEATURES,
    AAE_SPEC,
    aae_features,
    check_pair,
    detect_features,
    esl_errors,
    target_variety,
)
from ipcausal.scm import check_intervention

# one before/after example per feature (our own sentences)
EXAMPLES = {
    "copula_absence": ("I think they are ready for the test.", "I think they ready for the test."),
    "habitual_be": ("She is always busy on weekends.", "She always be busy on weekends."),
    "future_gon": ("We are going to win the game.", "We gon' win the game."),
    "negative_concord": ("He didn't say anything at the meeting.", "He didn't say nothing at the meeting."),
    "aint": ("This plan isn't fair to the workers.", "This plan ain't fair to the workers."),
    "completive_done": ("By noon they have already left the office.", "By noon they done left the office."),
    "third_person_s": ("Every morning she thinks about work.", "Every morning she think about work."),
    "existential_it": ("At the station there are many buses.", "At the station it's many buses."),
    "was_leveling": ("Yesterday they were late again.", "Yesterday they was late again."),
    "possessive_they": ("The kids forgot their homework.", "The kids forgot they homework."),
    "demonstrative_them": ("I bought those shoes last week.", "I bought them shoes last week."),
    "question_no_aux": ("Do you agree with the plan?", "You agree with the plan?"),
    "question_no_inversion": ("Where can I buy a cheap bike?", "Where I can buy a cheap bike?"),
    "g_dropping": ("Why are they shouting at me?", "Why are they shoutin' at me?"),
}


def test_every_feature_has_an_example():
    assert set(EXAMPLES) == set(AAE_FEATURES)
    assert check_intervention(AAE_SPEC).target == "B"


@pytest.mark.parametrize("feature", AAE_FEATURES)
def test_feature_before_after(feature):
    before, after = EXAMPLES[feature]
    r = aae_features(before, rng=0, features=[feature])
    assert r is not None, feature
    assert r.text == after
    assert r.features == (feature,)
    (ed,) = r.edits
    assert before[ed.start:ed.end] == ed.old and ed.new in after
    assert check_pair(before, r.text, allowed=r.edits) == []
    assert feature in detect_features(r.text).aae  # the detector sees what the rule wrote


def test_copula_after_a_noun_and_questions_with_a_name():
    r = aae_features("The bus is late again.", rng=0)
    assert r.text == "The bus late again." and r.edits[0].old == " is"
    assert aae_features("Is the bus late?") is None  # an inverted question keeps its copula
    assert aae_features("It is late.") is None  # "it" keeps its copula
    r = aae_features("Does Keisha like the 3 songs?", rng=0)
    assert r.text == "Keisha like the 3 songs?" and r.features == ("question_no_aux",)
    assert check_pair("Does Keisha like the 3 songs?", r.text, allowed=r.edits) == []


def test_edits_rebuild_the_text_and_case_is_kept():
    text = "There are two reasons. They are often tired, and their parents don't have any time."
    r = aae_features(text, rng=3)
    parts, last = [], 0
    for ed in r.edits:
        assert text[ed.start:ed.end] == ed.old
        parts += [text[last:ed.start], ed.new]
        last = ed.end
    assert "".join(parts + [text[last:]]) == r.text
    assert r.text.startswith("It's two reasons.")  # sentence-initial capital carried over
    assert r.to_dict()["original"] == text and len(r.to_dict()["edits"]) == len(r.edits)


def test_none_when_nothing_applies():
    assert aae_features("Maria paid 20 dollars.") is None
    assert aae_features("") is None
    assert aae_features("Paris, 1998: 4 of 5 (B).", rng=1) is None


def test_seeded_and_n_features():
    text = ("They are always late, there is no bus, and she doesn't know anything about their plans. "
            "Those people were going home. Do you think we are going to win?")
    a = aae_features(text, rng=7, n_features=2)
    assert a == aae_features(text, rng=7, n_features=2)
    assert aae_features(text, rng=np.random.default_rng(7), n_features=2) == a
    assert len(a.edits) == 2 and len(set(a.features)) == 2  # spread over different features first
    texts = {aae_features(text, rng=s, n_features=2).text for s in range(12)}
    assert len(texts) > 3
    full = aae_features(text, rng=0)
    assert len(full.edits) >= 8 and len(set(full.features)) >= 7
    few = aae_features("They are ready.", rng=0, n_features=5)
    assert len(few.edits) == 1


def test_question_stays_a_question_and_options_untouched():
    q = "Do you think they are right?\n1. They are right\n2. They are not right\nAnswer with the number."
    r = aae_features(q, rng=0)
    assert r is not None
    assert r.text.split("\n")[1:3] == q.split("\n")[1:3]  # the option lines are as they were
    assert "?" in r.text
    assert check_pair(q, r.text, allowed=r.edits) == []


def test_urls_and_emails_untouched():
    t = "They are sure that www.example.org/they-are-here is down; write to help@they-are.org if you are stuck."
    r = aae_features(t, rng=0)
    assert "www.example.org/they-are-here" in r.text and "help@they-are.org" in r.text


@pytest.mark.parametrize("bad,exc,match", [
    (dict(text=3), TypeError, "`text` must be a str"),
    (dict(text="x", n_features=0), ValueError, "`n_features` must be a positive integer or None"),
    (dict(text="x", n_features=True), ValueError, "`n_features`"),
    (dict(text="x", n_features=1.5), ValueError, "`n_features`"),
    (dict(text="x", features=["slang"]), ValueError, "`features` must be a non-empty subset"),
    (dict(text="x", features=[]), ValueError, "`features`"),
    (dict(text="x", features="aint"), TypeError, "`features` must be a sequence"),
    (dict(text="They are ready.", rng="seed"), TypeError, "`rng` must be an int"),
])
def test_validation(bad, exc, match):
    text = bad.pop("text")
    with pytest.raises(exc, match=match):
        aae_features(text, **bad)


# ----------------------------------------------------------------- 200 sentences of our own
_NAMES = ["Maria", "Darnell", "Keisha", "Tom", "Aisha", "Jamal", "Lopez", "Chen", "Oakland", "Detroit",
          "Howard University", "Lake Michigan", "Monday", "NASA", "Ms. Brown"]
_TEMPLATES = [
    "{n1} said they are going to pay {x} dollars on {d}.",
    "There are {x} students in {n1}'s class, and they are often tired.",
    "Does {n1} think that {n2} is right about the {x} tickets?",
    "She thinks {n1} doesn't have any of the {x} books.",
    "They have already sent {x} letters to {n1} in {n2}.",
    "Is it true that those {x} workers were late to {n1}?\nA) Yes\nB) No",
    "Do you agree that {n1} isn't ready for the {x}-mile race?",
    "Their team won {x} games while {n1} was away at {n2}.",
    "He says {n1} and {n2} are always arguing about the {x}% raise.",
    "Which city has more people, {n1} or {n2}?\n1. {n1}\n2. {n2}\nAnswer with the number of exactly one option.",
    "We were told by {n1} that there is a {x}-minute delay; see www.example.com/{x} for details.",
    "Those kids don't know anything about the {x} rules {n1} wrote.",
    "Why are they going to meet {n1} at {x} o'clock?",
    "Nobody in {n1} knows how {n2} spent the {x} dollars.",
    "If you are free on {d}, {n1} wants {x} volunteers for the park.",
    "The {x} children are happy because their parents came to {n1}.",
    "Many people believe that {n1} should receive {x} votes, because the government is wrong.",
    "Can you explain why {n1} hasn't paid the {x} bills? (A) yes (B) no",
    "It is important that they are on time for {n1}'s {x} meetings.",
    "You are going to need {x} hours to read what {n1} wrote about {n2}.",
]
_DAYS = ["Monday", "Friday", "Sunday"]


def _sentences(n=200, seed=11):
    gen = np.random.default_rng(seed)
    out = []
    for k in range(n):
        t = _TEMPLATES[k % len(_TEMPLATES)]
        n1, n2 = gen.choice(len(_NAMES), size=2, replace=False)
        x = str(int(gen.choice([2, 3, 7, 12, 40, 150, 1999, 2024])))
        if k % 7 == 3:
            x = f"{x}.5"
        out.append(t.format(n1=_NAMES[n1], n2=_NAMES[n2], x=x, d=_DAYS[k % 3]))
    return out


def _count(items, text):
    return Counter({w: len(re.findall(rf"(?<![\w.]){re.escape(w)}(?![\w])", text)) for w in items})


def _options(text):
    return [ln for ln in text.split("\n") if re.match(r"^\s*(?:[A-Z][.)]|\d{1,2}[.)])\s", ln)] + \
        re.findall(r"\([A-E]\)", text)


def test_200_sentences_numbers_names_options_survive():
    sents = _sentences()
    assert len(sents) == 200 and len(set(sents)) > 150
    n_aae = n_esl = 0
    for k, s in enumerate(sents):
        numbers = re.findall(r"\d+(?:\.\d+)?%?", s)
        for name, gen in (("aae", lambda t: aae_features(t, rng=k)), ("esl", lambda t: esl_errors(t, rng=k))):
            r = gen(s)
            if r is None:
                continue
            n_aae += name == "aae"
            n_esl += name == "esl"
            assert re.findall(r"\d+(?:\.\d+)?%?", r.text) == numbers, (name, s, r.text)
            assert _count(_NAMES, r.text) == _count(_NAMES, s), (name, s, r.text)
            assert _options(r.text) == _options(s), (name, s, r.text)
            assert ("?" in r.text) == ("?" in s)
            assert "www.example.com/" in r.text or "www.example.com/" not in s
            assert check_pair(s, r.text, allowed=r.edits) == []
    assert n_aae >= 160 and n_esl >= 180  # the generators apply to most of them


# ----------------------------------------------------------------- detector
def test_detector_on_standard_text_and_varieties():
    sae = ["We should discuss the plan before the meeting.", "Is it better to rent a home or to buy one?",
           "The students are reading their books.", "Many people work from home."]
    for s in sae:
        assert detect_features(s).aae == (), s
    assert detect_features("My neighbour's favourite colour.").present("uk")
    e = detect_features("Many peoples beleive that the goverment should to help.")
    assert {"number", "spelling", "verb_form"} <= set(e.esl)
    assert detect_features("It ain't fair.").to_dict() == {"aae": ["aint"], "esl": [], "uk": []}
    with pytest.raises(ValueError, match="`variety` must be one of"):
        detect_features("x").present("sae")
    with pytest.raises(TypeError, match="`text` must be a str"):
        detect_features(None)
    assert [target_variety(b) for b in ("aae", "esl", "uk", "us", "sae", 3)] == ["aae", "esl", "uk", None, None, None]


# ----------------------------------------------------------------- property: random texts
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_POOL = ["they", "are", "is", "there", "their", "those", "don't", "any", "anything", "she", "thinks", "have",
         "already", "left", "were", "going", "to", "always", "Do", "you", "agree", "the", "bus", "late", "people",
         "Maria", "NASA", "Lake Erie", "12", "3.5", "1,000", "40%", "www.example.org/a", "isn't", "ready", "books",
         "has", "decided", "often", "busy", "we", "win", "doesn't", "know", "a", "friends", "Does", "Chen", "like"]


@st.composite
def _texts(draw):
    words = draw(st.lists(st.sampled_from(_POOL), min_size=2, max_size=18))
    sentence = " ".join(words)
    end = draw(st.sampled_from([".", "?", "!", ""]))
    text = sentence[:1].upper() + sentence[1:] + end
    if draw(st.booleans()):
        text += "\nA) " + draw(st.sampled_from(_POOL)) + "\nB) they are " + draw(st.sampled_from(_POOL))
    return text


@settings(max_examples=150, deadline=None)
@given(_texts(), st.integers(0, 2**16), st.sampled_from([None, 1, 3]))
def test_random_texts_keep_numbers_names_options(text, seed, n):
    protected_numbers = re.findall(r"\d[\d,.]*%?", text)
    names = [w for w in ("Maria", "NASA", "Lake Erie", "Chen") for _ in range(text.count(w))]
    for r in (aae_features(text, rng=seed, n_features=n), esl_errors(text, rng=seed, n_errors=n or 3)):
        if r is None:
            continue
        assert r.text != text
        assert re.findall(r"\d[\d,.]*%?", r.text) == protected_numbers
        assert [w for w in ("Maria", "NASA", "Lake Erie", "Chen") for _ in range(r.text.count(w))] == names
        assert _options(r.text) == _options(text)
        assert r.text.count("www.example.org/a") == text.count("www.example.org/a")
        assert check_pair(text, r.text, allowed=r.edits) == []
    assert aae_features(text, rng=seed, n_features=n) == aae_features(text, rng=seed, n_features=n)
