"""Pair checks: what must survive when a generator turns ``x_i`` into ``x_j``.

A generator may change the words that carry the background (culture markers, dialect
features, learner errors, a belief statement) and nothing else.  :func:`check_pair`
compares the two sides of a pair on the things a meaning-preserving rewrite never changes:

==================  ==============================================================
kind                what is compared
==================  ==============================================================
``unchanged``       the two texts are the same (after collapsing white space)
``number``          digits ("20", "3.5", "1,000", "$40", "5%") and number words ("three")
``option``          answer-option labels ("1.", "B)", "(c)") in order, and each option's text
``name``            capitalised words that do not open a sentence, and acronyms ("NASA")
``url``             web addresses and e-mail addresses
``question_form``   a question stays a question (and a statement a statement)
``fluency``         (with ``fluency=``) x_j's mean token log-probability is not far below x_i's
                    (:mod:`ipcausal.interventions.fluency`; not run without the local model)
==================  ==============================================================

The generator passes what it changed as ``allowed`` (its edit records, or the changed
strings): those strings are masked in both texts before the comparison, so a declared
marker swap ("Gray" → "Grey") or style edit is never reported.  :func:`protected_spans`
gives the spans of ``x_i`` the rule-based generators leave alone.

A known limit: a name that opens a sentence ("Maria said ...") cannot be told from an
ordinary capitalised first word, so it is compared only when it also occurs inside a
sentence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ipcausal.interventions._util import is_question_like

__all__ = ["PROBLEM_KINDS", "Problem", "check_pair", "protected_spans", "ProtectedSpan"]

PROBLEM_KINDS: tuple[str, ...] = ("unchanged", "number", "option", "name", "url", "question_form", "fluency")

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "billion trillion dozen half first second third fourth fifth sixth seventh eighth ninth tenth once twice"
).split()
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"']+[^\s<>\"'.,;:!?)\]]|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"(?<![\w.])[$£€]?\d+(?:[.,:/]\d+)*(?:%|st|nd|rd|th|s)?(?![\w])"
                     r"|(?<![\w'-])(?:" + "|".join(_NUMBER_WORDS) + r")(?![\w'-])", re.IGNORECASE)
_OPTION_LINE = re.compile(r"^[ \t]*(\(?[A-Za-z]\)|[A-Z][.)]|\(?\d{1,2}[.)])[ \t]+(\S.*?)[ \t]*$", re.MULTILINE)
_INLINE_OPTION = re.compile(r"(?<![\w(])\(([A-Ea-e])\)(?=\s)")
_CAP = re.compile(r"(?<![\w'’-])[A-Z][\w'’-]*")
_SENTENCE_GAP = re.compile(r"(?:^|[.!?:;\n]|^[ \t]*(?:\(?[A-Za-z]\)|[A-Z][.)]|\(?\d{1,2}[.)]))[\s\"'“‘(\[*-]*$")
_PRONOUN_I = {"I", "I'm", "I've", "I'd", "I'll", "I’m", "I’ve", "I’d", "I’ll"}
_MASK = "\u2400"


class ProtectedSpan(NamedTuple):
    """A span of text no rule-based generator may touch: ``text[start:end]`` of ``kind``."""

    kind: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Problem:
    """One thing that did not survive from ``x_i`` to ``x_j``.

    Attributes
    ----------
    kind : str
        One of :data:`PROBLEM_KINDS`.
    detail : str
        What happened, in words.
    before : tuple of str
        The items of ``x_i`` missing from ``x_j``.
    after : tuple of str
        The items of ``x_j`` that ``x_i`` does not have.
    """

    kind: str
    detail: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "detail": self.detail, "before": list(self.before), "after": list(self.after)}


def _sentence_initial(text: str, start: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    head = text[max(line_start, start - 40):start] if start - line_start > 40 else text[line_start:start]
    if not head.strip():
        return True
    return _SENTENCE_GAP.search(head) is not None


def _names(text: str) -> list[tuple[int, int, str]]:
    out = []
    for m in _CAP.finditer(text):
        w = m.group(0).rstrip("'’-")
        if w in _PRONOUN_I or len(w) < 2:  # "I", and single capitals (an article, an option letter)
            continue
        letters = [c for c in w if c.isalpha()]
        acronym = len(letters) > 1 and all(c.isupper() for c in letters)
        if acronym or not _sentence_initial(text, m.start()):
            out.append((m.start(), m.start() + len(w), w))
    # a sentence-initial capitalised word that also occurs capitalised inside a sentence is a name too
    inside = {w for _, _, w in out}
    for m in _CAP.finditer(text):
        w = m.group(0).rstrip("'’-")
        if w in inside and (m.start(), m.start() + len(w), w) not in out:
            out.append((m.start(), m.start() + len(w), w))
    return sorted(out)


def protected_spans(text: str) -> list[ProtectedSpan]:
    """The spans of ``text`` a rule-based generator must leave alone, in text order.

    Numbers, web and e-mail addresses, answer-option lines (label and text), and
    capitalised names (see the module notes).

    Parameters
    ----------
    text : str
        The source text.

    Returns
    -------
    list of ProtectedSpan

    Examples
    --------
    >>> from ipcausal.interventions import protected_spans
    >>> [(p.kind, p.text) for p in protected_spans("They paid Maria 20 dollars.")]
    [('name', 'Maria'), ('number', '20')]
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str, got {type(text).__name__}")
    spans = [ProtectedSpan("url", m.start(), m.end(), m.group(0)) for m in _URL.finditer(text)]
    spans += [ProtectedSpan("option", m.start(), m.end(), m.group(0)) for m in _OPTION_LINE.finditer(text)]
    spans += [ProtectedSpan("option", m.start(), m.end(), m.group(0)) for m in _INLINE_OPTION.finditer(text)]
    spans += [ProtectedSpan("number", m.start(), m.end(), m.group(0)) for m in _NUMBER.finditer(text)]
    spans += [ProtectedSpan("name", s, e, w) for s, e, w in _names(text)]
    return sorted(spans, key=lambda p: (p.start, p.end))


