"""The option objects of the study layer, each checked once, where it is made.

* :class:`RunOptions` — how requests are sent: generation ``config``, ``system`` message,
  ``concurrency``, response ``cache``.  :func:`ipcausal.run` and :func:`ipcausal.audit` check their
  request options through it, so the two agree on every message.
* :class:`Design` — what the pairs measure and how their backgrounds are arranged (the outcome
  column, an order of the backgrounds, ordered levels, cue strata): :func:`ipcausal.test`'s
  ``design``.
* :class:`TestOptions` — the options of :func:`ipcausal.test` passed on as one object (a case's
  test defaults, :func:`ipcausal.placebo`).
* :class:`AuditSettings` — the sequential test's options (the counterpart of
  :class:`ipcausal.study.test.Settings`): ``alpha``, ``correction``, ``margin``, ``batch_size``,
  ``max_pairs``, ``m0``, ``alternative``, ``method`` (the bet), ``cluster``, ``order``.

Retries have one meaning: the backend's ``max_retries`` (set where the backend is made,
``get_backend(kind, max_retries=…)``, CLI ``--retries``); a judge's retries of a reply without a
rating belong to its scorer (``get_scorer("judge", backend=…, retries=…)``).  So neither object
carries them.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ipcausal.study.defaults import AUDIT_BATCH_SIZE, AUDIT_CORRECTIONS, DEFAULTS, OUTCOMES
from ipcausal.study.inputs import positive_number

__all__ = ["RunOptions", "AuditSettings", "TestOptions", "Design", "given"]


def given(value: Any, cls: type, name: str) -> Any:
    """``value``, or ``cls()`` for ``None``; a ``TypeError`` naming ``name`` for anything but a ``cls``.

    Examples
    --------
    >>> given(None, RunOptions, "options") == RunOptions()
    True
    """
    value = cls() if value is None else value
    if not isinstance(value, cls):
        raise TypeError(f"`{name}` must be a{'n' if cls.__name__[0] in 'AEIOU' else ''} {cls.__name__}, "
                        f"got {type(value).__name__}")
    return value


def _positive_int(value: Any, name: str) -> int:
    from ipcausal.stats._validate import positive_int

    return int(positive_int(value, name))


def _names(value: Any, name: str) -> tuple[str, ...] | None:
    """A list of background names as a tuple of str (``None`` stays ``None``); a ``TypeError`` naming ``name``."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"`{name}` must be a list of background names, got {type(value).__name__}")
    return tuple(str(x) for x in value)


@dataclass(frozen=True)
class Design:
    """What the pairs measure and how their backgrounds are arranged: ``ipcausal.test(pairs, design=…)``.

    The test's own options (level, correction, route …) are its named parameters; the design
    describes the data: which outcome column is tested, and the structure of the backgrounds
    and cues that adds rows to the Report.  Checked when made; checked against the pairs by
    :func:`ipcausal.test`.

    Attributes
    ----------
    outcome : {"auto", "interval", "similarity"}
        Which outcome to test (``"auto"``: the one the pairs carry).
    order : tuple of str, optional
        The backgrounds in order: every group is oriented earlier → later, so
        Δ = score(later) − score(earlier) whatever the storage (a one-sided alternative needs it
        when a group's pairs are stored both ways).
    trend : tuple of str, optional
        The levels of an ordered background, in order: adds ``Report.trend``
        (:func:`ipcausal.stats.trend_test` on one row per ``prompt_id``, one column per level).
    strata : str, optional
        A column naming each pair's cue (e.g. ``cue_kind``): adds ``Report.strata``, the effect
        per cue, the pooled test stratified by cue and, where each prompt carries every cue once,
        :func:`ipcausal.stats.heterogeneity_test`.
    bound : float, optional
        A known bound c on every pair's |Δ| (interval outcomes: 1 for 0/1 scores, k − 1 for a
        k-point rating).  Where a bound is known — this one, else the ``bound`` column that
        :func:`ipcausal.scoring.score_pairs` writes from the scorer's own — each group's
        interval for the mean Δ and its equivalence test (``margin``) are the betting ones,
        valid for every distribution of Δ on [−c, c]
        (:func:`ipcausal.stats.bounded_mean_test`); without one the interval is the sign-flip
        *shift* interval, which assumes Δ − δ symmetric (``GroupResult.ci_method`` says which).

    Examples
    --------
    >>> from ipcausal.study.options import Design
    >>> Design(trend=["sae", "esl_light", "esl_heavy"]).trend
    ('sae', 'esl_light', 'esl_heavy')
    >>> Design(outcome="score")
    Traceback (most recent call last):
    ...
    ValueError: `outcome` must be one of 'auto', 'interval', 'similarity'; got 'score'
    """

    outcome: str = DEFAULTS["outcome"]
    order: tuple[str, ...] | None = None
    trend: tuple[str, ...] | None = None
    strata: str | None = None
    bound: float | None = None

    def __post_init__(self) -> None:
        from ipcausal.stats._validate import choice

        choice(self.outcome, "outcome", OUTCOMES)
        if self.bound is not None:
            object.__setattr__(self, "bound", positive_number(self.bound, "bound"))
        object.__setattr__(self, "order", _names(self.order, "order"))
        object.__setattr__(self, "trend", _names(self.trend, "trend"))
        if self.strata is not None and not isinstance(self.strata, str):
            raise TypeError(f"`strata` must be a column name, got {type(self.strata).__name__}")


