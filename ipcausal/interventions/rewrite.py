"""An LLM rewrite into Standard American English: the text transform of the ``rewrite`` mitigation.

:func:`rewrite_default` asks a model (any backend) to restate a prompt in plain Standard American
English, keeping what it says, and accepts a rewrite only when it passes the checks a generator's
output must pass here: not empty, of a similar length (ratio 0.4–2.5), still a question where the
input is one, every number, listed option, name and URL of the input kept
(:func:`~ipcausal.interventions.check_pair`), and — when the embedding model is installed — an
embedding similarity of at least :data:`REWRITE_SIMILARITY` (0.5, below the style transfer's
0.75: a dialect rewrite changes exactly the words an embedding weighs — "the catalogue and the
courgette" against "the catalog and the zucchini" scores 0.645 with all-MiniLM-L6-v2 — while a
rewrite that says something else scores far lower).  An
attempt that fails is retried (greedy first, then sampled with a new seed); when every attempt
fails the text is left as it was and the :class:`~ipcausal.interventions.neutralize.Neutralized`
record says why (``undone=False``), so a rewrite that may have changed the meaning is reported,
never sent.  An output equal to the input is accepted as it is (a prompt already in the default
style needs no change).

Unlike the rule-based transforms, an LLM rewrite records no word-level edits: the caller's
:func:`~ipcausal.interventions.check_pair` of the original against the rewrite masks nothing, so
any lost number, option, name or URL fails the pair.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ipcausal.interventions._llm import ask, check_attempts, check_backend
from ipcausal.interventions.checks import check_pair
from ipcausal.interventions.neutralize import Neutralized
from ipcausal.interventions.semantic import semantic_similarity
from ipcausal.interventions._util import is_question_like
from ipcausal._validate import int_seed

__all__ = ["REWRITE_TEMPLATE", "REWRITE_SYSTEM", "REWRITE_SIMILARITY", "rewrite_default", "check_rewrite"]

#: The embedding similarity a rewrite must reach to its input (when the embedding model is installed).
REWRITE_SIMILARITY = 0.5

#: What the rewriting model is asked (``{text}`` is the prompt).
REWRITE_TEMPLATE = (
    "Restate the text below in plain Standard American English. It must ask for exactly the same thing: keep "
    "every number, name and listed option, keep its line breaks, and keep any closing instruction line as it is. "
    "Change only the spelling, grammar and words that show where the writer is from or which dialect they "
    "speak. If it is already in Standard American English, return it unchanged. Reply with the text only.\n\n"
    "Text:\n{text}"
)
#: The system message of every rewrite request.
REWRITE_SYSTEM = "You are a careful copy editor. You never answer or comment on the text you are given."

_PREAMBLE = re.compile(r"^\s*(sure|okay|ok|certainly|of course|here(?:'s| is| are)|rewritten(?: text)?|"
                       r"restated(?: text)?|revised(?: text)?|output|text)\b[^:\n]*:\s*", re.IGNORECASE)
_KEPT = ("number", "option", "name", "url")


def _clean(raw: str) -> str:
    """The model's reply without a chatty preamble or wrapping quotes; line breaks are kept."""
    t = (raw or "").strip()
    for _ in range(2):
        t = _PREAMBLE.sub("", t, count=1).strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'`“”":
        t = t[1:-1].strip()
    t = t.strip("“”").strip()
    return "\n".join(line.rstrip() for line in t.splitlines())


def check_rewrite(original: str, candidate: str, min_similarity: float = REWRITE_SIMILARITY) -> str | None:
    """Why ``candidate`` is not an acceptable restatement of ``original``, or ``None`` when it is.

    Examples
    --------
    >>> check_rewrite("Is 20 dollars enough for lunch in Paris?", "Is twenty bucks enough for lunch?")[:16]
    'number not kept:'
    >>> check_rewrite("What colour is the sky?", "What color is the sky?", min_similarity=-1.0) is None
    True
    """
    if not candidate.strip():
        return "empty output"
    ratio = len(candidate) / max(1, len(original))
    if not 0.4 <= ratio <= 2.5:
        return f"length changed too much (ratio {ratio:.2f}, allowed 0.4-2.5)"
    if "?" in original and is_question_like(original) and not is_question_like(candidate):
        return "question type changed: the input is a question, the output is not"
    lost = [p for p in check_pair(original, candidate) if p.kind in _KEPT and p.before]
    if lost:
        return f"{lost[0].kind} not kept: {lost[0].detail}"
    if min_similarity > -1.0:
        sim = semantic_similarity(original, candidate)
        if sim is not None and sim < min_similarity:
            return f"meaning not preserved: embedding similarity {sim:.3f} < {min_similarity}"
    return None


def rewrite_default(text: str, backend: Any, *, max_attempts: int = 3, rng: int | np.random.Generator | None = 0,
                    max_tokens: int | None = None, min_similarity: float = REWRITE_SIMILARITY) -> Neutralized:
    """Restate ``text`` in plain Standard American English with an LLM, checked (module docstring).

    Parameters
    ----------
    text : str
        The prompt (or the part of it that carries the cue).
    backend : ipcausal.backends.Backend
        The rewriting model (any backend).
    max_attempts : int
        Generations tried before the text is left as it was (``undone=False``).
    rng : int, numpy.random.Generator or None
        The base sampling seed (attempt k uses seed + k; the first attempt is greedy).
    max_tokens : int, optional
        Generation limit (default: about twice the text's length in tokens, at least 64).
    min_similarity : float
        Embedding similarity a rewrite must reach when the embedding model is installed
        (-1 switches the check off).

    Returns
    -------
    Neutralized
        ``text`` the accepted rewrite (or the input), ``undone`` False with ``reason`` when no
        attempt passed the checks; ``edits`` is empty (an LLM records none).

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> r = rewrite_default("What colour is the sofa?", SimulatedModel())  # it answers "Answer: ..."
    >>> r.undone, r.text, r.reason.split(":")[0]
    (False, 'What colour is the sofa?', 'LLM rewrite rejected (3 attempts)')
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("`text` must be a non-empty str")
    check_backend(backend)
    attempts = check_attempts(max_attempts)
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        raise ValueError(f"`max_tokens` must be a positive integer or None, got {max_tokens!r}")
    if isinstance(min_similarity, bool) or not isinstance(min_similarity, (int, float)) \
            or not -1.0 <= float(min_similarity) <= 1.0:
        raise ValueError(f"`min_similarity` must be a number in [-1, 1], got {min_similarity!r}")
    seed = int_seed(rng)
    budget = max_tokens or max(64, len(text) // 2)
    prompt = REWRITE_TEMPLATE.format(text=text.strip())
    failures: list[str] = []
    for k in range(attempts):
        try:
            raw = ask(backend, prompt, REWRITE_SYSTEM, attempt=k, seed=seed, max_tokens=budget)
        except Exception as exc:  # noqa: BLE001 - a failed request is a recorded failure, not a crash
            failures.append(f"backend error: {type(exc).__name__}: {exc}")
            continue
        cand = _clean(raw)
        if cand.split() == text.split():
            return Neutralized(text, text)
        reason = check_rewrite(text, cand, float(min_similarity))
        if reason is None:
            return Neutralized(cand, text)
        failures.append(reason)
    return Neutralized(text, text, undone=False,
                       reason=f"LLM rewrite rejected ({attempts} attempts): " + "; ".join(failures))