def overlaps_protected(spans: list[ProtectedSpan], start: int, end: int) -> bool:
    """True when ``[start, end)`` touches one of ``spans`` (a URL's or a line's inside counts)."""
    return any(start < p.end and p.start < end for p in spans)


def _allowed_strings(allowed: object) -> list[str]:
    if allowed is None:
        return []
    if isinstance(allowed, str) or not isinstance(allowed, Iterable):
        raise TypeError("`allowed` must be an iterable of strings, (old, new) pairs or edit records "
                        f"(objects with `old` and `new`), got {type(allowed).__name__}")
    out: list[str] = []
    for a in allowed:
        if isinstance(a, str):
            out.append(a)
        elif hasattr(a, "old") and hasattr(a, "new"):
            out += [str(a.old), str(a.new)]
        elif isinstance(a, (tuple, list)) and len(a) >= 2 and all(isinstance(x, str) for x in a[-2:]):
            out += [a[-2], a[-1]]  # (old, new) or an edit record as a list (..., old, new)
        else:
            raise TypeError("`allowed` must hold strings, (old, new) pairs or edit records with `old`/`new`, "
                            f"got {a!r}")
    return sorted({s.strip() for s in out if s and s.strip()}, key=len, reverse=True)


def _mask(text: str, strings: list[str]) -> str:
    for s in strings:
        left = r"(?<!\w)" if s[:1].isalnum() else ""
        right = r"(?!\w)" if s[-1:].isalnum() else ""
        text = re.sub(left + re.escape(s) + right, _MASK, text)
    return text


def _multiset_problem(kind: str, what: str, a: list[str], b: list[str]) -> Problem | None:
    ca, cb = Counter(a), Counter(b)
    lost, new = sorted((ca - cb).elements()), sorted((cb - ca).elements())
    if not lost and not new:
        return None
    bits = []
    if lost:
        bits.append(f"{what} {', '.join(repr(x) for x in lost)} of x_i missing from x_j")
    if new:
        bits.append(f"x_j has {what} {', '.join(repr(x) for x in new)} that x_i lacks")
    return Problem(kind, "; ".join(bits), tuple(lost), tuple(new))


def _name_problem(a: str, b: str) -> Problem | None:
    """Names of one side that the other side lacks as a capitalised word (anywhere, a sentence start too)."""
    na, nb = Counter(w for _, _, w in _names(a)), Counter(w for _, _, w in _names(b))
    caps_a = Counter(m.group(0).rstrip("'’-") for m in _CAP.finditer(a))
    caps_b = Counter(m.group(0).rstrip("'’-") for m in _CAP.finditer(b))
    lost, new = sorted((na - caps_b).elements()), sorted((nb - caps_a).elements())
    if not lost and not new:
        return None
    bits = []
    if lost:
        bits.append(f"name(s) {', '.join(repr(x) for x in lost)} of x_i missing from x_j")
    if new:
        bits.append(f"x_j has name(s) {', '.join(repr(x) for x in new)} that x_i lacks")
    return Problem("name", "; ".join(bits), tuple(lost), tuple(new))


