"""Culture-marker substitution between British and American English.

The lexicon (``ipcausal/data/markers.csv``, written for this project) lists pairs of
British (``uk``) and American (``us``) words: spelling variants (colour/color,
organise/organize, centre/center, travelled/traveled, ...) and everyday vocabulary
(lorry/truck, biscuit/cookie, car park/parking lot, ...).  Ambiguity is flagged per
direction, because a word is read in one variety: ``ambiguous`` is ``uk`` when only the
British word has another everyday sense or more than one American counterpart ("flat" is
also "level": "apartment" → "flat" is made, "flat" → "apartment" is not), ``us`` for the
mirror case (tyre → tire, never tire → tyre), ``true`` when neither direction is safe
(bill/check).  A pair is left out of a swap by default when the word being *read* is
ambiguous.

:func:`swap_markers` rewrites every marker of one variety into the other: whole words
only, longest match first, case kept, regular inflections (plural, possessive, -ed, -ing,
-s, -iser, -isation), punctuation-adjacent words, and an indefinite article before a
swapped word made to agree with it ("an apartment" → "a flat").  The mapping of the
entries unambiguous both ways is one-to-one, so a round trip uk → us → uk restores a text
that uses only those.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import NamedTuple

import pandas as pd

from ipcausal.interventions._articles import article_change
from ipcausal.interventions._wordforms import forms, transfer_case, trie_pattern
from ipcausal.interventions.senses import SenseDecision
from ipcausal.scm import InterventionSpec, check_intervention

__all__ = ["MarkerChange", "MarkerSwap", "MARKER_SPEC", "marker_lexicon", "swap_markers", "find_markers", "marker_senses",
           "VARIETIES"]

VARIETIES: tuple[str, ...] = ("uk", "us")
_POS = ("n", "v", "nv", "x")

MARKER_SPEC = check_intervention(
    InterventionSpec(
        name="swap_markers",
        changes="American/British culture-marker words (spelling and vocabulary), one for one",
        preserves_semantics_by="one-to-one substitution of synonymous word pairs from a fixed lexicon; "
        "pairs whose source word is ambiguous excluded; indefinite articles made to agree; "
        "every change recorded as (start, end, old, new)",
    )
)


class MarkerChange(NamedTuple):
    """One substitution: ``text[start:end]`` (original text) was ``old`` and became ``new``."""

    start: int
    end: int
    old: str
    new: str


@dataclass(frozen=True)
class MarkerSwap:
    """The result of :func:`swap_markers`.

    Attributes
    ----------
    text : str
        The rewritten text.
    original : str
        The input text.
    to : str
        The target variety (``"uk"`` or ``"us"``).
    swaps : tuple of MarkerChange
        ``(start, end, old, new)`` per marker word swapped; positions refer to ``original``.
    articles : tuple of MarkerChange
        Indefinite articles changed to agree with the new word ("an" → "a" before
        "apartment" → "flat"), in the same form; positions refer to ``original``.
    senses : tuple of SenseDecision
        How each ambiguous marker word met was read (:mod:`ipcausal.interventions.senses`).

    ``edits`` is the generator's record, as on every generator's result
    (:class:`~ipcausal.interventions.aae.AAEResult`, :class:`~ipcausal.interventions.esl.EslResult`):
    the swaps with each article joined to its word.
    """

    text: str
    original: str
    to: str
    swaps: tuple[MarkerChange, ...] = field(default_factory=tuple)
    articles: tuple[MarkerChange, ...] = field(default_factory=tuple)
    senses: tuple[SenseDecision, ...] = field(default_factory=tuple, compare=False)

    @property
    def changes(self) -> tuple[MarkerChange, ...]:
        """:attr:`swaps`, under the name it had before 0.1 (deprecated, goes in 0.3)."""
        import warnings

        warnings.warn("`MarkerSwap.changes` was renamed `MarkerSwap.swaps` in ipcausal 0.1; the old name goes in "
                      "0.3", DeprecationWarning, stacklevel=2)
        return self.swaps

    @property
    def edits(self) -> tuple[MarkerChange, ...]:
        """Every edit: the swaps, with each article edit joined to the word after it.

        ``("an apartment", "a flat")`` instead of ``("apartment", "flat")`` and ``("an", "a")``:
        the spans a checker should treat as the declared edit.

        Examples
        --------
        >>> from ipcausal.interventions import swap_markers
        >>> r = swap_markers("We rent an apartment.", to="uk")
        >>> r.swaps, r.articles
        ((MarkerChange(start=11, end=20, old='apartment', new='flat'),), (MarkerChange(start=8, end=10, old='an', new='a'),))
        >>> r.edits
        (MarkerChange(start=8, end=20, old='an apartment', new='a flat'),)
        """
        out: list[MarkerChange] = []
        arts = list(self.articles)
        for c in self.swaps:
            if arts and arts[0].end <= c.start and not self.original[arts[0].end:c.start].strip():
                a = arts.pop(0)
                gap = self.original[a.end:c.start]
                out.append(MarkerChange(a.start, c.end, self.original[a.start:c.end], a.new + gap + c.new))
            else:
                out.append(c)
        return tuple(out)

    @property
    def source(self) -> str:
        """The variety the markers were written in."""
        return "us" if self.to == "uk" else "uk"

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "original": self.original, "to": self.to,
                "edits": [list(c) for c in self.edits], "swaps": [list(c) for c in self.swaps],
                "articles": [list(c) for c in self.articles]}


# --------------------------------------------------------------------------- lexicon
_AMBIGUITY = {"true": (True, True), "false": (False, False), "": (False, False), "uk": (True, False),
              "us": (False, True)}


def _ambiguity(v: object) -> tuple[bool, bool]:
    """``(British word ambiguous, American word ambiguous)`` from the CSV's ``ambiguous`` cell."""
    key = str(v).strip().lower()
    if key not in _AMBIGUITY:
        raise ValueError(f"markers.csv: `ambiguous` must be true, false, uk or us, got {v!r}")
    return _AMBIGUITY[key]


