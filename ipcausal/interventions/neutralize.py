"""Mitigation rewrites: take a prompt back to a default style, or strip its identity cues (SPEC §10).

These are the text transforms behind :class:`ipcausal.study.mitigation.Mitigation`; each one
returns a :class:`Neutralized` record of what it changed (as ``(old, new)`` edits, so that
:func:`~ipcausal.interventions.check_pair` can mask them) and, where it could not act, why.

=========================  ====================================================================
transform                  what it does
=========================  ====================================================================
:func:`revert_markers`     the recorded marker swaps of a pair reverted (or, for the British
                           source of a British → American pair, made), so both sides are American;
                           a side without a record: :func:`default_markers`
:func:`default_markers`    British marker words → American ones (:func:`swap_markers`, ``to="us"``)
:func:`undo_edits`         reverts the recorded edits of :func:`aae_features` / :func:`esl_errors`
:func:`strip_cues`         removes a belief prefix (:func:`belief_prompt`), a stated age ("I am in
                           my sixties.") and ``[background]`` tags
=========================  ====================================================================

A mitigation keeps its word only if nothing is left: :func:`residual_cues` runs the package's own
detectors over both mitigated sides (:func:`~ipcausal.interventions.find_markers` with the sense
check, :func:`~ipcausal.interventions.detect_features`, the belief, age and tag patterns) and names
every cue still there; a pair with one is never trusted.

What cannot be undone: a rewrite by an LLM (``style_transfer``) records no edits, so there is
nothing to revert; an edit whose recorded ``new`` text is not found where the record puts it
(the text was changed after the generator ran) is not reverted, and the whole undo is refused
for that text, so a half-undone prompt is never sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ipcausal.interventions.belief import BELIEF_PREFIX, belief_statement
from ipcausal.interventions.markers import swap_markers

__all__ = ["Neutralized", "RESIDUAL_KINDS", "STATED_AGE", "default_markers", "residual_cues", "revert_markers",
           "undo_edits", "strip_cues"]

#: The mitigations whose residual cues :func:`residual_cues` can look for.
RESIDUAL_KINDS: tuple[str, ...] = ("markers", "dialect", "strip")

_DECADES = "teens|twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties"
#: A sentence that states the writer's age: "I am in my sixties." (the age case's cue), "I'm in my
#: early thirties.", "I am 67 years old." / "I'm 67." — at the start of the text or after a sentence end.
STATED_AGE = re.compile(r"(?:^|(?<=[.!?][ \t])|(?<=\n))(?:I am|I'm|I’m) "
                        rf"(?:in my (?:(?:early|mid|late)[- ])?(?:{_DECADES})|\d{{1,3}}(?: years old)?)\.[ \t]*",
                        re.IGNORECASE)


@dataclass(frozen=True)
class Neutralized:
    """The result of a mitigation rewrite.

    Attributes
    ----------
    text : str
        The rewritten text (the input when nothing was changed).
    original : str
        The input text.
    edits : tuple of (str, str)
        ``(old, new)`` per change, in text order (the declared edits for ``check_pair``).
    undone : bool
        False when the transform had something to do but could not (``reason`` says why).
    reason : str
        Empty, or why the text was left as it was.
    """

    text: str
    original: str
    edits: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    undone: bool = True
    reason: str = ""

    @property
    def changed(self) -> bool:
        """True when the text differs from the input."""
        return self.text != self.original

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "original": self.original, "edits": [list(e) for e in self.edits],
                "undone": self.undone, "reason": self.reason}


def _text(value: object, name: str = "text") -> str:
    if not isinstance(value, str):
        raise TypeError(f"`{name}` must be a str, got {type(value).__name__}")
    return value


def default_markers(text: str) -> Neutralized:
    """Rewrite British culture markers into American ones (the default style of the culture case).

    Parameters
    ----------
    text : str
        Any text; American and neutral words are left alone.

    Returns
    -------
    Neutralized

    Examples
    --------
    >>> from ipcausal.interventions.neutralize import default_markers
    >>> r = default_markers("Is the colour of the lorry grey?")
    >>> r.text, r.edits
    ('Is the color of the truck gray?', (('colour', 'color'), ('lorry', 'truck'), ('grey', 'gray')))
    """
    text = _text(text)
    sw = swap_markers(text, to="us")
    if sw is None:
        return Neutralized(text=text, original=text)
    return Neutralized(text=sw.text, original=text, edits=tuple((e.old, e.new) for e in sw.edits))


def revert_markers(text: str, edits: Any = None, *, apply: bool = False) -> Neutralized:
    """Take one side of a marker pair to American English by its recorded swaps.

    Parameters
    ----------
    text : str
        The side's text.
    edits : list of records, JSON str or None
        The pair's recorded swaps (``edits_j`` of a markers pair: ``(start, end, old, new)`` with
        positions in the source ``x_i``).  ``None``: no record, so the British markers are swapped
        by :func:`default_markers` (the sense check decides the ambiguous words).
    apply : bool, default False
        ``False``: ``text`` is the British twin and the swaps are undone (back to the American
        source).  ``True``: ``text`` is the British source of a British → American pair and the
        recorded swaps are made (it becomes the American twin).

    Returns
    -------
    Neutralized
        ``undone=False`` with a reason when a recorded swap is not where its record puts it.

    Examples
    --------
    >>> from ipcausal.interventions import swap_markers
    >>> from ipcausal.interventions.neutralize import revert_markers
    >>> us = "Where can I buy cheap gas for my truck?"
    >>> sw = swap_markers(us, to="uk")
    >>> revert_markers(sw.text, [list(e) for e in sw.edits]).text == us
    True
    """
    text = _text(text)
    if edits is None or (isinstance(edits, float) and edits != edits) or edits == "":
        return default_markers(text)
    if not apply:
        return undo_edits(text, edits)
    parts, last, declared = [], 0, []
    for start, end, old, new in _records(edits):
        if start < last or text[start:end] != old:
            return Neutralized(text=text, original=text, undone=False,
                               reason=f"swap {old!r} -> {new!r} not found where it was recorded")
        parts += [text[last:start], new]
        last = end
        declared.append((old, new))
    return Neutralized(text="".join(parts) + text[last:], original=text, edits=tuple(declared))


def _counts(words: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for w in words:
        out[w.lower()] = out.get(w.lower(), 0) + 1
    return out


def residual_cues(kind: str, x_i: str, x_j: str, backgrounds: Sequence[str] = ()) -> tuple[str, ...]:
    """The cues of either variety that the package's own detectors still find after a mitigation.

    ``markers`` (both sides taken to American English): a British marker on either side (read
    clearly or in its marker sense), and a marker of either variety, a word whose sense the check
    cannot decide included, that only one side has (a difference between the sides is a cue).
    ``dialect`` (both sides taken back to Standard English): an AAE feature or an ESL error family
    (:func:`~ipcausal.interventions.detect_features`) on either side.  ``strip``: a belief prefix or a
    ``[background]`` tag of ``backgrounds`` or a stated age (:data:`STATED_AGE`) on either side.
    Empty: nothing left.

    Examples
    --------
    >>> from ipcausal.interventions.neutralize import residual_cues
    >>> residual_cues("markers", "What color is the sofa?", "What color is the sofa?")
    ()
    >>> residual_cues("markers", "Is the sofa gray?", "Is the sofa grey?")
    ("j: British marker 'grey'", "i: American marker 'gray' that the other side lacks")
    >>> residual_cues("dialect", "They are ready.", "They ready.")
    ("j: AAE feature 'copula_absence'",)
    >>> residual_cues("strip", "How should I invest?", "I am in my sixties. How should I invest?")
    ("j: a stated age ('I am in my sixties.')",)
    """
    if kind not in RESIDUAL_KINDS:
        raise ValueError(f"`kind` must be one of {RESIDUAL_KINDS}, got {kind!r}")
    x_i, x_j = _text(x_i, "x_i"), _text(x_j, "x_j")
    out: list[str] = []
    if kind == "markers":
        from ipcausal.interventions.markers import find_markers

        for side, x in (("i", x_i), ("j", x_j)):
            out += [f"{side}: British marker '{w}'" for w in dict.fromkeys(find_markers(x, "uk"))]
        for variety, name in (("uk", "British"), ("us", "American")):  # possible cues, where the sides differ
            found = {s: _counts(find_markers(x, variety, include_ambiguous=True)) for s, x in (("i", x_i), ("j", x_j))}
            for side, other in (("i", "j"), ("j", "i")):
                out += [f"{side}: {name} marker '{w}' that the other side lacks" for w, n in found[side].items()
                        if n > found[other].get(w, 0) and f"{side}: {name} marker '{w}'" not in out]
    elif kind == "dialect":
        from ipcausal.interventions.detect import detect_features

        for side, x in (("i", x_i), ("j", x_j)):
            found = detect_features(x)
            out += [f"{side}: AAE feature '{f}'" for f in found.aae] + [f"{side}: ESL error '{f}'" for f in found.esl]
    else:
        names = [str(b) for b in backgrounds if str(b).strip()]
        tag = re.compile(r"\[(?:" + "|".join(re.escape(b) for b in names) + r")\]", re.IGNORECASE) if names else None
        for side, x in (("i", x_i), ("j", x_j)):
            if belief_statement(x) is not None:
                out.append(f"{side}: a stated belief ('{BELIEF_PREFIX.strip()} ...')")
            out += [f"{side}: a stated age ('{m.group(0).strip()}')" for m in STATED_AGE.finditer(x)]
            if tag is not None:
                out += [f"{side}: tag '{m.group(0)}'" for m in tag.finditer(x)]
    return tuple(out)


def _records(edits: Any) -> list[tuple[int, int, str, str]]:
    if isinstance(edits, str):
        try:
            edits = json.loads(edits)
        except json.JSONDecodeError as exc:
            raise ValueError(f"`edits` must be a JSON list of edit records, got {edits[:40]!r}") from exc
    if edits is None:
        return []
    if not isinstance(edits, Iterable):
        raise TypeError("`edits` must be a list of edit records (feature, start, end, old, new)")
    out = []
    for e in edits:
        e = list(e)
        if len(e) < 4:
            raise ValueError(f"`edits`: each record must end with (start, end, old, new), got {e!r}")
        start, end, old, new = e[-4:]
        if not (isinstance(start, int) and isinstance(end, int) and isinstance(old, str) and isinstance(new, str)):
            raise ValueError(f"`edits`: each record must end with (start, end, old, new), got {e!r}")
        out.append((start, end, old, new))
    return sorted(out)


def undo_edits(text: str, edits: Any, *, source: str | None = None) -> Neutralized:
    """Revert the recorded edits of a rule-based rewrite (AAE features, ESL errors).

    Each record ``(…, start, end, old, new)`` says that ``source[start:end]`` was ``old`` and
    became ``new`` (the form :class:`~ipcausal.interventions.AAEEdit` and
    :class:`~ipcausal.interventions.EslEdit` take, and the builders' ``edits_i``/``edits_j``
    JSON).  The rewritten text is ``source`` with the edits applied; it may sit inside a longer
    ``text`` (a prompt wrapped in an instruction), where it is found and reverted in place.

    Parameters
    ----------
    text : str
        The text that was sent (it contains the rewritten source once).
    edits : list of records, JSON str or None
        The recorded edits; ``None`` or an empty list: nothing to undo.
    source : str, optional
        The rewritten source text as the generator returned it (the builders' ``prompt_i`` /
        ``prompt_j``); default: ``text`` itself.

    Returns
    -------
    Neutralized
        ``undone=False`` with a ``reason`` (and the text unchanged) when the rewritten source is
        not in ``text`` or an edit's ``new`` text is not where its record puts it.

    Examples
    --------
    >>> from ipcausal.interventions import aae_features
    >>> from ipcausal.interventions.neutralize import undo_edits
    >>> a = aae_features("They are ready, and she is always busy.", rng=0)
    >>> undo_edits(a.text, a.edits).text
    'They are ready, and she is always busy.'
    """
    text = _text(text)
    recs = _records(edits)
    if not recs:
        return Neutralized(text=text, original=text)
    src = text if source is None else _text(source, "source")
    at = text.find(src)
    if at < 0:
        return Neutralized(text=text, original=text, undone=False,
                           reason="the rewritten source text is not inside the prompt")
    shift, parts, pos, declared = 0, [], 0, []
    for start, end, old, new in recs:
        s = start + shift  # where the edit's new text starts in the rewritten source
        if s < pos or src[s:s + len(new)] != new:
            return Neutralized(text=text, original=text, undone=False,
                               reason=f"edit {old!r} -> {new!r} not found where it was recorded")
        parts += [src[pos:s], old]
        pos = s + len(new)
        shift += len(new) - (end - start)
        declared.append((new, old))
    parts.append(src[pos:])
    return Neutralized(text=text[:at] + "".join(parts) + text[at + len(src):], original=text, edits=tuple(declared))


def strip_cues(text: str, backgrounds: Sequence[str] = ()) -> Neutralized:
    """Remove stated identity cues: a belief prefix, a stated age and ``[background]`` tags.

    The belief prefix "I believe the following: <statement>. " of
    :func:`~ipcausal.interventions.belief_prompt` is removed whole (the question, its options
    and the instruction stay); so is a sentence that states the writer's age (:data:`STATED_AGE`:
    "I am in my sixties. ", the age case's cue); a tag ``[name]`` for each of ``backgrounds``
    (any case) is removed with the space after it.  Implicit cues (dialect, spelling) are not touched: use
    :func:`default_markers` or :func:`undo_edits` for those.

    Parameters
    ----------
    text : str
        A prompt.
    backgrounds : sequence of str
        The background names whose tags to remove.

    Returns
    -------
    Neutralized

    Examples
    --------
    >>> from ipcausal.interventions import belief_prompt
    >>> from ipcausal.interventions.neutralize import strip_cues
    >>> p = belief_prompt("Owls are reptiles", "What class of animal is an owl?", ["Bird", "Reptile"])
    >>> print(strip_cues(p).text)
    Question: What class of animal is an owl?
    1. Bird
    2. Reptile
    Answer with exactly one option: reply with the number of your choice only.
    >>> strip_cues("[AAE] How do I apply?", ["aae", "sae"]).text
    'How do I apply?'
    >>> strip_cues("I am in my sixties. How should I invest it?").text
    'How should I invest it?'
    """
    text = _text(text)
    if isinstance(backgrounds, str) or not isinstance(backgrounds, Sequence):
        raise TypeError("`backgrounds` must be a sequence of background names")
    out, edits = text, []
    names = [str(b) for b in backgrounds if str(b).strip()]
    if names:  # tags first: a tagged belief prompt ("[b] I believe ...") loses both
        tag = re.compile(r"\[(?:" + "|".join(re.escape(b) for b in names) + r")\][ \t]*", re.IGNORECASE)
        for m in tag.finditer(out):
            edits.append((m.group(0).strip(), ""))
        out = tag.sub("", out)
    st = belief_statement(out)
    if st is not None:
        head = f"{BELIEF_PREFIX}{st}. "
        edits.append((head.strip(), ""))
        out = out[len(head):]
    for m in STATED_AGE.finditer(out):
        edits.append((m.group(0).strip(), ""))
    out = STATED_AGE.sub("", out)
    return Neutralized(text=out, original=text, edits=tuple(edits))
