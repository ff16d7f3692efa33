"""Indefinite articles for swapped words: "an apartment" → "a flat", "a cashpoint" → "an ATM".

The choice of "a" or "an" follows the sound of the next word, not its first letter: a vowel
sound takes "an" ("an hour", "an 18-wheeler", "an ATM", "an MOT"), a consonant sound "a"
("a university", "a one-way street", "a GP", "a European").  The rules here cover the words of
the marker lexicon and the common exceptions; :func:`article_change` applies them to the
article written right before a swapped word.
"""

from __future__ import annotations

import re

__all__ = ["article_change", "indefinite_article"]

_AN_BEFORE_H = ("hour", "honest", "honour", "honor", "heir")
_A_BEFORE_VOWEL = ("uni", "use", "usu", "uti", "ure", "uro", "eu", "ewe", "ufo", "ukul")
_A_WORDS = frozenset({"one", "once"})  # "a one-way street" (but "an onerous task")
_AN_LETTERS = frozenset("AEFHILMNORSX")  # letter names that begin with a vowel sound
_FIRST = re.compile(r"[\"'(\[]*([A-Za-z0-9]+)")
_ARTICLE = re.compile(r"(?<![\w'’.\-])(an?)([ \t]+)$", re.IGNORECASE)


def indefinite_article(phrase: str) -> str | None:
    """``"a"`` or ``"an"`` before ``phrase`` (by the sound of its first word), ``None`` if no word.

    Spoken rules: a vowel sound takes "an" ("an hour", "an 18-wheeler", "an ATM"), a
    consonant sound "a" ("a university", "a one-way street", "a GP").
    """
    m = _FIRST.match(phrase)
    if m is None:
        return None
    core = m.group(1)
    if core[0].isdigit():
        digits = re.match(r"\d+", core).group(0)  # type: ignore[union-attr]
        eight_or_eleven = digits.startswith("8") or (digits[:2] in ("11", "18") and len(digits) in (2, 5, 6))
        return "an" if eight_or_eleven else "a"
    follows = phrase[m.end():m.end() + 1]
    if core.isupper() and (len(core) > 1 or not follows.isalpha()):  # an initialism, letter by letter
        return "an" if core[0] in _AN_LETTERS else "a"
    low = core.lower()
    if low.startswith(_AN_BEFORE_H):
        return "an"
    if low in _A_WORDS or low.startswith(_A_BEFORE_VOWEL):
        return "a"
    return "an" if low[0] in "aeiou" else "a"


def _caps(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return len(letters) > 1 and all(c.isupper() for c in letters)


def article_change(text: str, start: int, floor: int, old_word: str, new_word: str,
                    matched: str) -> tuple[int, int, str, str] | None:
    """``(start, end, old, new)``: the article right before ``text[start:]`` made to agree with
    ``new_word``, if it agreed with ``old_word``; ``None`` otherwise.

    Only ``text[floor:start]`` is searched (nothing before an earlier edit).
    ``old_word`` and ``new_word`` are the lexicon's forms, ``matched`` the word as written.
    An article that did not agree with the old word is left as written (the input's choice).
    """
    want_old, want_new = indefinite_article(old_word), indefinite_article(new_word)
    if want_old is None or want_new is None or want_old == want_new:
        return None
    m = _ARTICLE.search(text, floor, start)
    if m is None or m.group(1).lower() != want_old:
        return None
    art = m.group(1)
    if art.islower():
        new_art = want_new
    elif art == "A":  # "A Cashpoint" -> "An ATM"; shouting "A CASHPOINT" -> "AN ATM"
        shouting = _caps(matched) and not _caps(old_word)
        new_art = want_new.upper() if shouting else want_new.capitalize()
    else:  # "An" / "AN"
        new_art = want_new.upper() if art.isupper() else want_new.capitalize()
    return m.start(1), m.end(1), art, new_art
