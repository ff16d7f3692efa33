"""Scorers: similarity, ratings, MCQ parsing, the unparseable policy and score_pairs."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ipcausal
from ipcausal.backends.base import BackendBase, Choice, Response
from ipcausal.scoring import (
    EmbeddingSimilarity,
    EssayJudge,
    JudgeSimilarity,
    OfflineEssayRater,
    choice_similarity,
    cosine_to_similarity,
    essay_features,
    mcq_correct,
    offline_essay_score,
    parse_choice,
    parse_rating,
    scale_similarity,
    score_pairs,
)


class ScriptedJudge(BackendBase):
    """A real Backend (protocol and BackendBase machinery) that replies from a script."""

    kind, model = "scripted", "scripted-judge"

    def __init__(self, replies):
        super().__init__()
        self.replies = list(replies)
        self.prompts = []

    def _outcomes(self, requests, on_result, concurrency):
        outs = []
        for i, req in enumerate(requests):
            self.prompts.append(req.messages[-1]["content"])
            text = self.replies.pop(0) if self.replies else "no idea"
            out = Response((Choice(text),), self.model)
            on_result(i, out)
            outs.append(out)
        return outs


def pairs(y_i, y_j, **extra):
    return ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "A", "background_j": "B", "x_i": f"q{k}", "x_j": f"q{k}'",
         "y_i": a, "y_j": b, **{c: (v[k] if isinstance(v, list) else v) for c, v in extra.items()}}
        for k, (a, b) in enumerate(zip(y_i, y_j)))


# -- similarity -----------------------------------------------------------------------------
def test_choice_and_scale_similarity():
    assert choice_similarity(" Agree.", "agree") == 1.0
    assert choice_similarity(1, 1.0) == 1.0 and choice_similarity("a", "b") == 0.0
    assert scale_similarity(1, 5, 5) == 0.0 and scale_similarity(3, 3, 7) == 1.0
    assert scale_similarity(2, 3, 5) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="`k` must be an integer >= 2"):
        scale_similarity(1, 2, 1)
    with pytest.raises(ValueError, match="`a` must lie on the scale"):
        scale_similarity(0, 2, 5)
    with pytest.raises(TypeError, match="`b` must be a finite number"):
        scale_similarity(1, float("nan"), 5)
    with pytest.raises(TypeError, match="`a` and `b` must be option labels"):
        choice_similarity([1], 1)


def test_cosine_mapping():
    assert cosine_to_similarity([1, 0, -1, 0.6]).tolist() == pytest.approx([1.0, 0.5, 0.0, 0.8])
    with pytest.raises(ValueError, match="`cosine` must be finite"):
        cosine_to_similarity([np.nan])


@pytest.fixture(scope="module")
def embedder():
    return EmbeddingSimilarity()


def test_embedding_similarity_real_model(embedder):
    s = embedder(["The cat sat on the mat.", "Paris is the capital of France."],
                 ["A cat was sitting on the mat.", "Bananas are rich in potassium."])
    assert s.shape == (2,) and np.all((0 <= s) & (s <= 1))
    assert s[0] > 0.85 and s[1] < 0.65
    assert embedder(["same text"], ["same text"])[0] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match="same length"):
        embedder(["a"], ["a", "b"])
    with pytest.raises(TypeError, match="`a` must be a sequence of texts"):
        embedder("abc", ["x"])


def test_embedding_bad_arguments():
    with pytest.raises(ValueError, match="`batch_size` must be a positive integer"):
        EmbeddingSimilarity(batch_size=0)
    with pytest.raises(FileNotFoundError, match="`model`"):
        EmbeddingSimilarity("/nonexistent/model")


# -- judge ------------------------------------------------------------------------------------
def test_parse_rating():
    assert parse_rating("Rating: 5", 1, 5) == 5
    assert parse_rating(" 2 ", 1, 5) == 2
    assert parse_rating("I would say Rating = 3.", 1, 5) == 3
    assert parse_rating("Rating: 6", 1, 5) is None
    assert parse_rating("they are similar", 1, 5) is None


def test_judge_similarity_maps_and_retries():
    backend = ScriptedJudge(["Rating: 5", "hmm", "Rating: 2", "x", "y", "z"])
    judge = JudgeSimilarity(backend, retries=2)
    outs = judge(["Q1", "Q2", "Q3"], ["a", "b", "c"], ["a", "b2", "c2"])
    assert [o.value for o in outs] == [1.0, 0.25, None]
    assert [o.status for o in outs] == ["ok", "ok", "unparseable"]
    assert outs[1].attempts == 2 and outs[2].attempts == 3
    assert "Answer A: a" in backend.prompts[0] and "Rating" in backend.prompts[0]
    assert judge.judge("Q", None, "b").status == "missing"
    with pytest.raises(TypeError, match="`backend` must implement"):
        JudgeSimilarity(object())
    with pytest.raises(ValueError, match="`retries` must be a non-negative integer"):
        JudgeSimilarity(backend, retries=-1)


def test_score_pairs_judge_records_unparseable():
    backend = ScriptedJudge(["Rating: 4", "nope", "nope", "nope", "Rating: 1"])
    res = score_pairs(pairs(["a", "b", "c"], ["a", "b", "c"]), "judge", backend=backend)
    assert res.pairs["similarity"].tolist() == [0.75, 0.0]
    assert res.counts["unparseable"] == 1 and res.counts["scored"] == 2
    assert res.dropped["similarity_status"].tolist() == ["unparseable"]
    with pytest.raises(ValueError, match="`backend` is required"):
        score_pairs(pairs(["a"], ["b"]), "judge")


# -- essays -----------------------------------------------------------------------------------
ESSAY = """Some people think every city should ban cars from its centre. I agree, because a centre
without cars is quieter, cleaner and safer for the people who live and shop there.

