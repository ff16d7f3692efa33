"""The cues :class:`~ipcausal.testing.SimulatedModel` reads in a prompt that carries no tag or marker of its own.

A built-in case signals its background with a cue that the package's own detectors find; the
simulator reads the same cues, in this order, and the first that speaks decides:

1. **a stated belief** (the echo case, :func:`ipcausal.interventions.belief_statement`): the
   statement after "I believe the following: " is looked up among the facts the simulator knows,
   the true and false statements of the embedded Farm demo set (``ipcausal/data/demo_farm.jsonl``):
   ``true_belief`` or ``false_belief``; a belief it does not know it cannot judge (no answer);
2. **a stated age** (the age case, :data:`ipcausal.cases.age.AGE_MARKERS`): "twenties"/"thirties"
   → ``young``, "sixties"/"seventies" → ``old``;
3. **culture markers** (:func:`ipcausal.interventions.find_markers`): more British than American
   markers → ``uk``, more American → ``us``;
4. **dialect features** (:func:`ipcausal.interventions.detect_features`): more AAE than learner
   features → ``aae``, more learner features → ``esl``, none of either → ``sae`` (the unmarked
   variety; it counts only for a simulator with a background named ``sae``).

Every other outcome (a tie, an unknown belief, no cue) is ``None``: the simulator cannot tell.
The simulator reads S (what a pair holds fixed) from the text with the cue taken out
(:func:`read_cue`), so the two prompts of a built-in case's pair differ in B only.
The labels belong to ordered *families* (:data:`FAMILIES`); a label that is not one of the
simulator's backgrounds takes its rank in its family for the shift ``effect · k``, so a
simulator with the default backgrounds still answers an echo prompt with a false belief with
``effect · 1``.  ``american``/``british`` (the simulator's default names) are ``us``/``uk``.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources

__all__ = ["FAMILIES", "read_cue", "rank", "same", "LABELS"]

#: The ordered backgrounds of each cue (rank k shifts by ``effect · k``); the first is unmarked.
FAMILIES: tuple[tuple[str, ...], ...] = (
    ("us", "uk"),
    ("sae", "aae", "esl"),
    ("sae", "esl_light", "esl_heavy"),
    ("true_belief", "false_belief"),
    ("young", "old"),
)
_ALIASES = {"american": "us", "british": "uk"}
#: Every name a cue or the simulator's ``known`` mapping may give (the families' and the aliases).
LABELS: frozenset[str] = frozenset({b for f in FAMILIES for b in f} | set(_ALIASES))
_NORM = re.compile(r"\s+")


def _canon(name: str) -> str:
    low = name.lower()
    return _ALIASES.get(low, low)


def same(a: str, b: str) -> bool:
    """Whether two background names mean the same background (``"british"`` and ``"uk"`` do)."""
    return _canon(a) == _canon(b)


def rank(label: str) -> int | None:
    """The rank of ``label`` in its family (``None`` for a name of no family)."""
    c = _canon(label)
    for fam in FAMILIES:
        if c in fam:
            return fam.index(c)
    return None


def _statement(text: str) -> str:
    return _NORM.sub(" ", text).strip().rstrip(".!;, ").casefold()


@functools.lru_cache(maxsize=1)
def _facts() -> dict[str, str]:
    """statement (normalised) → ``true_belief`` / ``false_belief``, from the embedded Farm demo set."""
    text = resources.files("ipcausal.data").joinpath("demo_farm.jsonl").read_text(encoding="utf-8")
    facts: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip():
            rec = json.loads(line)
            facts[_statement(rec["true_statement"])] = "true_belief"
            facts[_statement(rec["false_statement"])] = "false_belief"
    return facts


@functools.lru_cache(maxsize=1)
def _age_words() -> dict[str, str]:
    from ipcausal.cases.age import AGE_MARKERS

    return {w.lower(): b for b, words in AGE_MARKERS.items() for w in words}


def _vote(counts: dict[str, int]) -> str | None:
    best = max(counts.values())
    winners = [k for k, v in counts.items() if v == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def read_cue(text: str) -> tuple[str | None, str]:
    """The background label the cues of ``text`` point to (module docstring), or ``None``; and the text
    with its cue taken out (what stays the same across a pair: the simulator's S is read from it).

    The cue taken out: a stated belief is dropped (the question stays), British markers are read as
    their American counterparts, age words as the word "age"; dialect features stay (a text holds no
    record of what they replaced).

    Examples
    --------
    >>> read_cue("I am in my sixties. How should I invest?")
    ('old', 'I am in my age. How should I invest?')
    >>> read_cue("Which colour is best?")
    ('uk', 'Which color is best?')
    >>> read_cue("I believe the following: The capital of Australia is Sydney. Question: What is it?")
    ('false_belief', 'Question: What is it?')
    >>> read_cue("They always be late.")[0], read_cue("What is the time?")[0]
    ('aae', 'sae')
    """
    from ipcausal.interventions.belief import BELIEF_PREFIX, belief_statement

    if text.startswith(BELIEF_PREFIX):
        st = belief_statement(text)
        if st is None:
            return None, text
        return _facts().get(_statement(st)), text[len(BELIEF_PREFIX) + len(st) + 2:]
    ages = _age_words()
    found = {"young": 0, "old": 0}
    for w in re.findall(r"[A-Za-z]+", text):
        b = ages.get(w.lower())
        if b is not None:
            found[b] += 1
    if any(found.values()):
        return _vote(found), re.sub(r"[A-Za-z]+", lambda m: "age" if m.group(0).lower() in ages else m.group(0), text)
    from ipcausal.interventions.detect import detect_features
    from ipcausal.interventions.markers import find_markers, swap_markers

    culture = {"uk": len(find_markers(text, "uk")), "us": len(find_markers(text, "us"))}
    if any(culture.values()):
        swapped = swap_markers(text, to="us")
        return _vote(culture), text if swapped is None else swapped.text
    f = detect_features(text)
    dialect = {"aae": len(f.aae), "esl": len(f.esl)}
    return (_vote(dialect) if any(dialect.values()) else "sae"), text
