"""Which kind of cue a British/American marker is: ``spelling`` or ``vocabulary`` (for ``Design(strata=…)``).

The culture builders (:func:`ipcausal.builders.demo_pairs` ``"culture"`` and
:func:`ipcausal.builders.build_ambrqa`) record each pair's markers with :func:`cue_columns`:
``marker_kinds`` (JSON, one kind per marker) and ``cue_kind`` (the one kind, or ``"both"``),
so ``ipcausal.test(pairs, design=Design(strata="cue_kind"))`` reports the effect per cue.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["marker_kind", "cue_columns"]


def cue_columns(markers: list[str]) -> dict[str, Any]:
    """``{"marker_kinds": JSON list, "cue_kind": kind | "both" | None}`` of a pair's British markers.

    Each marker's kind is the lexicon's category (``"unknown"`` for a word it does not list, as
    an LLM-composed marker may be); ``cue_kind`` is ``None`` without markers.

    Examples
    --------
    >>> from ipcausal.builders.cues import cue_columns
    >>> cue_columns(["colour", "lorry"])["cue_kind"], cue_columns(["centre"])["cue_kind"]
    ('both', 'spelling')
    """
    kinds = [_lookup(m) or "unknown" for m in markers]
    return {"marker_kinds": json.dumps(kinds),
            "cue_kind": None if not kinds else kinds[0] if len(set(kinds)) == 1 else "both"}


_SUFFIXES = ("'s", "ies", "es", "s", "ed", "d", "ing")


def marker_kind(old: str, new: str) -> str:
    """``"spelling"`` or ``"vocabulary"``: the lexicon's ``category`` of one marker swap.

    The lexicon (``ipcausal/data/markers.csv``) records each pair's category; a swapped form
    that is inflected (colours, organised, lorries) is looked up without its ending.  A form the
    lexicon does not list falls back on the rule behind the category: a spelling variant differs
    from its counterpart by a few letters (colour/color, organise/organize, centre/center: an edit
    distance of at most 2 and the same first letter), vocabulary otherwise (lorry/truck).

    Examples
    --------
    >>> from ipcausal.builders.cues import marker_kind
    >>> marker_kind("colors", "colours"), marker_kind("truck", "lorry")
    ('spelling', 'vocabulary')
    """
    for word in (new, old):
        kind = _lookup(word)
        if kind is not None:
            return kind
    a, b = old.lower(), new.lower()
    return "spelling" if a[:1] == b[:1] and _distance(a, b) <= 2 else "vocabulary"


def _lookup(word: str) -> str | None:
    """The lexicon's category of ``word`` (either variety; an inflected form without its ending), or None."""
    lex, word = _kinds(), word.lower()
    if word in lex:
        return lex[word]
    for suf in _SUFFIXES:
        if word.endswith(suf):
            stem = word[: -len(suf)]
            for cand in (stem, stem + "y", stem + "e"):
                if cand in lex:
                    return lex[cand]
    return None


def _distance(a: str, b: str) -> int:
    """Levenshtein distance of two short words."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


_KINDS: dict[str, str] = {}


def _kinds() -> dict[str, str]:
    if not _KINDS:
        from ipcausal.interventions import marker_lexicon

        lex = marker_lexicon()
        for col in ("us", "uk"):
            _KINDS.update(zip(lex[col].str.lower(), lex["category"]))
    return _KINDS