@dataclass(frozen=True)
class RunOptions:
    """How the requests of a run are sent (checked when made).

    Attributes
    ----------
    config : GenerationConfig, optional
        Generation settings (default: greedy, seed 0, 256 tokens).
    system : str, optional
        A system message before each prompt.
    concurrency : int, optional
        Requests in flight (the backend's default).
    cache : path, ResponseCache or None
        The response cache (SQLite, crash-safe); ``None``: none (an audit keeps one in memory).

    Examples
    --------
    >>> from ipcausal.study.options import RunOptions
    >>> RunOptions(concurrency=4).generation.max_tokens
    256
    >>> RunOptions(system=" ")
    Traceback (most recent call last):
    ...
    ValueError: `system` must be a non-empty string or None
    """

    config: Any = None
    system: str | None = None
    concurrency: int | None = None
    cache: Any = None

    def __post_init__(self) -> None:
        from ipcausal.backends.base import GenerationConfig
        from ipcausal.backends.cache import ResponseCache

        if self.config is not None and not isinstance(self.config, GenerationConfig):
            raise TypeError(f"`config` must be a GenerationConfig, got {type(self.config).__name__}")
        if self.system is not None and (not isinstance(self.system, str) or not self.system.strip()):
            raise ValueError("`system` must be a non-empty string or None")
        c = self.concurrency
        if c is not None and (isinstance(c, bool) or not isinstance(c, numbers.Integral) or c < 1):
            raise ValueError(f"`concurrency` must be a positive integer, got {c!r}")
        if self.cache is not None and not isinstance(self.cache, (str, os.PathLike, ResponseCache)):
            raise TypeError(f"`cache` must be a path, a ResponseCache or None, got {type(self.cache).__name__}")

    @property
    def generation(self) -> Any:
        """``config``, or the default GenerationConfig."""
        from ipcausal.backends.base import GenerationConfig

        return GenerationConfig() if self.config is None else self.config


@dataclass(frozen=True)
class AuditSettings:
    """The options of the sequential test of :func:`ipcausal.audit` (checked when made).

    Attributes
    ----------
    alpha : float
        Family-wise level within a model: a group is rejected when its (e-Holm adjusted) e-value
        reaches 1/α.
    correction : {"e-holm", "e-bonferroni", "none"}
        Combination of the groups' e-values (valid under any dependence).
    margin : float, optional
        Equivalence margin: a group whose confidence sequence (level 1 − α) lies inside
        (−margin, margin) is decided "equivalent" and stops (similarity: the share below m0 inside
        (1/2 − margin, 1/2 + margin), so < 0.5).
    batch_size : int
        Pairs sent per batch (whole clusters: a batch may hold a few more).
    max_pairs : int, optional
        Send at most this many pairs in all.
    m0 : float
        Null median of a similarity, in (0, 1].
    alternative : {"two-sided", "greater", "less"}, optional
        ``None``: the outcome's default (two-sided for Δ, "less" for a similarity).
    method : {"mixture", "agrapa", "ons"}
        The bet (:func:`ipcausal.stats.sequential_state`).
    cluster : str, optional
        The column naming each pair's cluster (checked against the pairs by the audit).
    order : tuple of str, optional
        The backgrounds in order (Δ = score(later) − score(earlier)).

    Examples
    --------
    >>> from ipcausal.study.options import AuditSettings
    >>> AuditSettings().alpha, AuditSettings().correction, AuditSettings(max_pairs=100).batch_size
    (0.05, 'e-holm', 32)
    >>> AuditSettings(alpha=1.5)
    Traceback (most recent call last):
    ...
    ValueError: `alpha` must lie in (0, 1), got 1.5
    """

    alpha: float = DEFAULTS["alpha"]
    correction: str = AUDIT_CORRECTIONS[0]
    margin: float | None = None
    batch_size: int = AUDIT_BATCH_SIZE
    max_pairs: int | None = None
    m0: float = DEFAULTS["m0"]
    alternative: str | None = None
    method: str = "mixture"
    cluster: str | None = None
    order: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        from ipcausal.stats._validate import choice, open_unit
        from ipcausal.stats.betting import METHODS

        object.__setattr__(self, "alpha", open_unit(self.alpha, "alpha"))
        choice(self.correction, "correction", AUDIT_CORRECTIONS)
        if self.margin is not None:
            object.__setattr__(self, "margin", positive_number(self.margin, "margin"))
        object.__setattr__(self, "batch_size", _positive_int(self.batch_size, "batch_size"))
        if self.max_pairs is not None:
            object.__setattr__(self, "max_pairs", _positive_int(self.max_pairs, "max_pairs"))
        m0 = self.m0
        if isinstance(m0, bool) or not isinstance(m0, numbers.Real) or not 0.0 < float(m0) <= 1.0:
            raise ValueError(f"`m0` must be a number in (0, 1] (a median similarity), got {m0!r}")
        object.__setattr__(self, "m0", float(m0))
        if self.alternative is not None:
            choice(self.alternative, "alternative", ("two-sided", "greater", "less"))
        choice(self.method, "method", METHODS)
        if self.cluster is not None and not isinstance(self.cluster, str):
            raise TypeError(f"`cluster` must be a column name or None, got {type(self.cluster).__name__}")
        object.__setattr__(self, "order", _names(self.order, "order"))