@functools.lru_cache(maxsize=1)
def _lexicon_frame() -> pd.DataFrame:
    with resources.files("ipcausal").joinpath("data", "markers.csv").open("r", encoding="utf-8") as fh:
        df = pd.read_csv(fh, dtype=str, keep_default_na=False)
    need = ["uk", "us", "category", "ambiguous"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"markers.csv lacks column(s) {missing}")
    if "pos" not in df.columns:
        df["pos"] = "x"
    flags = [_ambiguity(v) for v in df["ambiguous"]]
    df["ambiguous_uk"] = [f[0] for f in flags]
    df["ambiguous_us"] = [f[1] for f in flags]
    df["ambiguous"] = df["ambiguous_uk"] | df["ambiguous_us"]
    for c in ("uk", "us", "category", "pos"):
        df[c] = df[c].str.strip()
    return df[["uk", "us", "category", "ambiguous", "ambiguous_uk", "ambiguous_us", "pos"]]


def marker_lexicon(include_ambiguous: bool = True) -> pd.DataFrame:
    """The American/British culture-marker word list shipped with the package.

    Parameters
    ----------
    include_ambiguous : bool, default True
        Keep the pairs with an ambiguous word on either side; ``False`` leaves only the
        pairs that :func:`swap_markers` makes in both directions.

    Returns
    -------
    pandas.DataFrame
        Columns ``uk``, ``us``, ``category`` (``spelling`` or ``vocabulary``),
        ``ambiguous_uk`` (the British word is not swapped when read: it has another
        everyday sense or more than one American counterpart), ``ambiguous_us`` (the same
        for the American word), ``ambiguous`` (either of the two) and ``pos`` (``n`` noun,
        ``v`` verb, ``nv`` both, ``x`` not inflected; says which regular inflections
        :func:`swap_markers` generates).

    Examples
    --------
    >>> from ipcausal.interventions import marker_lexicon
    >>> lex = marker_lexicon()
    >>> len(lex) >= 400
    True
    >>> lex.loc[lex.uk == "colour", "us"].item()
    'color'
    >>> lex.loc[lex.uk == "flat", ["ambiguous_uk", "ambiguous_us"]].values.tolist()
    [[True, False]]
    """
    if not isinstance(include_ambiguous, bool):
        raise TypeError(f"`include_ambiguous` must be a bool, got {type(include_ambiguous).__name__}")
    df = _lexicon_frame()
    if not include_ambiguous:
        df = df[~df["ambiguous"]]
    return df.reset_index(drop=True).copy()


