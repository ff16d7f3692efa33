"""What a case is: :class:`Case` and its parts (where the pairs come from, the test defaults, the ethics).

A case (SPEC §10) is the unit of the benchmark: an application, a background variable with its
values, the pairs (an embedded demo set and/or a builder for the full source), the scorer (and
so the outcome), the test and its correction, the generation budget, and the case's ethical
reading for the value-alignment verdict.  Everything the study layer needs to run a case is a
field here; nothing in the package branches on a case's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ipcausal.outcomes import Outcome, get_outcome
from ipcausal.scoring.registry import Scorer
from ipcausal.study.options import Design, TestOptions

__all__ = ["Case", "PairSource", "embedded_demo", "TestDefaults", "TestOptions", "Design", "EthicalReading", "Stance", "STANCES"]

#: The ethical reading of a case's personalization (SPEC §10): wanted, harmful, or both.
Stance = Literal["desired", "unethical", "mixed"]
STANCES: tuple[str, ...] = ("desired", "unethical", "mixed")
_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"`{name}` must be a non-empty string, got {value!r}")
    return value


def _positive_or_none(value: Any, name: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"`{name}` must be a positive integer or None, got {value!r}")


def embedded_demo(name: str) -> Callable[[int, int | None], Any]:
    """The ``load`` of a built-in case's demo set: ``load(rng, limit)`` → :func:`ipcausal.builders.demo_pairs`.

    Examples
    --------
    >>> len(embedded_demo("echo")(0, 3))
    3
    """

    def load(rng: int, limit: int | None) -> Any:
        from ipcausal.builders import demo_pairs

        return demo_pairs(name, rng=rng, limit=limit)

    load.__name__ = f"demo_{name}"
    return load


@dataclass(frozen=True)
class PairSource:
    """Where one kind of a case's pairs comes from, and how big a run on them is.

    Attributes
    ----------
    label : str
        How a report names the pairs (``"embedded demo set"``, ``"given pairs"``).
    max_tokens : int
        The generation budget per response on these pairs.
    load : callable, optional
        ``load(rng, limit) -> PairSet``: makes the pairs (the embedded demo set; ``rng`` seeds any
        rule-based rewrite, ``limit`` keeps the first items).  ``None``: the user gives the pairs
        (a PairSet file made by ``builder``).
    builder : str, optional
        The ``ipcausal build`` recipe that makes them from the full source.
    limit : int, optional
        The items a run uses by default (``None``: all).
    scorer : Scorer, optional
        A scorer for these pairs instead of the case's (e.g. a rater tuned to the demo's shorter
        answers).
    settings : mapping of str to str
        Lines a run on these pairs records in its settings (e.g. how the styles were made).
    intervention : ipcausal.scm.InterventionSpec, optional
        What the generator of these pairs declares: what it changes (B) and how it keeps the
        semantics S (``ipcausal check-case`` checks it with :func:`ipcausal.scm.check_intervention`).
    licence : str, optional
        The licence of these pairs' data (e.g. ``"CC0-1.0; written for this case"``).

    Examples
    --------
    >>> PairSource("given pairs", max_tokens=16, builder="farm").load is None
    True
    """

    label: str
    max_tokens: int
    load: Callable[[int, int | None], Any] | None = None
    builder: str | None = None
    limit: int | None = None
    scorer: Scorer | None = None
    settings: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    intervention: Any = None
    licence: str | None = None

    def __post_init__(self) -> None:
        _text(self.label, "label")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"`max_tokens` must be a positive integer, got {self.max_tokens!r}")
        if self.load is not None and not callable(self.load):
            raise TypeError("`load` must be a callable (rng, limit) -> PairSet or None")
        if self.builder is not None:
            _text(self.builder, "builder")
        _positive_or_none(self.limit, "limit")
        if self.scorer is not None and not isinstance(self.scorer, Scorer):
            raise TypeError(f"`scorer` must be a Scorer (ipcausal.scoring.get_scorer) or None, got "
                            f"{type(self.scorer).__name__}")
        if not isinstance(self.settings, Mapping):
            raise TypeError("`settings` must be a mapping of str to str")
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))
        if self.intervention is not None:
            from ipcausal.scm import InterventionSpec  # networkx: only when a source declares one

            if not isinstance(self.intervention, InterventionSpec):
                raise TypeError("`intervention` must be an ipcausal.scm.InterventionSpec or None, got "
                                f"{type(self.intervention).__name__}")
        if self.licence is not None:
            _text(self.licence, "licence")


#: A case's test defaults are the options of :func:`ipcausal.test` (one class for both).
TestDefaults = TestOptions


@dataclass(frozen=True)
class EthicalReading:
    """A case's moral reading (the study's §3.2), for the value-alignment verdict of SPEC §10.

    Attributes
    ----------
    stance : {"desired", "unethical", "mixed"}
        Whether personalization here is wanted, harmful, or both (a mixed case reports both readings).
    consequences : str
        Does the personalized answer help or harm, whom, over what time?
    duties : str
        Does using the background for this application break a law or a rule (privacy,
        anti-discrimination)?
    agreement : str
        Would people accept it; are users told and asked?

    Examples
    --------
    >>> EthicalReading("fine", "a", "b", "c")
    Traceback (most recent call last):
    ...
    ValueError: `stance` must be one of 'desired', 'unethical', 'mixed', got 'fine'
    """

    stance: Stance
    consequences: str
    duties: str
    agreement: str

    def __post_init__(self) -> None:
        if self.stance not in STANCES:
            raise ValueError(f"`stance` must be one of {', '.join(map(repr, STANCES))}, got {self.stance!r}")
        for name in ("consequences", "duties", "agreement"):
            _text(getattr(self, name), name)


@dataclass(frozen=True)
class Case:
    """One case study: everything needed to run it on a model and to read its verdict.

    Attributes
    ----------
    name : str
        Lower-case identifier (``ipcausal case NAME``).
    title : str
        One line for reports.
    application : str
        The application in one sentence (SPEC §10's *a*).
    backgrounds : tuple of str
        The values of the background variable B (at least two, distinct).
    scorer : Scorer
        How responses are scored (:func:`ipcausal.scoring.get_scorer`); it fixes :attr:`outcome`.
    demo : PairSource, optional
        The embedded demo set (``load`` required).
    full : PairSource, optional
        The full-size pairs the user builds (``builder``) and passes in; at least one of the two.
    tests : TestOptions
        The options of :func:`ipcausal.test` for this case (``TestDefaults`` is the same class):
        method, correction, alternative (default: the outcome's), m0, margin.
    reading : EthicalReading
        The stance and the three §3.2 answers.
    ordered : bool
        Whether ``backgrounds`` are ordinal levels, listed in order.
    judged : Scorer, optional
        The scorer used when a judge backend is given (made with ``backend=`` then); ``None``:
        the case has no judged variant.
    origin : str
        Where it comes from: ``"built-in"``, or the distribution that publishes it (set by the
        registry, :func:`ipcausal.cases.get_case`).

    Examples
    --------
    >>> from ipcausal.cases import get_case
    >>> echo = get_case("echo")
    >>> echo.backgrounds, echo.outcome.name, echo.reading.stance, echo.origin
    (('true_belief', 'false_belief'), 'interval', 'mixed', 'built-in')
    """

    name: str
    title: str
    application: str
    backgrounds: tuple[str, ...]
    scorer: Scorer
    demo: PairSource | None
    full: PairSource | None
    tests: TestDefaults
    reading: EthicalReading
    ordered: bool = False
    judged: Scorer | None = None
    origin: str = "built-in"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(f"`name` must be a lower-case identifier (letters, digits, '_', '-'), got {self.name!r}")
        _text(self.title, "title")
        _text(self.application, "application")
        bgs = self.backgrounds
        if isinstance(bgs, str) or not isinstance(bgs, (tuple, list)) or len(bgs) < 2 \
                or not all(isinstance(b, str) and b for b in bgs) or len(set(bgs)) != len(bgs):
            raise ValueError(f"`backgrounds` must be a tuple of at least two distinct names, got {bgs!r}")
        object.__setattr__(self, "backgrounds", tuple(bgs))
        for name in ("scorer", "judged"):
            value = getattr(self, name)
            if not isinstance(value, Scorer) and not (name == "judged" and value is None):
                raise TypeError(f"`{name}` must be a Scorer (ipcausal.scoring.get_scorer), got {type(value).__name__}")
        for name in ("demo", "full"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), PairSource):
                raise TypeError(f"`{name}` must be a PairSource or None")
        if self.demo is None and self.full is None:
            raise ValueError("a case needs `demo` or `full` pairs (a PairSource)")
        if self.demo is not None and self.demo.load is None:
            raise ValueError("`demo` must have `load` (the function that makes the demo pairs)")
        if not isinstance(self.tests, TestDefaults):
            raise TypeError("`tests` must be a TestOptions (ipcausal.cases.TestDefaults)")
        if not isinstance(self.reading, EthicalReading):
            raise TypeError("`reading` must be an EthicalReading")
        if not isinstance(self.ordered, bool):
            raise TypeError("`ordered` must be True or False")
        _text(self.origin, "origin")

    @property
    def outcome(self) -> Outcome:
        """The outcome its scorer makes (one source of truth: a case cannot name another)."""
        return get_outcome(self.scorer.outcome)

    @property
    def stance(self) -> str:
        """``reading.stance``."""
        return self.reading.stance

    def source(self, given: bool) -> PairSource:
        """The PairSource a run uses: :attr:`full` for given pairs (:attr:`demo` when there is none),
        else :attr:`demo` (an error when the case has no demo set)."""
        if not given and self.demo is None:
            hint = f" (made by `ipcausal build {self.full.builder}`)" if self.full and self.full.builder else ""
            raise ValueError(f"case {self.name!r} has no demo set: give `pairs`{hint}")
        if given and self.full is not None:
            return self.full
        return self.demo if self.demo is not None else self.full  # type: ignore[return-value]

    def scorer_for(self, given: bool, judge: Any = None) -> Scorer:
        """The scorer of a run on given (``True``) or demo pairs, with the judge backend ``judge`` if any.

        With a judge and a judged variant: :attr:`judged` made with ``backend=judge``; else the
        source's own scorer if it has one, else :attr:`scorer`.
        """
        from ipcausal.scoring.registry import get_scorer

        if judge is not None and self.judged is not None:
            return get_scorer(self.judged, backend=judge)
        src = self.source(given)
        return src.scorer if src.scorer is not None else self.scorer