First, traffic noise and fumes harm health. For example, children who walk to school along
busy roads breathe polluted air every day. However, a ban must come with good buses and trams.

In conclusion, although some drivers would lose time, the benefits for most residents are larger."""


def test_offline_essay_rater_is_deterministic_and_ordered():
    short = "Cars are bad."
    assert offline_essay_score(ESSAY) == offline_essay_score(ESSAY)
    assert 1.0 <= offline_essay_score(short) < offline_essay_score(ESSAY) <= 6.0
    f = essay_features(ESSAY, target_words=(60, 110))
    assert set(f) == {"length", "sentences", "vocabulary", "paragraphs", "reasoning"}
    assert all(0 <= v <= 1 for v in f.values()) and f["paragraphs"] == 1.0
    assert OfflineEssayRater(target_words=(60, 110))(ESSAY) > OfflineEssayRater()(ESSAY)
    with pytest.raises(ValueError, match="`target_words`"):
        essay_features(ESSAY, target_words=(10, 5))
    with pytest.raises(TypeError, match="`text` must be text"):
        offline_essay_score(3)


def test_essay_judge_and_user_rater():
    judge = EssayJudge(ScriptedJudge(["Rating: 5", "???", "???", "???"]), retries=2)
    assert judge(ESSAY) == 5.0
    assert judge(ESSAY) is None
    ps = pairs([ESSAY, "short"], ["short", ESSAY])
    res = score_pairs(ps, "essay", rater=len)  # any str -> float is a rater
    assert res.pairs["score_i"].tolist() == [len(ESSAY), 5.0]
    res = score_pairs(ps, "essay")  # offline rater by default
    assert res.pairs.deltas[0] == -res.pairs.deltas[1] < 0
    with pytest.raises(ValueError, match="`rater` returned"):
        score_pairs(ps, "essay", rater=lambda s: float("nan"))
    res = score_pairs(ps, "essay", rater=lambda s: None if s == "short" else 3.0, unparseable="zero")
    assert res.pairs["score_j"].tolist() == [0.0, 3.0] and res.counts["zeroed"] == 2


# -- multiple choice --------------------------------------------------------------------------
OPTS = ["Sydney", "Canberra", "Melbourne", "Perth"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Option 2", 1), ("2", 1), ("2.", 1), ("(B)", 1), ("B) Canberra", 1), ("The answer is: 4.", 3),
        ("Answer: 3", 2), ("It is Canberra, of course.", 1), ("canberra", 1), ("I think option (1).", 0),
        ("I don't know", None), ("The answer is a city.", None), ("answer: C", 2), ("Sydney or Canberra", None), ("Option 9", None), ("", None),
    ],
)
def test_parse_choice(text, expected):
    assert parse_choice(text, OPTS) == expected


def test_parse_choice_yes_no_and_containment():
    assert parse_choice("Yes, definitely.", ["Yes", "No"]) == 0
    assert parse_choice("No.", ["Yes", "No"]) == 1
    assert parse_choice("False", ["True", "False"]) == 1
    assert parse_choice("New York City", ["York", "New York City"]) == 1
    with pytest.raises(ValueError, match="`options` must be a non-empty list"):
        parse_choice("x", [])
    with pytest.raises(TypeError, match="`text` must be text"):
        parse_choice(None, OPTS)


def test_mcq_correct():
    assert mcq_correct("Option 2", OPTS, 2) == (1.0, "ok")
    assert mcq_correct("Option 2", OPTS, "Canberra") == (1.0, "ok")
    assert mcq_correct("Sydney", OPTS, 2) == (0.0, "ok")
    assert mcq_correct(None, OPTS, 2) == (None, "missing")
    assert mcq_correct("hmm", OPTS, 2) == (None, "unparseable")
    with pytest.raises(ValueError, match="outside 1..4"):
        mcq_correct("1", OPTS, 0)
    with pytest.raises(ValueError, match="not exactly one of the options"):
        mcq_correct("1", OPTS, "Paris")


def test_score_pairs_mcq_policies():
    y_i = ["Option 2", "Canberra", "hmm", None]
    y_j = ["Option 1", "2", "Option 2", "2"]
    ps = pairs(y_i, y_j, options=json.dumps(OPTS), correct_option=2)
    res = score_pairs(ps, "mcq")
    assert res.pairs["score_i"].tolist() == [1.0, 1.0] and res.pairs["score_j"].tolist() == [0.0, 1.0]
    assert res.counts == {"requested": 4, "scored": 2, "missing": 1, "unparseable": 1, "failed": 0, "zeroed": 0}
    assert set(res.dropped["status_i"]) == {"unparseable", "missing"}
    zero = score_pairs(ps, "mcq", unparseable="zero")
    assert zero.counts["scored"] == 3 and zero.pairs["score_i"].tolist()[2] == 0.0
    report = ipcausal.test(zero.pairs)
    assert report.groups[0].n == 3
    with pytest.raises(ValueError, match="needs the column `correct_option`"):
        score_pairs(pairs(["1"], ["1"], options=json.dumps(OPTS)), "mcq")


def test_score_pairs_choice_and_scale():
    ps = pairs(["Agree", "Option 2", "zzz"], ["agree", "Agree", "Agree"], options=json.dumps(["Agree", "Disagree"]))
    res = score_pairs(ps, "choice")
    assert res.pairs["similarity"].tolist() == [1.0, 0.0] and res.counts["unparseable"] == 1
    res = score_pairs(pairs(["I'd say 4", "1", "none"], ["2", "1 of 5", "3"]), "scale", k=5)
    assert res.pairs["similarity"].tolist() == [0.5, 1.0] and res.counts["unparseable"] == 1
    with pytest.raises(ValueError, match="needs `k`"):
        score_pairs(ps, "scale")


def test_score_pairs_embedding(embedder):
    ps = pairs(["Use the subway.", None], ["Take the underground.", "x"])
    res = score_pairs(ps, "embedding", embedder=embedder)
    assert len(res.pairs) == 1 and res.counts["missing"] == 1
    assert 0.5 < res.pairs["similarity"].iloc[0] <= 1.0
    assert res.pairs["similarity_status"].tolist() == ["ok"]


def test_score_pairs_validation():
    ps = pairs(["a"], ["b"])
    with pytest.raises(TypeError, match="`pairs` must be a PairSet"):
        score_pairs(ps.to_frame(), "choice")
    with pytest.raises(ValueError, match="`scorer` must be one of"):
        score_pairs(ps, "bleu")
    with pytest.raises(ValueError, match="`unparseable` must be one of 'exclude', 'zero'"):
        score_pairs(ps, "choice", unparseable="drop")
    no_y = ipcausal.PairSet.from_records([{"pair_id": 1, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q"}])
    with pytest.raises(ValueError, match="no `y_i` column"):
        score_pairs(no_y, "choice")
    with pytest.raises(ValueError, match="no pair could be scored"):
        score_pairs(pairs(["?"], ["!"], options=json.dumps(OPTS), correct_option=1), "mcq")