class _Table(NamedTuple):
    mapping: dict[str, str]          # lowercase source form -> target form (lexicon case)
    canonical: dict[str, str]        # lowercase source form -> source form in lexicon case
    protect: frozenset[str]          # lowercase forms left unchanged (target side, ambiguous phrases)
    pattern: re.Pattern[str]


@functools.lru_cache(maxsize=8)
def _table(to: str, include_ambiguous: bool) -> _Table:
    src, dst = ("us", "uk") if to == "uk" else ("uk", "us")
    lex = _lexicon_frame()
    active = lex if include_ambiguous else lex[~lex[f"ambiguous_{src}"]]  # the word read must be clear
    base: list[tuple[str, str]] = []
    generated: list[tuple[str, str]] = []
    for row in active.itertuples(index=False):
        s, d = getattr(row, src), getattr(row, dst)
        if not s or not d or s.lower() == d.lower():
            continue
        base.append((s, d))
        gs, gd = forms(s, row.pos), forms(d, row.pos)
        generated += [(a, b) for a, b in zip(gs, gd) if a.lower() != b.lower()]
    all_dst = {str(v).lower() for v in lex[dst]}
    for row in active.itertuples(index=False):
        all_dst.update(f.lower() for f in forms(getattr(row, dst), row.pos))
    mapping: dict[str, str] = {}
    canonical: dict[str, str] = {}
    conflict: set[str] = set()
    for s, d in base:  # base forms first: they win over generated ones
        k = s.lower()
        if k in mapping and mapping[k].lower() != d.lower():
            conflict.add(k)
        mapping.setdefault(k, d)
        canonical.setdefault(k, s)
    base_keys = set(mapping)
    src_words = {str(v).lower() for v in lex[src]}  # a lexicon word is never read as another's inflection
    for s, d in generated:
        k = s.lower()
        if k in base_keys or k in src_words or k in all_dst:
            continue
        if k in mapping and mapping[k].lower() != d.lower():
            conflict.add(k)
            continue
        mapping.setdefault(k, d)
        canonical.setdefault(k, s)
    for k in conflict:  # only with ambiguous entries included (default source words are unique: tested)
        mapping.pop(k, None)
    protect = set(all_dst)
    protect.update(src_words)  # ambiguous source phrases stay whole
    protect -= set(mapping)
    body = trie_pattern(set(mapping) | protect)
    pattern = re.compile(rf"(?<![\w])(?:{body})(?![\w])", re.IGNORECASE)
    return _Table(mapping, canonical, frozenset(protect), pattern)


class _Scan(NamedTuple):
    clear: _Table                    # the pairs whose source word reads clearly
    # form -> (source word, source form, target word, target form, pos), one per lexicon entry
    ambiguous: dict[str, tuple[tuple[str, str, str, str, str], ...]]
    pattern: re.Pattern[str]


