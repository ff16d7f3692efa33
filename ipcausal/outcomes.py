"""The outcome kinds, defined once: what a scorer makes and what the tests then do with it.

=============  =========================  ==============  ===================  ====================
outcome        columns                    test            default alternative  effect
=============  =========================  ==============  ===================  ====================
``interval``   ``score_i``, ``score_j``   sign-flip       two-sided            mean Δ
``similarity`` ``similarity``             sign test (m0)  less                 median similarity
=============  =========================  ==============  ===================  ====================

An interval outcome is a score per response; the tested value of a pair is
Δ = score(background_b) − score(background_a), so a pair has a direction.  A similarity outcome is
one value per pair, s(y_i, y_j) ∈ [0, 1] (1 = the same answer), with no direction; the study's
test asks whether its median lies below m0.  A module of constants and small objects (no pandas,
no statistics), so that the scorers, the study layer, the cases and ``ipcausal cases`` read it
without loading either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Outcome", "OutcomeKind", "OUTCOME_KINDS", "INTERVAL", "SIMILARITY", "AUTO", "get_outcome", "directed",
           "resolve_outcome"]

#: The outcome kinds a scorer can make (``Literal`` at the edges of the API).
OutcomeKind = Literal["interval", "similarity"]
OUTCOME_KINDS: tuple[str, ...] = ("interval", "similarity")


@dataclass(frozen=True)
class Outcome:
    """One outcome kind: its columns, its test and how its effect reads.

    Attributes
    ----------
    name : {"interval", "similarity"}
    columns : tuple of str
        The columns of a scored PairSet that hold it.
    test : str
        The test :func:`ipcausal.test` runs on it (``"permutation"``: the paired sign-flip test;
        ``"sign"``: the sign test of the median against m0).
    default_alternative : str
        The alternative when none is given (the study's: two-sided for Δ, "less" for a similarity).
    effect : str
        How the effect reads in a report.
    directed : bool
        Whether a pair's value has a direction (Δ changes sign when the pair is stored the other way).
    bound : float or None
        The known bound on a pair's value (1 for a similarity; ``None``: the scorer's).

    Examples
    --------
    >>> from ipcausal.outcomes import get_outcome
    >>> o = get_outcome("similarity")
    >>> o.columns, o.test, o.default_alternative, o.bound
    (('similarity',), 'sign', 'less', 1.0)
    """

    name: OutcomeKind
    columns: tuple[str, ...]
    test: str
    default_alternative: str
    effect: str
    directed: bool
    bound: float | None


INTERVAL = Outcome("interval", ("score_i", "score_j"), "permutation", "two-sided", "mean Δ", True, None)
SIMILARITY = Outcome("similarity", ("similarity",), "sign", "less", "median similarity", False, 1.0)
_BY_NAME = {o.name: o for o in (INTERVAL, SIMILARITY)}


def get_outcome(name: object) -> Outcome:
    """The :class:`Outcome` called ``name`` (an Outcome is returned as it is).

    Examples
    --------
    >>> get_outcome("interval").effect
    'mean Δ'
    >>> get_outcome("ordinal")
    Traceback (most recent call last):
    ...
    ValueError: `outcome` must be one of 'interval', 'similarity', got 'ordinal'
    """
    if isinstance(name, Outcome):
        return name
    if not isinstance(name, str) or name not in _BY_NAME:
        raise ValueError(f"`outcome` must be one of {', '.join(map(repr, OUTCOME_KINDS))}, got {name!r}")
    return _BY_NAME[name]


def directed(outcome: object) -> bool:
    """Whether ``outcome``'s pair value has a direction: an interval Δ (True) or a similarity (False).

    The one place the package tells the two kinds apart by name; everything else asks an
    :class:`Outcome` (its columns, test, default alternative) or this.

    Examples
    --------
    >>> directed("interval"), directed("similarity")
    (True, False)
    """
    return get_outcome(outcome).directed


#: The outcome of a Report from :func:`ipcausal.distribution_test`: no value per pair, the two sides'
#: response distributions compared (an MMD); a Report's ``outcome`` is one of the two kinds or this.
DISTRIBUTION = "distribution"


def is_interval(outcome: object) -> bool:
    """Whether a Report's (or pairs') ``outcome`` is the interval kind; never raises (renderers ask).

    Examples
    --------
    >>> is_interval("interval"), is_interval("distribution")
    (True, False)
    """
    return outcome == INTERVAL.name


def is_similarity(outcome: object) -> bool:
    """Whether ``outcome`` is the similarity kind.

    Examples
    --------
    >>> is_similarity("similarity"), is_similarity("interval")
    (True, False)
    """
    return outcome == SIMILARITY.name


def is_distribution(outcome: object) -> bool:
    """Whether ``outcome`` is a distribution test's (:data:`DISTRIBUTION`).

    Examples
    --------
    >>> is_distribution("distribution")
    True
    """
    return outcome == DISTRIBUTION


#: ``outcome="auto"``: the kind the pairs' columns hold.
AUTO = "auto"


def resolve_outcome(requested: str, available: str | None) -> str:
    """The outcome to test: ``requested``, or with ``"auto"`` the one the pairs hold (``available``:
    ``"interval"``, ``"similarity"``, ``"both"`` or ``None``, as :attr:`ipcausal.PairSet.outcome` says).

    Examples
    --------
    >>> resolve_outcome("auto", "similarity")
    'similarity'
    >>> resolve_outcome("auto", "both")
    Traceback (most recent call last):
    ...
    ValueError: `pairs` has both scores and similarity: choose `outcome`='interval' or 'similarity'
    """
    if requested != AUTO:
        return get_outcome(requested).name
    if available is None:
        raise ValueError(
            "`pairs` has no outcome: add `score_i`/`score_j` (interval) or `similarity` columns "
            "(`ipcausal score` does this)"
        )
    if available == "both":
        raise ValueError("`pairs` has both scores and similarity: choose `outcome`='interval' or 'similarity'")
    return get_outcome(available).name
