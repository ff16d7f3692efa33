"""Compose a question that carries culture markers of one variety, and its counterpart.

Two ways to put American/British culture markers into a question that has none:

* :func:`compose_with_markers` — an LLM rewrites the question so that it naturally uses
  marker words of one variety without naming a country (the study's method); the output
  is validated (markers really present, no explicit country or nationality cue — such
  sentences are stripped, else the attempt is retried —, still a question, meaning kept by
  embedding similarity), and the other side of the pair is made with :func:`swap_markers`.
* :func:`frame_with_markers` — offline and seeded: one of our everyday context sentences,
  written with marker words, is put before the unchanged question; the counterpart is the
  same sentence with the markers swapped.  The question itself is byte-identical in both.
"""

from __future__ import annotations

import re

import numpy as np

from ipcausal.backends.base import Backend
from ipcausal.interventions._llm import GeneratedText, ask, check_attempts, check_backend, clean_output
from ipcausal.interventions._util import as_generator, country_cues, is_question_like
from ipcausal.interventions.checks import check_pair
from ipcausal.interventions.markers import VARIETIES, find_markers, marker_lexicon, swap_markers
from ipcausal.interventions.semantic import semantic_similarity
from ipcausal.scm import InterventionSpec, check_intervention
from ipcausal._validate import int_seed

__all__ = ["COMPOSE_SPEC", "FRAME_SPEC", "COMPOSE_MIN_SIMILARITY", "MARKER_FRAMES",
           "compose_with_markers", "frame_with_markers"]

COMPOSE_MIN_SIMILARITY = 0.6
"""Default embedding threshold for a composed question: lower than for a pure rewrite
(:data:`MEANING_THRESHOLD`) because the LLM may add a short context sentence."""

COMPOSE_SPEC = check_intervention(
    InterventionSpec(
        name="compose_with_markers",
        changes="culture-marker words of one variety put into the question by an LLM; counterpart by swap_markers",
        preserves_semantics_by=f"validated rewrite (still a question, no country named, embedding similarity >= "
        f"{COMPOSE_MIN_SIMILARITY}); the two sides differ only in one-to-one marker substitutions",
    )
)
FRAME_SPEC = check_intervention(
    InterventionSpec(
        name="frame_with_markers",
        changes="an everyday context sentence carrying culture markers before the question",
        preserves_semantics_by="the question is byte-identical in both prompts; the two context sentences differ "
        "only in one-to-one marker substitutions",
    )
)

# Our own context sentences, written in American English with unambiguous markers.
MARKER_FRAMES: tuple[str, ...] = (
    "I was thinking about this while sitting in the parking lot, eating a cookie.",
    "My mom asked me this on the way home from the movie theater.",
    "My neighbor and I were discussing this over yogurt and potato chips.",
    "A question my roommate raised while we waited at the gas station:",
    "While I was organizing my favorite catalog of recipes, I wondered:",
    "Something I started to analyze after my summer vacation:",
    "I realized I had no idea about this while pushing the stroller around the neighborhood.",
    "I jotted this down on a gray notepad next to my cell phone:",
    "While I was filling up the station wagon with gasoline, this crossed my mind:",
    "Over donuts with my neighbor, a question came up:",
    "My mom, who loves jewelry in every color, asked me this:",
    "While pushing a shopping cart past the candy store, I wondered about this:",
    "Waiting by the mailbox for a package from my favorite store, I got curious:",
    "After a long day at the community center, my neighbor asked me:",
    "My roommate and I argued about this over french fries and cookies at the movie theater.",
    "While I was looking for my driver's license in the parking lot, a thought came to me:",
)


def _other(variety: str) -> str:
    return "us" if variety == "uk" else "uk"


def _validate_variety(variety: object) -> str:
    if variety not in VARIETIES:
        raise ValueError(f"`variety` must be one of {VARIETIES}, got {variety!r}")
    return str(variety)


def _pair_extra(text_in_variety: str, variety: str) -> dict[str, object] | None:
    counter = swap_markers(text_in_variety, to=_other(variety))
    if counter is None:
        return None
    return {"variety": variety, variety: text_in_variety, _other(variety): counter.text,
            "markers": [c.old for c in counter.swaps], "edits": [list(c) for c in counter.edits]}


