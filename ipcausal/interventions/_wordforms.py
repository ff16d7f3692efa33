"""Word forms for the marker swap: regular inflections, case transfer, the matching regex.

:func:`forms` generates the regular inflections of a lexicon word for its part of speech
(plural, -ed, -ing, -s; -iser/-isation for -ise/-ize verbs); :func:`transfer_case` writes a
counterpart in the case of the matched text (Color → Colour, COLOR → COLOUR, Parking Lot → Car
Park); :func:`trie_pattern` builds one regex for thousands of forms, longest match first.
"""

from __future__ import annotations

import re

__all__ = ["forms", "transfer_case", "trie_pattern"]

_VOWELS = set("aeiou")


def _plural(w: str) -> str:
    if w.endswith("'s") or w.endswith("'"):
        return ""
    if len(w) > 1 and w.endswith("y") and w[-2].lower() not in _VOWELS:
        return w[:-1] + "ies"
    if w.endswith(("s", "x", "z", "ch", "sh")):
        return w + "es"
    return w + "s"


def _past(w: str) -> str:
    if w.endswith("e"):
        return w + "d"
    if len(w) > 1 and w.endswith("y") and w[-2].lower() not in _VOWELS:
        return w[:-1] + "ied"
    return w + "ed"


def _gerund(w: str) -> str:
    if w.endswith("e") and not w.endswith("ee"):
        return w[:-1] + "ing"
    return w + "ing"


def forms(word: str, pos: str) -> list[str]:
    """Regular inflections of ``word`` (last token of a phrase) for part of speech ``pos``."""
    head, _, last = word.rpartition(" ")
    pre = head + " " if head else ""
    out: list[str] = []
    if pos in ("n", "nv"):
        out.append(_plural(last))
    if pos in ("v", "nv"):
        izey = last.endswith(("ise", "ize", "yse", "yze"))
        if not last.endswith(("yse", "yze")):
            out.append(_plural(last))
        out += [_past(last), _gerund(last)]
        if izey:
            out += [last + "r", last + "rs", last[:-1] + "ation", last[:-1] + "ations"]
    return [pre + f for f in out if f]


def trie_pattern(words: set[str]) -> str:
    """A regex matching any of ``words``, factored by common prefixes (fast with many words).

    Longer alternatives are tried first at every branch, so the longest word wins; the word
    boundary after the group makes the engine backtrack to a shorter word when needed.
    """
    trie: dict[str, dict] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        end = "" in node
        if not alts:
            return ""
        # deeper alternatives first; the end-of-word option last (longest match first)
        body = alts[0] if len(alts) == 1 and not end else "(?:" + "|".join(alts) + ")"
        if end:
            body = "(?:" + "|".join(alts) + ")?"
        return body

    return build(trie)


def transfer_case(matched: str, lexicon_form: str, counterpart: str) -> str:
    """``counterpart`` in the case ``matched`` was written in (lexicon form ``lexicon_form``)."""
    if matched == lexicon_form:
        return counterpart
    letters = [c for c in matched if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return counterpart.upper()
    if matched.islower():
        return counterpart.lower() if lexicon_form != lexicon_form.lower() else counterpart
    words = matched.split(" ")
    if len(words) > 1 and all(w[:1].isupper() for w in words if w):
        return " ".join(w[:1].upper() + w[1:] for w in counterpart.split(" "))
    if matched[:1].isupper():
        return counterpart[:1].upper() + counterpart[1:]
    return counterpart