@functools.lru_cache(maxsize=2)
def _scan_table(to: str) -> _Scan:
    """The clear pairs, plus every form of an ambiguous source word with its candidate targets."""
    src, dst = ("us", "uk") if to == "uk" else ("uk", "us")
    clear, lex = _table(to, False), _lexicon_frame()
    lexicon_words = {str(v).lower() for v in lex[src]} | {str(v).lower() for v in lex[dst]}
    from ipcausal.interventions.senses import _rules

    pairs = {(str(a).lower(), str(b).lower()) for a, b in zip(lex[src], lex[dst])}
    for (r, w), rules in _rules().items():
        for rule in rules:
            if r == src and (w, rule.target.lower()) not in pairs:
                raise ValueError(f"senses.csv: {w!r} → {rule.target!r} is not a pair of markers.csv")
    ruled = {w for r, w in _rules() if r == src}
    # what a default swap writes is not read again, unless the sense table reads it ("vest", "bill")
    written = {v.lower() for v in clear.mapping.values()} - ruled
    amb: dict[str, list[tuple[str, str, str, str, str]]] = {}
    for row in lex[lex[f"ambiguous_{src}"]].itertuples(index=False):
        s, d = getattr(row, src), getattr(row, dst)
        if not s or not d or s.lower() == d.lower():
            continue
        pairs = [(s, d)] + [(a, b) for a, b in zip(forms(s, row.pos), forms(d, row.pos)) if a.lower() != b.lower()]
        for k, (a, b) in enumerate(pairs):
            key = a.lower()
            if key in clear.mapping or key in written or (k and key in lexicon_words):
                continue
            if (s, a, d, b, row.pos) not in amb.get(key, []):
                amb.setdefault(key, []).append((s, a, d, b, row.pos))
    body = trie_pattern(set(clear.mapping) | set(clear.protect) | set(amb))
    pattern = re.compile(rf"(?<![\w])(?:{body})(?![\w])", re.IGNORECASE)
    return _Scan(clear, {k: tuple(v) for k, v in amb.items()}, pattern)


def _validate_to(to: object) -> str:
    if to not in VARIETIES:
        raise ValueError(f"`to` must be one of {VARIETIES}, got {to!r}")
    return str(to)


def _scan(text: str, to: str, include_ambiguous: bool) -> tuple[list[MarkerChange], list[MarkerChange],
                                                                  list[SenseDecision]]:
    """The swaps, article edits and sense decisions of :func:`swap_markers`."""
    from ipcausal.interventions.senses import decide_sense

    table = _scan_table(to)
    src = "us" if to == "uk" else "uk"
    swaps: list[MarkerChange] = []
    articles: list[MarkerChange] = []
    senses: list[SenseDecision] = []
    last = 0
    for m in table.pattern.finditer(text):
        key = m.group(0).lower()
        if key in table.clear.mapping:
            canon, target = table.clear.canonical[key], table.clear.mapping[key]
        elif key in table.ambiguous:
            cands = table.ambiguous[key]
            dec = decide_sense(text, m.start(), m.end(), src, [(c[0], c[2], c[4]) for c in cands])
            senses.append(dec)
            pick = [c for c in cands if dec.sense == "marker" and c[2] == dec.target]
            if not pick and dec.sense == "undecided" and include_ambiguous and len({c[2] for c in cands}) == 1:
                pick = list(cands)
            if not pick:
                continue
            canon, target = pick[0][1], pick[0][3]
        else:
            continue
        new = transfer_case(m.group(0), canon, target)
        if new == m.group(0):
            continue
        edit = article_change(text, m.start(), last, canon, target, m.group(0))
        if edit is not None:
            articles.append(MarkerChange(*edit))
        swaps.append(MarkerChange(m.start(), m.end(), m.group(0), new))
        last = m.end()
    return swaps, articles, senses


def _apply(text: str, changes: list[MarkerChange]) -> str:
    parts, last = [], 0
    for c in sorted(changes):
        parts += [text[last:c.start], c.new]
        last = c.end
    return "".join(parts) + text[last:]