def frame_with_markers(question: str, *, variety: str = "uk", rng: int | np.random.Generator | None = None) -> GeneratedText:
    """Put one of our marker-bearing context sentences before ``question`` (offline, seeded).

    Parameters
    ----------
    question : str
        The question (unchanged in both prompts).
    variety : {"uk", "us"}
        The variety whose form is returned as ``.text``; ``.extra`` holds both
        (``extra["uk"]``, ``extra["us"]``) and the markers.
    rng : int, numpy.random.Generator or None
        Picks the context sentence.

    Examples
    --------
    >>> from ipcausal.interventions import frame_with_markers
    >>> r = frame_with_markers("Which sport is most popular?", rng=0)
    >>> r.extra["uk"].endswith("Which sport is most popular?"), r.extra["us"] != r.extra["uk"]
    (True, True)
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError("`question` must be a non-empty str")
    variety = _validate_variety(variety)
    gen = as_generator(rng)
    frame = MARKER_FRAMES[int(gen.integers(len(MARKER_FRAMES)))]
    combined = f"{frame} {question.strip()}"
    as_us = swap_markers(combined, to="us")  # markers already in the question join the American side
    us_text = as_us.text if as_us is not None else combined
    uk = swap_markers(us_text, to="uk")
    assert uk is not None  # every frame carries unambiguous markers (tested)
    uk_text = uk.text
    extra = {"variety": variety, "uk": uk_text, "us": us_text, "frame": frame,
             "markers": [c.new for c in uk.swaps] if variety == "uk" else [c.old for c in uk.swaps],
             "edits": [list(c) for c in uk.edits]}
    return GeneratedText(extra[variety], question, "frame_with_markers", 1, (), None, extra)


_COMMON_SPELLING = ("colour", "favourite", "centre", "theatre", "neighbour", "organise", "realise", "grey", "metre",
                    "flavour", "humour", "behaviour", "travelling", "jewellery", "catalogue", "defence", "labour",
                    "honour", "analyse", "apologise", "recognise", "litre", "kilometre", "neighbourhood", "cosy")
_SYSTEM = "You are an editor who writes natural everyday English. You reply with the rewritten question only."
_TEMPLATE = (
    "Rewrite the question below so that it naturally uses at least {n} of these words or phrases: {words}. "
    "You may rephrase it or put a short everyday context of one or two sentences before it. Keep what is asked "
    "(and any answer options) the same, keep it a question, and do not name or hint at any country, nationality "
    "or city.\n\nQuestion:\n{question}\n\nRewritten question:"
)


def _strip_cues(text: str) -> str:
    sentences = re.split(r"(?<=[.!?])\s+", text)
    kept = [s for s in sentences if not country_cues(s)]
    return " ".join(kept).strip()


def compose_with_markers(
    question: str,
    backend: Backend,
    variety: str = "uk",
    *,
    n_words: int = 12,
    min_markers: int = 1,
    max_attempts: int = 3,
    min_similarity: float = COMPOSE_MIN_SIMILARITY,
    rng: int | np.random.Generator | None = None,
    max_tokens: int = 160,
) -> GeneratedText:
    """Have an LLM rewrite ``question`` with culture markers of ``variety``; make the counterpart.

    Parameters
    ----------
    question : str
        The neutral question.
    backend : ipcausal.backends.Backend
        The model that rewrites.
    variety : {"uk", "us"}
        The variety whose markers the LLM is asked to use.
    n_words : int, default 12
        How many marker words (drawn with ``rng`` from the lexicon words that read clearly in
        ``variety``, so the swap takes them) the prompt offers.
    min_markers : int, default 1
        Markers the output must contain (found by :func:`find_markers`).
    max_attempts : int, default 3
        Generations tried before the item is recorded as failed.
    min_similarity : float, default :data:`COMPOSE_MIN_SIMILARITY`
        Embedding similarity to the input an output must reach (when the model is installed).
    rng : int, numpy.random.Generator or None
        Draws the offered words, then gives the base sampling seed sent to the backend (attempt
        k uses seed + k): the int itself, or one drawn from the Generator after the words.
    max_tokens : int, default 160
        Generation limit per attempt.

    Returns
    -------
    GeneratedText
        ``.text`` is the accepted question in ``variety``; ``.extra`` holds ``"uk"``,
        ``"us"`` (the pair), ``"markers"`` and ``"edits"``.  On failure ``.text`` is
        ``None`` and ``.failures`` lists one reason per attempt.

    Examples
    --------
    >>> from ipcausal.interventions import compose_with_markers
    >>> r = compose_with_markers("How do people commute to work?", backend, "uk")  # doctest: +SKIP
    >>> r.extra["uk"], r.extra["us"]                                              # doctest: +SKIP
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError("`question` must be a non-empty str")
    check_backend(backend)
    variety = _validate_variety(variety)
    for name, v in (("n_words", n_words), ("min_markers", min_markers)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"`{name}` must be a positive integer, got {v!r}")
    attempts = check_attempts(max_attempts)
    if not isinstance(min_similarity, (int, float)) or not -1.0 <= float(min_similarity) <= 1.0:
        raise ValueError(f"`min_similarity` must be a number in [-1, 1], got {min_similarity!r}")
    gen = as_generator(rng)
    lex = marker_lexicon()
    lex = lex[~lex[f"ambiguous_{variety}"]]  # words that read clearly in this variety: the swap takes them
    everyday = lex[(lex["category"] == "vocabulary") | lex["uk"].isin(_COMMON_SPELLING)]
    pool = sorted(w for w in everyday[variety] if not w.isupper())
    words = [pool[i] for i in gen.choice(len(pool), size=min(n_words, len(pool)), replace=False)]
    seed = int_seed(rng if isinstance(rng, (int, np.integer)) else gen)
    prompt = _TEMPLATE.format(n=min_markers, words=", ".join(words), question=question.strip())
    failures: list[str] = []
    for k in range(attempts):
        try:
            raw = ask(backend, prompt, _SYSTEM, attempt=k, seed=seed, max_tokens=max_tokens)
        except Exception as exc:
            failures.append(f"backend error: {type(exc).__name__}: {exc}")
            continue
        cand = clean_output(raw)
        if not cand:
            failures.append("empty output")
            continue
        if country_cues(cand):
            stripped = _strip_cues(cand)
            if not stripped or country_cues(stripped):
                failures.append(f"explicit country cue(s) {country_cues(cand)} could not be stripped")
                continue
            cand = stripped
        if " ".join(cand.lower().split()) == " ".join(question.lower().split()):
            failures.append("unchanged: the output equals the input")
            continue
        if is_question_like(question) and not is_question_like(cand):
            failures.append("not a question any more")
            continue
        lost = [p for p in check_pair(question, cand) if p.kind in ("number", "option", "name", "url") and p.before]
        if lost:  # what the question holds must survive; a context sentence may add words
            failures.append(f"{lost[0].kind} not kept: {lost[0].detail}")
            continue
        unified = swap_markers(cand, to=variety)  # any marker of the other variety joins this one
        text_v = unified.text if unified is not None else cand
        found = find_markers(text_v, variety)
        if len(found) < min_markers:
            failures.append(f"too few {variety} markers: found {found}, need {min_markers}")
            continue
        sim = semantic_similarity(question, text_v)
        if sim is not None and sim < float(min_similarity):
            failures.append(f"meaning not preserved: embedding similarity {sim:.3f} < {min_similarity}")
            continue
        extra = _pair_extra(text_v, variety)
        if extra is None:  # pragma: no cover - find_markers guarantees a swap
            failures.append("counterpart could not be made")
            continue
        extra["offered_words"] = words
        extra["embedding_checked"] = sim is not None
        return GeneratedText(text_v, question, f"compose_with_markers:{variety}", k + 1, tuple(failures), sim, extra)
    return GeneratedText(None, question, f"compose_with_markers:{variety}", attempts, tuple(failures), None,
                         {"variety": variety, "offered_words": words})