@dataclass(frozen=True)
class TestOptions:
    """Options of :func:`ipcausal.test` that a caller passes on as one object (a Case, a placebo).

    Attributes
    ----------
    alpha : float
    correction : str
        Within each model's family of background pairs.
    m0 : float
        The null median of a similarity, in (0, 1].
    method : str
        The permutation test's route (``"auto"``; ``"paper-compat"`` for the study's released code).
    n_resamples : int, optional
        Monte Carlo resamples (``None``: the test's default).
    alternative : str, optional
        ``None``: the outcome's default (two-sided for Δ, "less" for a similarity).
    margin : float, optional
        An equivalence margin: with it a report can say "absent" (SPEC §8).
    smallest_effect : float, optional
        The smallest effect of interest the design is sized for (not an option of the test
        itself: ``ipcausal check-case`` states the pairs it needs with :func:`ipcausal.power`).
        Interval outcomes: a mean Δ in units of Δ's standard deviation (d_z, > 0); similarity
        outcomes: the share q in (0.5, 1) of pairs whose similarity is below ``m0``.
    design : Design, optional
        The design passed on (e.g. ``Design(trend=[…])``: :func:`ipcausal.test` adds the trend row;
        ``Design(strata="cue_kind")``: the per-cue rows).

    Examples
    --------
    >>> from ipcausal.study.options import TestOptions
    >>> TestOptions(correction="holm").kwargs()["correction"]
    'holm'
    >>> TestOptions(design=Design(strata="cue_kind")).kwargs()["design"].strata
    'cue_kind'
    >>> TestOptions(m0=2)
    Traceback (most recent call last):
    ...
    ValueError: `m0` must be a number in (0, 1] (a median similarity), got 2
    """

    __test__ = False  # pytest must not collect it

    alpha: float = DEFAULTS["alpha"]
    correction: str = DEFAULTS["correction"]
    m0: float = DEFAULTS["m0"]
    method: str = DEFAULTS["method"]
    n_resamples: int | None = None
    alternative: str | None = None
    margin: float | None = None
    smallest_effect: float | None = None
    design: Design | None = None

    def __post_init__(self) -> None:
        from ipcausal.stats._validate import choice, open_unit

        object.__setattr__(self, "alpha", open_unit(self.alpha, "alpha"))
        if self.design is not None and not isinstance(self.design, Design):
            raise TypeError(f"`design` must be a Design or None, got {type(self.design).__name__}")
        if not isinstance(self.correction, str):
            raise TypeError(f"`correction` must be a string, got {type(self.correction).__name__}")
        m0 = self.m0
        if isinstance(m0, bool) or not isinstance(m0, numbers.Real) or not 0.0 < float(m0) <= 1.0:
            raise ValueError(f"`m0` must be a number in (0, 1] (a median similarity), got {m0!r}")
        if not isinstance(self.method, str):
            raise TypeError(f"`method` must be a string, got {type(self.method).__name__}")
        if self.n_resamples is not None:
            _positive_int(self.n_resamples, "n_resamples")
        if self.alternative is not None:
            choice(self.alternative, "alternative", ("two-sided", "greater", "less"))
        if self.margin is not None:
            object.__setattr__(self, "margin", positive_number(self.margin, "margin"))
        if self.smallest_effect is not None:
            object.__setattr__(self, "smallest_effect", positive_number(self.smallest_effect, "smallest_effect"))

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`ipcausal.test` these stand for (all but ``smallest_effect``).

        ``design`` is among them only when set.
        """
        out: dict[str, Any] = {"alpha": self.alpha, "correction": self.correction, "m0": self.m0,
                               "method": self.method, "n_resamples": self.n_resamples,
                               "alternative": self.alternative, "margin": self.margin}
        if self.design is not None:
            out["design"] = self.design
        return out
