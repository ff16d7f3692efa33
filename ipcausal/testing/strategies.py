"""Hypothesis strategies that generate valid ipcausal objects (this module imports hypothesis).

=============================  ==============================================================
strategy                       generates
=============================  ==============================================================
:func:`pairsets`               a valid, scored :class:`~ipcausal.PairSet` (interval or similarity)
:func:`marker_texts`           a text carrying culture markers of one variety
:func:`marker_text_pairs`      (American text, British text) with the same meaning
:func:`similarities`           a 1-D array of similarities in [0, 1] (0, 1 and ``m0`` included)
:func:`lattice_differences`    a 1-D array of integer multiples of a unit (ratings, 0/1, 0/100)
:func:`continuous_differences` a 1-D array of finite real differences
=============================  ==============================================================

:func:`sample` draws a fixed, reproducible list of examples from a strategy *outside* of
``@given``, for suites that must not call a model inside a property test.

Examples
--------
>>> from hypothesis import given
>>> from ipcausal.testing.strategies import pairsets
>>> @given(pairsets(outcome="similarity", max_size=8))
... def test_p_in_unit_interval(ps):
...     import ipcausal
...     assert all(0 < g.pvalue <= 1 for g in ipcausal.test(ps).groups)
>>> test_p_in_unit_interval()
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ipcausal.outcomes import directed
from ipcausal.pairs import PairSet
from ipcausal._validate import int_seed
from ipcausal.testing._markers import AMERICAN, BRITISH, NEUTRAL_WORDS

__all__ = [
    "pairsets",
    "marker_texts",
    "marker_text_pairs",
    "similarities",
    "lattice_differences",
    "continuous_differences",
    "sample",
]

T = TypeVar("T")
_VARIETIES = {"american": AMERICAN, "british": BRITISH}


def _size(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _sizes(min_size: Any, max_size: Any, minimum: int) -> tuple[int, int]:
    lo = _size(min_size, "min_size", minimum)
    hi = _size(max_size, "max_size", minimum)
    if hi < lo:
        raise ValueError(f"`max_size` ({hi}) must be >= `min_size` ({lo})")
    return lo, hi


def similarities(min_size: int = 1, max_size: int = 40, *, m0: float = 0.8) -> st.SearchStrategy[np.ndarray]:
    """1-D float arrays in [0, 1], mixing the edges 0 and 1, ties with ``m0`` and free values."""
    lo, hi = _sizes(min_size, max_size, 1)
    if not isinstance(m0, (int, float)) or isinstance(m0, bool) or not 0.0 <= m0 <= 1.0:
        raise ValueError(f"`m0` must lie in [0, 1], got {m0!r}")
    value = st.one_of(
        st.sampled_from([0.0, 1.0, float(m0), 0.25, 0.5, 0.75]),
        st.floats(0.0, 1.0, allow_nan=False, allow_infinity=False),
    )
    return st.lists(value, min_size=lo, max_size=hi).map(lambda v: np.asarray(v, dtype=np.float64))


def lattice_differences(
    min_size: int = 2, max_size: int = 40, *, max_steps: int = 6, units: Sequence[float] = (1.0, 0.5, 100.0, 0.25)
) -> st.SearchStrategy[np.ndarray]:
    """1-D arrays of Δ = k · unit with integer k in [−max_steps, max_steps] (zeros included)."""
    lo, hi = _sizes(min_size, max_size, 1)
    steps = _size(max_steps, "max_steps", 1)
    if isinstance(units, (str, bytes)) or not len(units) or any(
        not isinstance(u, (int, float)) or isinstance(u, bool) or not u > 0 for u in units
    ):
        raise ValueError("`units` must be a non-empty sequence of positive numbers")
    ks = st.lists(st.integers(-steps, steps), min_size=lo, max_size=hi)
    return st.tuples(ks, st.sampled_from([float(u) for u in units])).map(
        lambda t: np.asarray(t[0], dtype=np.float64) * t[1]
    )


def continuous_differences(
    min_size: int = 2, max_size: int = 40, *, bound: float = 1e3
) -> st.SearchStrategy[np.ndarray]:
    """1-D arrays of finite real differences in [−bound, bound] (with exact zeros now and then)."""
    lo, hi = _sizes(min_size, max_size, 1)
    if not isinstance(bound, (int, float)) or isinstance(bound, bool) or not 0 < bound < 1e300:
        raise ValueError(f"`bound` must be a positive finite number, got {bound!r}")
    value = st.one_of(
        st.just(0.0),
        st.floats(-bound, bound, allow_nan=False, allow_infinity=False, allow_subnormal=False),
    )
    return st.lists(value, min_size=lo, max_size=hi).map(lambda v: np.asarray(v, dtype=np.float64))


@st.composite
def _marker_pair(draw: Any, min_markers: int, max_markers: int, max_words: int) -> tuple[str, str]:
    k = draw(st.integers(min_markers, max_markers))
    positions = draw(st.lists(st.integers(0, len(AMERICAN) - 1), min_size=k, max_size=k, unique=True))
    filler = draw(st.lists(st.sampled_from(NEUTRAL_WORDS), min_size=0, max_size=max_words))
    slots = draw(st.lists(st.integers(0, len(filler)), min_size=k, max_size=k))
    us: list[str] = list(filler)
    uk: list[str] = list(filler)
    for pos, slot in sorted(zip(positions, slots), key=lambda t: -t[1]):
        capital = draw(st.booleans())
        a, b = AMERICAN[pos], BRITISH[pos]
        us.insert(slot, a.capitalize() if capital else a)
        uk.insert(slot, b.capitalize() if capital else b)
    end = draw(st.sampled_from(["?", ".", "!"]))
    return " ".join(us) + end, " ".join(uk) + end


def marker_text_pairs(
    min_markers: int = 1, max_markers: int = 3, *, max_words: int = 12
) -> st.SearchStrategy[tuple[str, str]]:
    """(American text, British text): the same neutral words with aligned markers of each variety.

    The two texts differ only in their culture markers (whole words, case kept), so they have
    the same meaning; every text has between ``min_markers`` and ``max_markers`` markers.
    """
    lo = _size(min_markers, "min_markers", 1)
    hi = _size(max_markers, "max_markers", lo)
    if hi > len(AMERICAN):
        raise ValueError(f"`max_markers` must be <= {len(AMERICAN)}, got {hi}")
    return _marker_pair(lo, hi, _size(max_words, "max_words", 0))


def marker_texts(
    background: str = "american", min_markers: int = 1, max_markers: int = 3, *, max_words: int = 12
) -> st.SearchStrategy[str]:
    """Texts carrying ``min_markers``..``max_markers`` culture markers of ``background``.

    ``background`` is ``"american"`` or ``"british"`` (the built-in marker lists).
    """
    if background not in _VARIETIES:
        raise ValueError(f"`background` must be 'american' or 'british', got {background!r}")
    idx = 0 if background == "american" else 1
    return marker_text_pairs(min_markers, max_markers, max_words=max_words).map(lambda t: t[idx])


@st.composite
def _pairsets(
    draw: Any, outcome: str, lo: int, hi: int, backgrounds: tuple[str, ...], lattice: bool | None, m0: float
) -> PairSet:
    rows: list[dict[str, Any]] = []
    on_lattice = draw(st.booleans()) if lattice is None else lattice
    markers = tuple(b.lower() for b in backgrounds) == ("american", "british")
    for a, b in itertools.combinations(backgrounds, 2):
        n = draw(st.integers(lo, hi))
        for _ in range(n):
            flip = draw(st.booleans())
            bi, bj = (b, a) if flip else (a, b)
            if markers:
                us, uk = draw(marker_text_pairs(max_words=6))
                xi, xj = (uk, us) if bi.lower() == "british" else (us, uk)
            else:
                q = draw(st.sampled_from(NEUTRAL_WORDS))
                xi, xj = f"[{bi}] {q}?", f"[{bj}] {q}?"
            row: dict[str, Any] = {"pair_id": len(rows), "background_i": bi, "background_j": bj, "x_i": xi, "x_j": xj}
            if directed(outcome):
                if on_lattice:
                    row["score_i"], row["score_j"] = (float(v) for v in draw(st.tuples(st.integers(1, 7), st.integers(1, 7))))
                else:
                    real = st.floats(-100, 100, allow_nan=False, allow_subnormal=False)
                    row["score_i"], row["score_j"] = draw(st.tuples(real, real))
            else:
                row["similarity"] = float(draw(st.one_of(st.sampled_from([0.0, 1.0, m0]), st.floats(0.0, 1.0))))
            rows.append(row)
    return PairSet.from_frame(pd.DataFrame.from_records(rows))


def pairsets(
    outcome: str = "interval",
    min_size: int = 2,
    max_size: int = 30,
    backgrounds: Sequence[str] = ("american", "british"),
    *,
    lattice: bool | None = None,
    m0: float = 0.8,
) -> st.SearchStrategy[PairSet]:
    """Valid, scored PairSets that :func:`ipcausal.test` accepts.

    Parameters
    ----------
    outcome : {"interval", "similarity"}
        ``score_i``/``score_j`` (integer ratings 1..7 when on the lattice, else reals in
        [−100, 100]) or ``similarity`` in [0, 1] (with 0, 1 and ``m0`` as frequent values).
    min_size, max_size : int
        Pairs *per background pair* (``min_size >= 2``, so every group can be tested).
    backgrounds : sequence of str
        At least two distinct names; every unordered pair of them gets its pairs, each in a
        random orientation.  ``("american", "british")`` gives culture-marker prompts; other
        names give tagged prompts (``"[name] …"``, as :class:`SimulatedModel` reads them).
    lattice : bool, optional
        Interval scores on the integer lattice (True), real (False) or either (None).
    m0 : float
        The similarity value that appears as a tie.
    """
    if outcome not in ("interval", "similarity"):
        raise ValueError(f"`outcome` must be 'interval' or 'similarity', got {outcome!r}")
    lo, hi = _sizes(min_size, max_size, 2)
    if isinstance(backgrounds, str) or not isinstance(backgrounds, Sequence):
        raise TypeError("`backgrounds` must be a sequence of names")
    bgs = tuple(backgrounds)
    if len(bgs) < 2 or len(set(bgs)) != len(bgs) or any(not isinstance(b, str) or not b.strip() for b in bgs):
        raise ValueError(f"`backgrounds` needs at least two distinct non-empty names, got {bgs!r}")
    if lattice is not None and not isinstance(lattice, bool):
        raise TypeError("`lattice` must be True, False or None")
    if not isinstance(m0, (int, float)) or isinstance(m0, bool) or not 0.0 <= m0 <= 1.0:
        raise ValueError(f"`m0` must lie in [0, 1], got {m0!r}")
    return _pairsets(outcome, lo, hi, bgs, lattice, float(m0))


def sample(strategy: st.SearchStrategy[T], n: int, *, rng: int | np.random.Generator | None = 0) -> list[T]:
    """A reproducible list of up to ``n`` examples of ``strategy``, drawn outside ``@given``.

    Use it to fix a set of generated prompts once (e.g. in a fixture) and send them to a
    model through a cache, instead of calling the model inside a property test.  The same
    ``rng`` gives the same list; fewer than ``n`` come back only when the strategy has
    fewer distinct examples.

    Parameters
    ----------
    strategy : hypothesis.strategies.SearchStrategy
        What to draw from.
    n : int
        How many examples (at most).
    rng : int, numpy.random.Generator or None, default 0
        Seeds hypothesis: the same int gives the same list (a Generator gives one drawn seed).

    Examples
    --------
    >>> from ipcausal.testing.strategies import marker_text_pairs, sample
    >>> pairs = sample(marker_text_pairs(), 5, rng=1)
    >>> len(pairs), pairs == sample(marker_text_pairs(), 5, rng=1)
    (5, True)
    """
    if not isinstance(strategy, st.SearchStrategy):
        raise TypeError(f"`strategy` must be a hypothesis strategy, got {type(strategy).__name__}")
    count = _size(n, "n", 1)
    seed = int_seed(rng)
    out: list[T] = []

    @settings(
        max_examples=count,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(strategy)
    def collect(value: T) -> None:
        if len(out) < count:
            out.append(value)

    from hypothesis import seed as _seed

    _seed(int(seed))(collect)()
    return out