def swap_markers(text: str, to: str = "uk", *, include_ambiguous: bool = False) -> MarkerSwap | None:
    """Rewrite every culture marker of one variety of English into the other.

    A word with a marker sense and another everyday sense ("can", "gas", "fall", "trunk") is
    swapped where the sense check reads the marker sense in this sentence
    (:mod:`ipcausal.interventions.senses`), never where it reads the other sense, and left
    alone where it cannot tell (unless ``include_ambiguous``).

    Parameters
    ----------
    text : str
        The input text.
    to : {"uk", "us"}
        The target variety: ``"uk"`` turns American markers into British ones.
    include_ambiguous : bool, default False
        Also substitute the ambiguous words whose sense the check could not decide (a word read
        in its other sense, such as the verb "can", is never substituted).

    Returns
    -------
    MarkerSwap or None
        The rewritten text with its edits, or ``None`` when no marker occurs (the
        generator does not apply).  An indefinite article right before a swapped word
        is made to agree with the new word ("an apartment" → "a flat", "a cashpoint" →
        "an ATM") when it agreed with the old one; those edits are in ``.articles``; the
        sense decisions for the ambiguous words met are in ``.senses``.

    Examples
    --------
    >>> from ipcausal.interventions import swap_markers
    >>> r = swap_markers("What COLOR is the truck's hood? Gray.", to="uk")
    >>> r.text
    "What COLOUR is the lorry's hood? Grey."
    >>> r.swaps[0]
    MarkerChange(start=5, end=10, old='COLOR', new='COLOUR')
    >>> swap_markers("Colorado is entirely landlocked.", to="uk") is None
    True
    >>> swap_markers("An apartment with an elevator", to="uk").text
    'A flat with a lift'
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str, got {type(text).__name__}")
    to = _validate_to(to)
    if not isinstance(include_ambiguous, bool):
        raise TypeError(f"`include_ambiguous` must be a bool, got {type(include_ambiguous).__name__}")
    swaps, articles, senses = _scan(text, to, include_ambiguous)
    if not swaps:
        return None
    return MarkerSwap(text=_apply(text, swaps + articles), original=text, to=to, swaps=tuple(swaps),
                      articles=tuple(articles), senses=tuple(senses))


def marker_senses(text: str, to: str = "uk") -> tuple[SenseDecision, ...]:
    """The sense decisions for every ambiguous marker word of ``text`` read for a swap ``to``.

    Examples
    --------
    >>> from ipcausal.interventions import marker_senses
    >>> from ipcausal.interventions.senses import tagger_available
    >>> [(d.word, d.sense) for d in marker_senses("Can you put gas in my truck?")] if tagger_available() else [
    ...     ('Can', 'other'), ('gas', 'marker')]
    [('Can', 'other'), ('gas', 'marker')]
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str, got {type(text).__name__}")
    return tuple(_scan(text, _validate_to(to), False)[2])


def find_markers(text: str, variety: str, *, include_ambiguous: bool = False) -> list[str]:
    """The marker words of ``variety`` that occur in ``text`` (as written, in order).

    Only words that read unambiguously in ``variety`` count (those :func:`swap_markers` rewrites):
    "apartment" is an American marker, "flat" is not counted as a British one.

    Parameters
    ----------
    text : str
        The text to scan.
    variety : {"uk", "us"}
        Which variety's markers to look for.
    include_ambiguous : bool, default False
        Also count the words whose sense the check could not decide (never a word read in its
        other sense): the possible markers.

    Examples
    --------
    >>> from ipcausal.interventions import find_markers
    >>> find_markers("My neighbour's favourite biscuits", "uk")
    ['neighbour', 'favourite', 'biscuits']
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str, got {type(text).__name__}")
    if variety not in VARIETIES:
        raise ValueError(f"`variety` must be one of {VARIETIES}, got {variety!r}")
    if not isinstance(include_ambiguous, bool):
        raise TypeError(f"`include_ambiguous` must be a bool, got {type(include_ambiguous).__name__}")
    swaps, _, senses = _scan(text, "us" if variety == "uk" else "uk", include_ambiguous)
    found = {c.start: c.old for c in swaps}
    if include_ambiguous:  # an undecided word with two counterparts is a possible marker too
        found.update({d.start: d.word for d in senses if d.sense == "undecided" and d.start not in found})
    return [found[k] for k in sorted(found)]
