"""Ratings of one response: essay quality and multiple-choice correctness.

* :class:`EssayJudge` — an LLM judge with our own 1–6 rubric (any backend).
* :func:`offline_essay_score` / :class:`OfflineEssayRater` — a deterministic, offline rater used
  by the demo.  It is simple but not a toy: it scores five surface features of an essay and
  says so.  It measures *development and organisation as visible on the surface* (enough
  length for the task, sentences of readable length, varied vocabulary, paragraphing,
  explicit reasoning links), **not** whether the argument is sound, on topic or correct.
* Any callable ``str -> float`` works as an essay rater too (e.g. an external automated essay
  scorer): ``score_pairs(pairs, "essay", rater=my_function)``.
* :func:`mcq_correct` — whether a free-text answer picked the correct option, read by
  :func:`~ipcausal.scoring.read.read_choice` ("Option 2", "2", "(B)", the option's text, yes/no
  for yes/no questions; ``parse_choice`` is the same function); ``None`` when it cannot be told.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ipcausal.scoring._common import MISSING, OK
from ipcausal.scoring.read import norm_text, read_choice
from ipcausal.scoring.similarity import ask_judge

__all__ = [
    "EssayJudge",
    "ESSAY_RUBRIC",
    "OfflineEssayRater",
    "offline_essay_score",
    "essay_features",
    "parse_choice",
    "mcq_correct",
]

ESSAY_RUBRIC = """Rate the essay below on a scale from 1 to 6.
6 - takes a clear, well-reasoned position; ideas developed with apt, specific support; logically
    organised with smooth transitions; precise, varied language; almost no errors.
5 - a clear position with good support; well organised; errors are few and minor.
4 - an adequate position and some relevant support; organisation mostly clear; some errors that
    do not hide the meaning.
