"""Small shared helpers for the generators (random generators, text checks)."""

from __future__ import annotations

import re

import numpy as np

__all__ = ["as_generator", "COUNTRY_CUES", "country_cues", "is_question_like"]


def as_generator(rng: int | np.random.Generator | None) -> np.random.Generator:
    """Turn ``rng`` (an int seed, a Generator or None) into a :class:`numpy.random.Generator`."""
    if rng is None or isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(None if rng is None else int(rng))
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(f"`rng` must be an int, a numpy.random.Generator or None, got {type(rng).__name__}")


COUNTRY_CUES: tuple[str, ...] = (
    "america", "american", "americans", "united states", "u.s.", "u.s.a.", "usa", "us citizen",
    "britain", "british", "brit", "brits", "great britain", "united kingdom", "uk", "u.k.",
    "england", "english people", "englishman", "englishwoman", "scotland", "scottish", "wales", "welsh",
    "london", "new york", "washington", "londoner", "yankee",
)
_CUE_RE = re.compile(r"(?<![\w.])(" + "|".join(re.escape(c) for c in sorted(COUNTRY_CUES, key=len, reverse=True))
                     + r")(?![\w])", re.IGNORECASE)


def country_cues(text: str) -> list[str]:
    """Explicit country / nationality words in ``text`` (an implicit cue must not name the country)."""
    return [m.group(0) for m in _CUE_RE.finditer(text)]


_QWORDS = ("what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "do", "does",
           "did", "can", "could", "should", "would", "will", "was", "were", "has", "have", "had")


def is_question_like(text: str) -> bool:
    """True when ``text`` reads as a question (ends with '?', or a sentence opens with a question word)."""
    t = text.strip()
    if "?" in t:
        return True
    first = re.split(r"\W+", t.lower(), maxsplit=1)[0] if t else ""
    return first in _QWORDS
