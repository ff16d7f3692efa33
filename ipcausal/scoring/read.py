"""Read a number, a rating or a choice out of what a model wrote: the one reader every scorer uses.

Models do not answer in the format they are asked for.  Asked for "Answer: N" they write
"A: 4", "**4**", "4/5", "4 out of 5", "I'd rate it a 4", "Rating: four", or the number inside
a sentence; asked for an option they write "(B)", "option 2", "B) Canberra" or the option's
text.  :func:`read_number` and :func:`read_choice` read all of these and say ``None`` — never
a guess — when a reply names no answer or several.

The rules, in the order they are tried (the first that finds an answer decides):

:func:`read_number` (``low``/``high``: the scale, when there is one)
    1. a **labelled** number: after ``Answer``, ``Final answer`` or ``Rating`` (with or without
       ``:``, ``=``, ``-``, ``is``, ``would be``), after ``Score``, ``Level``, ``Grade`` or ``Risk
       level`` followed by ``:``, ``=``, ``is`` or ``of``, or after a capital ``A`` with a colon
       (``A: 4``); digits or a number word (``four``).  A ``Final …`` label counts first, else
       the first label; a labelled number outside the scale is unparseable (the model did name
       it as its answer);
    2. a **rating phrase**: "rate it (a) 4", "give it a four", "I would say 3";
    3. a **fraction** whose denominator is the top of the scale: "4/5", "4 out of 5";
    4. a reply that **is or starts with** a number ("4", "4.", "4 - it depends", "(4)"),
       unless it starts a numbered list ("1. … 2. …");
    5. the **only number on the scale** in the reply, once the scale's own bounds echoed back
       ("from 1 to 5", "1-5", "1 (no car needed)") are set aside.  Two different numbers on
       the scale, with no label to tell them apart, are unparseable.

:func:`read_choice` (``options``: the option texts, numbered from 1 and lettered from A)
    1. an **explicit** choice: "Option 2", "Answer: (B)", "choice two", "I choose C";
    2. one **letter in parentheses**, "(B)" (several different ones: skipped, they are usually
       the options echoed back);
    3. a reply that **is or starts with** an option number or letter: "2", "2.", "B", "B)",
       "(b)"; a leading capital followed by a word ("A car …") is an article, not a choice;
    4. the **text of exactly one option** (a longer option before one it contains; ``labels``
       add other names for an option);
    5. for a yes/no question, a leading yes/true or no/false;
    6. the **only number** in the reply, when it is an option's number.

Markdown emphasis (``**``, ``__``, backticks) and a Unicode minus are cleaned first.

Examples
--------
>>> from ipcausal.scoring import read_number, read_choice
>>> [read_number(t, low=1, high=5) for t in ["Answer: 4", "A: 4", "**4**", "4/5", "4 out of 5",
...                                          "I'd rate it a 4", "Rating: four"]]
[4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
>>> read_number("On a scale from 1 to 5 I would pick 3, since the bus is rare.", low=1, high=5)
3.0
>>> read_number("Either 2 or 4.", low=1, high=5) is None  # two candidates, no label
True
>>> opts = ["Sydney", "Canberra", "Melbourne"]
>>> [read_choice(t, opts) for t in ["(B)", "option 2", "Answer: C", "It is Canberra.", "maybe"]]
[1, 1, 2, 1, None]
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["read_number", "read_choice", "NumberReader", "number_reader", "norm_text", "NUMBER_WORDS"]

#: The number words the reader knows (in labelled answers, rating phrases and whole replies).
NUMBER_WORDS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10,
}
_WORD = "|".join(NUMBER_WORDS)
_DIGITS = r"[-+]?\d+(?:\.\d+)?"
_VALUE = rf"(?:{_DIGITS}|\b(?i:{_WORD})\b)"
_LABEL = re.compile(
    rf"(?:\b(?i:final\s+answer|final\s+rating|answer|rating)\s*(?i:is|would\s+be|of)?\s*[:=\-]?"
    rf"|\b(?i:score|level|grade|risk\s+level)[ \t]*(?:(?i:is|would\s+be|of)[ \t]*[:=]?|[:=])"
    rf"|(?<![A-Za-z])A[ \t]*[:=])"
    rf"\s*(?:(?i:level|a|an)\s+)?\(?\s*({_VALUE})\s*\)?"
    rf"(?:\s*(?:/|(?i:out\s+of))\s*(\d+))?"
)
_PHRASE = re.compile(
    rf"\b(?i:rate|rating|give|giving|gave|score|put|pick|choose|(?:would|'d|I)\s+say)\s+(?:(?i:it|this|that|them|myself|"
    rf"the\s+\w+|my\s+\w+)\s+)?(?:(?i:at|as)\s+)?(?:(?i:a|an)\s+)?\(?({_VALUE})\)?(?![\w.]*\s*(?:%|percent))"
    rf"(?:\s*(?:/|(?i:out\s+of))\s*(\d+))?"
)
_FRACTION = re.compile(rf"({_DIGITS}|\b(?i:{_WORD})\b)\s*(?:/|(?i:out\s+of))\s*(\d+)")
_LEADING = re.compile(rf"^(?:[\s(\[#>*]|-(?=\s))*({_DIGITS}(?!\d|\.\d|\s*[%=])|(?i:{_WORD})(?=\s*(?:[.!,;:)]|$)))"
                      rf"(?!\s*(?:/|(?i:out\s+of)))")
_ANY = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w%])")
_LIST = re.compile(r"(?:^|\n|\s)2\s*[.)]\s")


def _clean(text: str) -> str:
    t = text.replace("\u2212", "-").replace("\u2013", "-").replace("\u00a0", " ")
    t = re.sub(r"\*\*|__|`+", "", t)
    t = re.sub(r"(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)", "", t)  # *4* emphasis, not "4 * 2"
    return re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", t)  # 5,000 is one number


def _value(token: str) -> float:
    low = token.strip().lower()
    return float(NUMBER_WORDS[low]) if low in NUMBER_WORDS else float(low)


def _check_text(text: Any) -> str:
    if not isinstance(text, str):
        raise TypeError(f"`text` must be text, got {type(text).__name__}")
    return text


def _check_scale(low: Any, high: Any) -> tuple[float | None, float | None]:
    for name, v in (("low", low), ("high", high)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
            raise ValueError(f"`{name}` must be a finite number or None, got {v!r}")
    if low is not None and high is not None and not low < high:
        raise ValueError(f"`low` must be below `high`, got {low!r} and {high!r}")
    return (None if low is None else float(low)), (None if high is None else float(high))


def _echoes(text: str, low: float | None, high: float | None) -> str:
    """``text`` with the scale's own bounds blanked: "from 1 to 5", "1-5", "1 (no car) to 5 (…)",
    "1 = no car …, 5 = essential"."""
    if low is None or high is None:
        return text
    lo, hi = (f"{v:g}" for v in (low, high))
    span = rf"(?<![\w.]){lo}\s*(?:\([^)]*\)\s*)?(?:to|-|through|and)\s*{hi}(?![\w.])(?:\s*\([^)]*\))?"
    out = re.sub(span, " ", text, flags=re.IGNORECASE)
    pair = rf"(?<![\w.]){lo}\s*=([^=]*?)[,;]?\s*(?:and\s+)?{hi}\s*="
    return re.sub(pair, r" \1 ", out, flags=re.IGNORECASE)


def read_number(text: str, *, low: float | None = None, high: float | None = None,
                integer: bool = False) -> float | None:
    """The number a reply gives as its answer (a rating, a level, a score), or ``None``.

    Parameters
    ----------
    text : str
        What the model wrote.
    low, high : float, optional
        The scale: a number outside [low, high] is not an answer on it.  With both given, the
        scale's bounds echoed back in the reply ("from 1 to 5") are not read as answers.
    integer : bool
        Only whole numbers count (a judge's 1–5 rating): "3.5" is unparseable.

    Returns
    -------
    float or None
        ``None`` when the reply names no number on the scale, or several without a label to
        tell which is the answer (the rules: :mod:`ipcausal.scoring.read`).

    Examples
    --------
    >>> read_number("A: 1.15 because the city has buses", low=1, high=5)
    1.15
    >>> read_number("Answer: 7", low=1, high=5) is None  # labelled, but off the scale
    True
    >>> read_number("3.5", low=1, high=5, integer=True) is None
    True
    >>> read_number("It is 12 km, so 4.", low=1, high=5)
    4.0
    """
    text = _check_text(text)
    lo, hi = _check_scale(low, high)
    if not isinstance(integer, bool):
        raise TypeError(f"`integer` must be True or False, got {integer!r}")

    def ok(v: float) -> bool:
        return (lo is None or v >= lo) and (hi is None or v <= hi) and (not integer or float(v).is_integer())

    def top(den: str | None) -> bool:  # a fraction counts when its denominator is the scale's top
        return den is None or hi is None or float(den) == hi

    t = _clean(text)
    labelled = list(_LABEL.finditer(t))
    final = [x for x in labelled if x.group(0).lower().startswith("final")]
    m = (final or labelled or [None])[0]
    if m is not None and top(m.group(2)):
        v = _value(m.group(1))
        return v if ok(v) else None
    for m in _PHRASE.finditer(t):
        v = _value(m.group(1))
        if ok(v) and top(m.group(2)):
            return v
    for m in _FRACTION.finditer(t):
        v = _value(m.group(1))
        if hi is not None and float(m.group(2)) == hi and ok(v):
            return v
    body = _echoes(t, lo, hi)
    m = _LEADING.match(body)
    if m is not None:
        v = _value(m.group(1))
        numbered_list = v == 1 and _LIST.search(body[m.end():]) is not None
        if ok(v) and not numbered_list:
            return v
    found = {float(x) for x in _ANY.findall(body)}
    on_scale = sorted(v for v in found if ok(v))
    if len(on_scale) == 1 and (lo is not None or hi is not None or len(found) == 1):
        return on_scale[0]
    return None


@dataclass(frozen=True)
class NumberReader:
    """:func:`read_number` with its scale, as a rater (``str -> float | None``) with a ``name``.

    Give it to the essay scorer to score a reply by the number it states:
    ``get_scorer("essay", rater=NumberReader(1, 5), bound=4)``.  With ``options`` — one text per
    point of an integer scale ``low``, ``low + 1``, … ``high``, as the prompt lists them — the
    reply is first read as a choice among them (:func:`read_choice`: "3", "Answer: 3", "1. Take
    some risk" is the point named "Take some risk"), and only then as a number.

    Examples
    --------
    >>> reader = NumberReader(1, 5, what="risk level")
    >>> reader("Answer: 2. Keep it safe."), reader.name
    (2.0, 'risk level read from the reply (1-5)')
    >>> named = NumberReader(1, 3, options=("Safe", "Some risk", "Much risk"))
    >>> named("1. Some risk"), named("I'd rate it a 3")
    (2.0, 3.0)
    """

    low: float
    high: float
    what: str = "number"
    integer: bool = False
    options: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        _check_scale(self.low, self.high)
        if not isinstance(self.what, str) or not self.what.strip():
            raise ValueError(f"`what` must be non-empty text, got {self.what!r}")
        if self.options is not None:
            opts = tuple(_options_of(self.options))
            if not (float(self.low).is_integer() and float(self.high).is_integer()) or \
                    len(opts) != int(self.high) - int(self.low) + 1:
                raise ValueError(f"`options` must name each point of the integer scale {self.low:g}..{self.high:g} "
                                 f"once, got {len(opts)} option(s)")
            object.__setattr__(self, "options", opts)

    @property
    def name(self) -> str:
        """What it reads, for reports."""
        named = ", named points" if self.options else ""
        return f"{self.what} read from the reply ({self.low:g}-{self.high:g}{named})"

    def __call__(self, text: str) -> float | None:
        if self.options is not None:  # a point named or numbered from the list, else a number stated
            got = _choice(_clean(_check_text(text)), list(self.options), None, sole_number=False)
            if got is not None:
                return float(self.low) + got
        return read_number(text, low=self.low, high=self.high, integer=self.integer)


def number_reader(low: float, high: float, *, what: str = "number", integer: bool = False,
                  options: Sequence[str] | None = None) -> NumberReader:
    """A :class:`NumberReader` for the scale ``low``..``high`` (see :func:`read_number`).

    Examples
    --------
    >>> number_reader(1, 5)("I'd give it a 4 out of 5.")
    4.0
    """
    return NumberReader(low, high, what=what, integer=integer, options=None if options is None else tuple(options))


# -- choices --------------------------------------------------------------------------------
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_EXPLICIT = re.compile(
    rf"(?:\b(?i:option|answer|choice|letter|number|choose|chose|pick|picked|select|selected|go\s+with)"
    rf"|(?<![A-Za-z])A(?=\s*:\s*\d))"
    rf"(?:\s*(?i:is|would\s+be|:|#|no\.?|number|=|-))*\s*[\"'“‘]?\s*(?:\(\s*([A-Za-z]|\d{{1,2}})\s*\)|([A-Z])(?![\w'])"
    rf"|(\d{{1,2}})(?![\d.]\d)|\b((?i:{_WORD}))\b)"
)
_PAREN = re.compile(r"\(\s*([A-Za-z])\s*\)")
_LEAD_CHOICE = re.compile(r"^[\s\[#>*-]*(?:\(\s*([A-Za-z]|\d{1,2})\s*\)|(\d{1,2})(?![\d.]\d)(?:\s*[).:\]]|\s|$)"
                          r"|([A-Z])\s*[).:\]](?!\s*\d)|([A-Za-z])\s*[.!]?\s*$)")
_YES = {"yes", "true", "correct", "right"}
_NO = {"no", "false", "incorrect", "wrong"}


def norm_text(s: str) -> str:
    """Lower-cased words and digits of ``s`` joined by single spaces (how option texts are compared).

    Examples
    --------
    >>> norm_text("  Carbon-dioxide! ")
    'carbon dioxide'
    """
    return " ".join(re.findall(r"[a-z0-9]+", s.lower()))


def _index(token: str, k: int) -> int | None:
    """The 0-based option of a number (from 1), a number word or a letter (from A); None off the list."""
    t = token.strip()
    if t.isdigit():
        i = int(t) - 1
    elif t.lower() in NUMBER_WORDS:
        i = NUMBER_WORDS[t.lower()] - 1
    elif len(t) == 1 and t.isalpha():
        i = _LETTERS.index(t.upper())
    else:
        return None
    return i if 0 <= i < k else None


def _options_of(options: Any) -> list[str]:
    opts = list(options) if options is not None and not isinstance(options, (str, bytes)) else None
    if not opts or not all(isinstance(o, str) for o in opts):
        raise ValueError("`options` must be a non-empty list of option texts")
    return opts


def _lead(got: int, rest: str, names: list[tuple[int, str]]) -> int | None:
    """A leading option number ``got`` checked against the text after it: "2. Lyon" is option 2; "1. Lyon"
    alone is a list bullet before option 2's text; a numbered list of several items ("1. … 2. …"), or a
    leading number naming another option, is unparseable."""
    if _LIST.search(rest) is not None:
        return None
    line = f" {norm_text(rest.split(chr(10), 1)[0])} "
    named = [i for i, n in sorted(names, key=lambda x: -len(x[1])) if n and line.startswith(f" {n} ")]
    if not named or named[0] == got:
        return got
    return named[0] if got == 0 else None


def read_choice(text: str, options: Sequence[str], *, labels: Mapping[str, str] | None = None) -> int | None:
    """The 0-based index of the option a reply picked, or ``None`` when it names none or several.

    Parameters
    ----------
    text : str
        What the model wrote.
    options : sequence of str
        The option texts, as shown to the model (numbered from 1, lettered from A).
    labels : mapping of str to str, optional
        Other names for an option (option text -> name), matched like the option's text.

    Examples
    --------
    >>> opts = ["Paris", "Lyon", "Nice"]
    >>> [read_choice(t, opts) for t in ["Option 2", "(C)", "It is Paris.", "2. Lyon", "**B**", "I choose two"]]
    [1, 2, 0, 1, 1, 1]
    >>> read_choice("Yes, it is.", ["Yes", "No"]), read_choice("A car is faster.", opts) is None
    (0, True)
    >>> read_choice("(D), 7.", ["a", "b", "c", "d"])  # the letter, not the trailing number
    3
    """
    text = _check_text(text)
    opts = _options_of(options)
    if labels is not None and not isinstance(labels, Mapping):
        raise TypeError(f"`labels` must map option texts to other names, got {type(labels).__name__}")
    return _choice(_clean(text), opts, labels, sole_number=True)


def _choice(t: str, opts: list[str], labels: Mapping[str, str] | None, *, sole_number: bool) -> int | None:
    """The rules of :func:`read_choice` on cleaned text (rule 6, the only number, with ``sole_number``)."""
    k = len(opts)
    names = [(i, norm_text(o)) for i, o in enumerate(opts)]
    names += [(i, norm_text(str(labels[o]))) for i, o in enumerate(opts) if labels and labels.get(o)]
    m = _EXPLICIT.search(t)
    if m is not None:
        token = next(g for g in m.groups() if g)
        same = [i for i, n in names if n == token.lower()]  # "the answer is Three": the option "Three"
        got = same[0] if same else _index(token, k)
        if got is not None:
            return got
    parens = {p.upper() for p in _PAREN.findall(t)}
    if len(parens) == 1:
        got = _index(next(iter(parens)), k)
        if got is not None:
            return got
    m = _LEAD_CHOICE.match(t)
    if m is not None and not (m.group(1) and len(parens) > 1):  # "(A) or (B)" names two
        got = _index(next(g for g in m.groups() if g), k)
        if got is not None:
            return _lead(got, t[m.end():], names)
    low = f" {norm_text(t)} "
    hits: set[int] = set()
    for i, name in sorted(names, key=lambda x: -len(x[1])):
        if name and f" {name} " in low:
            hits.add(i)
            low = low.replace(f" {name} ", " ")
    if len(hits) == 1:
        return hits.pop()
    normed = [n for _, n in names[:k]]
    yes = [i for i, o in enumerate(normed) if o in _YES]
    no = [i for i, o in enumerate(normed) if o in _NO]
    words = norm_text(t).split()
    if len(yes) == 1 and len(no) == 1 and words:
        if words[0] in _YES:
            return yes[0]
        if words[0] in _NO:
            return no[0]
    numbers = _ANY.findall(t)
    if sole_number and not hits and len(numbers) == 1 and re.fullmatch(r"\d{1,2}", numbers[0]):
        return _index(numbers[0], k)
    return None