3 - a position that is vague or weakly supported; organisation uneven; frequent errors.
2 - little development or support; hard to follow; many errors that get in the way.
1 - no real position, off topic, or barely readable.
Answer with one line: 'Rating: N'."""

_ESSAY_SYSTEM = "You are an experienced writing examiner. You grade essays strictly by the rubric."


class EssayJudge:
    """Essay quality rated 1–6 by an LLM judge with our rubric (:data:`ESSAY_RUBRIC`).

    Calling it returns the rating as a float, or ``None`` when the judge gave no rating after
    ``retries`` extra attempts (recorded as unparseable by :func:`~ipcausal.scoring.score_pairs`).

    Examples
    --------
    >>> judge = EssayJudge(backend)   # doctest: +SKIP
    >>> judge("Cities should ...")    # doctest: +SKIP
    4.0
    """

    def __init__(self, backend: Any, *, retries: int = 2, max_tokens: int = 16, seed: int = 0) -> None:
        from ipcausal.backends.base import Backend

        if not isinstance(backend, Backend):
            raise TypeError("`backend` must implement ipcausal.backends.Backend (a `generate` method)")
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise ValueError(f"`retries` must be a non-negative integer, got {retries!r}")
        self.backend, self.retries, self.max_tokens, self.seed = backend, retries, max_tokens, int(seed)
        self.name = f"LLM essay judge, 1-6 rubric ({getattr(backend, 'model', '?')})"

    def __call__(self, essay: str) -> float | None:
        if not isinstance(essay, str):
            raise TypeError("`essay` must be text")
        prompt = f"{ESSAY_RUBRIC}\n\nEssay:\n{essay}\n\nRating:"
        r, _status, _replies = ask_judge(self.backend, _ESSAY_SYSTEM, prompt, 1, 6, self.retries, self.seed, self.max_tokens)
        return None if r is None else float(r)


_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_SENT = re.compile(r"[^.!?]+[.!?]+|[^.!?]+$")
_LINKS = (
    "because", "therefore", "however", "although", "for example", "for instance", "moreover",
    "furthermore", "in addition", "as a result", "consequently", "on the other hand", "in contrast",
    "first", "second", "finally", "in conclusion", "thus", "since", "while", "whereas", "unless",
)


def essay_features(text: str, *, target_words: tuple[int, int] = (300, 350)) -> dict[str, float]:
    """The five features of :func:`offline_essay_score`, each in [0, 1] (1 = best).

    ``length``: word count against the task's target range (full marks inside it, linear
    drop to 0 at none and at twice the upper bound); ``sentences``: share of sentences of
    8–30 words; ``vocabulary``: moving-average type–token ratio over 50-word windows,
    scaled so 0.75 and above is full; ``paragraphs``: 1 for 3–6 paragraphs, less otherwise;
    ``reasoning``: distinct reasoning links (because, however, for example, …), 6 or more = full.

    Examples
    --------
    >>> f = essay_features("Short text.")
    >>> round(f["length"], 3)
    0.007
    """
    if not isinstance(text, str):
        raise TypeError("`text` must be text")
    lo, hi = target_words
    if not (isinstance(lo, int) and isinstance(hi, int) and 0 < lo <= hi):
        raise ValueError(f"`target_words` must be two positive integers lo <= hi, got {target_words!r}")
    words = [w.lower() for w in _WORD.findall(text)]
    n = len(words)
    if n < lo:
        length = n / lo
    elif n <= hi:
        length = 1.0
    else:
        length = max(0.0, 1.0 - (n - hi) / hi)
    sents = [s for s in _SENT.findall(text) if _WORD.search(s)]
    good = sum(1 for s in sents if 8 <= len(_WORD.findall(s)) <= 30)
    sentences = good / len(sents) if sents else 0.0
    if n == 0:
        vocab = 0.0
    else:
        w = min(50, n)
        ratios = [len(set(words[i : i + w])) / w for i in range(0, n - w + 1, max(1, w // 2))]
        vocab = min(1.0, (sum(ratios) / len(ratios)) / 0.75)
    paras = [p for p in re.split(r"\n\s*\n", text.strip()) if _WORD.search(p)]
    k = len(paras)
    paragraphs = 1.0 if 3 <= k <= 6 else (k / 3 if k < 3 else max(0.0, 1 - (k - 6) / 6))
    low = " " + " ".join(words) + " "
    links = sum(1 for lk in _LINKS if f" {lk} " in low)
    reasoning = min(1.0, links / 6)
    return {"length": length, "sentences": sentences, "vocabulary": vocab, "paragraphs": paragraphs, "reasoning": reasoning}


_WEIGHTS = {"length": 0.3, "sentences": 0.2, "vocabulary": 0.2, "paragraphs": 0.1, "reasoning": 0.2}


def offline_essay_score(text: str, *, target_words: tuple[int, int] = (300, 350)) -> float:
    """A deterministic essay score on 1–6 from surface features (no model, no network).

    score = 1 + 5 × (0.3·length + 0.2·sentences + 0.2·vocabulary + 0.1·paragraphs + 0.2·reasoning),
    features from :func:`essay_features`, rounded to 0.01 (so differences are on a lattice
    and the permutation test can be exact).  It measures how developed and organised an
    essay looks on the surface, not the quality of its argument; use an LLM judge
    (:class:`EssayJudge`) or a real automated essay scorer for that.

    Examples
    --------
    >>> offline_essay_score("")
    1.0
    >>> 1.0 <= offline_essay_score("I think so because it is true. However, not always.") <= 6.0
    True
    """
    f = essay_features(text, target_words=target_words)
    return round(1.0 + 5.0 * sum(_WEIGHTS[k] * f[k] for k in _WEIGHTS), 2)


@dataclass(frozen=True)
class OfflineEssayRater:
    """:func:`offline_essay_score` as a rater object (``name`` for reports, callable ``str -> float``)."""

    target_words: tuple[int, int] = (300, 350)
    name: str = "offline surface-feature essay rater (1-6)"

    def __call__(self, essay: str) -> float:
        return offline_essay_score(essay, target_words=self.target_words)


# -- multiple choice ------------------------------------------------------------------------
#: Which option a free-text answer picked: :func:`ipcausal.scoring.read.read_choice` (one reader for
#: every scorer; "Option 2", "(B)", "2.", the option's text, yes/no), under the name the scorers used.
parse_choice = read_choice


def mcq_correct(text: str | None, options: Any, correct: Any) -> tuple[float | None, str]:
    """Correctness of a multiple-choice answer: (1.0 or 0.0, "ok"), or (None, "unparseable"/"missing").

    ``correct`` is the right option's number **as shown in the prompt, counted from 1**
    (the convention of :func:`ipcausal.interventions.belief_prompt` and of the
    ``correct_option`` column), or the right option's text.

    Examples
    --------
    >>> mcq_correct("Option 1", ["Canberra", "Sydney"], 1), mcq_correct("Sydney", ["Canberra", "Sydney"], "Canberra")
    ((1.0, 'ok'), (0.0, 'ok'))
    >>> mcq_correct("maybe", ["Canberra", "Sydney"], 1)
    (None, 'unparseable')
    """
    opts = list(options) if options is not None and not isinstance(options, str) else []
    if not opts:
        raise ValueError("`options` must be a non-empty list of option texts")
    if isinstance(correct, str):
        match = [i for i, o in enumerate(opts) if norm_text(o) == norm_text(correct)]
        if len(match) != 1:
            raise ValueError(f"`correct` {correct!r} is not exactly one of the options")
        idx = match[0]
    elif isinstance(correct, (int, float)) and not isinstance(correct, bool) and float(correct).is_integer():
        idx = int(correct) - 1
        if not 0 <= idx < len(opts):
            raise ValueError(f"`correct` option number {idx + 1} is outside 1..{len(opts)}")
    else:
        raise TypeError(f"`correct` must be an option index or text, got {correct!r}")
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None, MISSING
    got = read_choice(text, opts)
    if got is None:
        return None, "unparseable"
    return (1.0 if got == idx else 0.0), OK