def _question(text: str) -> bool:
    return is_question_like(text)


def check_pair(x_i: str, x_j: str, *, allowed: Iterable[Any] | None = (), fluency: str | None = None) -> list[Problem]:
    """The problems of a generated pair: what of ``x_i`` did not survive into ``x_j``.

    Parameters
    ----------
    x_i, x_j : str
        The source text and the generated one.
    allowed : iterable, optional
        What the generator declares it changed: strings, ``(old, new)`` pairs, or edit
        records with ``old``/``new`` (:class:`~ipcausal.interventions.EslEdit`,
        :class:`~ipcausal.interventions.AAEEdit`, :class:`~ipcausal.interventions.MarkerChange`,
        or their list forms from a pair file).  These strings are masked in both texts first.
    fluency : {"markers", "aae", "esl"}, optional
        Also run the fluency check with that family's threshold
        (:func:`~ipcausal.interventions.fluency.check_fluency`).  Skipped — no problem reported,
        and nothing claimed — when the local model is not installed
        (:func:`~ipcausal.interventions.fluency.fluency_available` says which).

    Returns
    -------
    list of Problem
        Empty when the pair is clean; at most one problem per kind, in the order of
        :data:`PROBLEM_KINDS`.

    Examples
    --------
    >>> from ipcausal.interventions import check_pair
    >>> check_pair("Is the gray car 20 years old?", "Is the grey car 20 years old?", allowed=[("gray", "grey")])
    []
    >>> [p.kind for p in check_pair("Should Ana pay 20 dollars?", "Ana should pay 25 dollars.")]
    ['number', 'question_form']
    """
    for name, v in (("x_i", x_i), ("x_j", x_j)):
        if not isinstance(v, str):
            raise TypeError(f"`{name}` must be a str, got {type(v).__name__}")
    strings = _allowed_strings(allowed)
    if " ".join(x_i.split()) == " ".join(x_j.split()):
        return [Problem("unchanged", "x_j is the same text as x_i: the pair intervenes on nothing")]
    mi, mj = _mask(x_i, strings), _mask(x_j, strings)
    problems: list[Problem] = []
    num = _multiset_problem("number", "number(s)", [m.group(0).lower() for m in _NUMBER.finditer(mi)],
                            [m.group(0).lower() for m in _NUMBER.finditer(mj)])
    if num:
        problems.append(num)
    oi, oj = list(_OPTION_LINE.finditer(mi)), list(_OPTION_LINE.finditer(mj))
    li = [m.group(1) for m in oi] + [f"({m.group(1)})" for m in _INLINE_OPTION.finditer(mi)]
    lj = [m.group(1) for m in oj] + [f"({m.group(1)})" for m in _INLINE_OPTION.finditer(mj)]
    if li != lj:
        lost = tuple(x for x in li if x not in lj)
        new = tuple(x for x in lj if x not in li)
        problems.append(Problem("option", f"answer-option labels changed: {li} in x_i, {lj} in x_j", lost, new))
    else:
        changed = [(a.group(2), b.group(2)) for a, b in zip(oi, oj) if " ".join(a.group(2).split()) !=
                   " ".join(b.group(2).split())]
        if changed:
            problems.append(Problem("option", f"the text of {len(changed)} answer option(s) changed",
                                    tuple(a for a, _ in changed), tuple(b for _, b in changed)))
    names = _name_problem(mi, mj)
    if names:
        problems.append(names)
    urls = _multiset_problem("url", "address(es)", [m.group(0) for m in _URL.finditer(mi)],
                             [m.group(0) for m in _URL.finditer(mj)])
    if urls:
        problems.append(urls)
    qi, qj = _question(x_i), _question(x_j)
    if qi != qj:
        problems.append(Problem("question_form", "x_i is a question and x_j is not" if qi
                                else "x_i is a statement and x_j reads as a question"))
    if fluency is not None:
        from ipcausal.interventions.fluency import check_fluency

        fl = check_fluency(x_i, x_j, family=fluency)
        if fl is not None and not fl.fluent:
            problems.append(Problem("fluency", fl.detail, (f"{fl.source:.3f}",), (f"{fl.twin:.3f}",)))
    return problems
