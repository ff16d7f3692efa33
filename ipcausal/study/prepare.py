"""A case ready to run: :class:`PreparedCase`, made once by :func:`prepare_case` before a model is asked.

Everything a run takes from its case is decided and checked here, once: the pairs (the case's
embedded demo set or given pairs, ``limit``), the :class:`~ipcausal.cases.PairSource` they come
from (its label, token budget and recorded settings), the scorer, the generation settings, the
natural cluster column (:func:`ipcausal.study.groups.natural_cluster`), the policy for
unparseable answers, the seed and the case's test options.  :func:`~ipcausal.study.cases.run_case`,
:func:`~ipcausal.study.cases.run_case_sequential`,
:func:`~ipcausal.study.mitigation.run_case_mitigation` and a bench cell take the PreparedCase and
compute none of it again.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ipcausal.pairs import PairSet

__all__ = ["PreparedCase", "prepare_case", "as_prepared", "case_test_options", "max_tokens_for", "check_limit"]


def max_tokens_for(case: Any, *, demo: bool) -> int:
    """The generation budget of ``case``: its demo set's, or its full-size pairs'.

    Examples
    --------
    >>> max_tokens_for("echo", demo=True), max_tokens_for("education", demo=False)
    (8, 640)
    """
    from ipcausal.cases.registry import get_case

    return get_case(case).source(given=not demo).max_tokens


def case_test_options(case: Any, pairs: PairSet) -> tuple[dict[str, Any], str | None]:
    """The keywords of :func:`ipcausal.test` for a run of ``case`` on ``pairs``, and a note or None.

    A case whose test options name a cue column (``strata``) gets the per-cue rows when the
    pairs have that column; pairs built without it (an older build, the user's own) are tested
    without them, and the note says so.
    """
    options = case.tests.kwargs()
    design = options.get("design")
    column = design.strata if design is not None else None
    if column is not None and column not in pairs:
        options["design"] = replace(design, strata=None)
        return options, f"not run: the pairs have no `{column}` column (build them again to record it)"
    return options, None


def check_limit(limit: Any) -> None:
    """``limit`` must be a positive integer or None (``ValueError`` naming it)."""
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ValueError(f"`limit` must be a positive integer or None, got {limit!r}")


@dataclass(frozen=True)
class PreparedCase:
    """A case with its pairs, scorer, generation settings and test options, checked (:func:`prepare_case`).

    Attributes
    ----------
    case : Case
        The case, with the test options of this run in its ``tests``.
    pairs : PairSet
        The pairs to run (``limit`` applied).
    label : str
        Where the pairs come from (the demo set's label, or ``"given pairs"``): a run's "pairs from".
    source : PairSource
        The case's source of these pairs (token budget, the settings a run records).
    given : bool
        Whether the pairs were given (else the case's embedded demo set).
    scorer : Scorer
        How the responses are scored.
    config : GenerationConfig
        The generation settings (default: greedy, ``seed``, the source's token budget).
    cluster : str or None
        The natural cluster column of the pairs (whole clusters are flipped), or ``None``.
    unparseable : {"exclude", "zero"}
        The policy for unscoreable answers.
    seed : int
        The seed of the pairs' sampling and of the tests' randomness.
    """

    case: Any
    pairs: PairSet
    label: str
    source: Any
    given: bool
    scorer: Any
    config: Any
    cluster: str | None
    unparseable: str
    seed: int

    def __iter__(self) -> Iterator[Any]:
        """``(pairs, label, scorer)``, what :func:`prepare_case` returned before 0.2 (deprecated)."""
        warnings.warn("unpacking prepare_case(...) as (pairs, source, scorer) is deprecated and goes in 0.3; "
                      "read its fields (.pairs, .label, .scorer) instead", DeprecationWarning, stacklevel=2)
        return iter((self.pairs, self.label, self.scorer))

    def with_judge(self, judge: Any) -> PreparedCase:
        """The same case scored with the judge backend ``judge`` (the case's judged scorer, if it has one)."""
        return self if judge is None else replace(self, scorer=self.case.scorer_for(self.given, judge=judge))

    def test_options(self, pairs: PairSet) -> tuple[dict[str, Any], str | None]:
        """The keywords of :func:`ipcausal.test` for the scored ``pairs`` and a note (:func:`case_test_options`)."""
        return case_test_options(self.case, pairs)


def _case_pairs(case: Any, pairs: Any, limit: int | None, seed: int) -> tuple[PairSet, str, Any]:
    """``(pairs, label, source)``: the given pairs (a PairSet or file) or the case's demo set, and the
    :class:`~ipcausal.cases.PairSource` whose budget and scorer a run on them uses."""
    if isinstance(pairs, (str, os.PathLike)):
        pairs = PairSet.read(pairs)
    check_limit(limit)
    if pairs is None:
        src = case.source(given=False)
        ps = src.load(seed, limit if limit is not None else src.limit)
        if not isinstance(ps, PairSet):
            raise TypeError(f"case {case.name!r}: its demo `load` returned a {type(ps).__name__}, not a PairSet")
        return ps, src.label, src
    if isinstance(pairs, PairSet):
        src = case.source(given=True)
        return (pairs.head(limit) if limit is not None else pairs), "given pairs", src
    raise TypeError("`pairs` must be a PairSet, a file path or None")


def prepare_case(
    case: Any,
    pairs: PairSet | str | os.PathLike[str] | None = None,
    *,
    scorer: Any = None,
    judge: bool = False,
    limit: int | None = None,
    config: Any = None,
    unparseable: str = "exclude",
    seed: int = 0,
    tests: Any = None,
) -> PreparedCase:
    """Check a case's inputs before any model is loaded or asked, and fix them in a :class:`PreparedCase`.

    Reads (or builds) the pairs, applies ``limit``, picks the scorer (``scorer``, a Scorer or a
    registered name; else the case's for these pairs, its judged variant with ``judge``) and
    checks with :func:`ipcausal.scoring.check_scorer` that the pairs have the columns it needs and
    that a judge is given when it needs one (``judge``: whether a judge backend will be given;
    :meth:`PreparedCase.with_judge` adds it).  ``config`` (a GenerationConfig) replaces the default
    generation settings (greedy, ``seed``, the case's token budget for these pairs: for the
    built-ins 40/112/8 tokens on the demo sets of culture/education/echo, 256/640/16 on given
    pairs); ``tests`` (a :class:`~ipcausal.study.options.TestOptions`) the case's test options.
    ``ipcausal case`` calls it before it loads the model.

    Examples
    --------
    >>> prepared = prepare_case("echo", limit=4)
    >>> len(prepared.pairs), prepared.label, prepared.scorer.name, prepared.config.max_tokens
    (4, 'embedded demo set', 'mcq', 8)
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records([{"pair_id": 1, "background_i": "true_belief",
    ...     "background_j": "false_belief", "x_i": "q?", "x_j": "q?"}])
    >>> prepare_case("echo", ps)
    Traceback (most recent call last):
    ...
    ValueError: scorer 'mcq' needs the column `options` in `pairs`
    """
    from ipcausal.backends.base import GenerationConfig
    from ipcausal.cases.registry import get_case
    from ipcausal.scoring import check_policy, check_scorer, get_scorer
    from ipcausal.study.groups import natural_cluster
    from ipcausal.study.options import TestOptions

    case = get_case(case)
    check_limit(limit)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer, got {seed!r}")
    check_policy(unparseable)
    if not isinstance(judge, bool):
        raise TypeError(f"`judge` must be True or False, got {judge!r}")
    if config is not None and not isinstance(config, GenerationConfig):
        raise TypeError("`config` must be a GenerationConfig")
    if tests is not None:
        if not isinstance(tests, TestOptions):
            raise TypeError(f"`tests` must be a TestOptions or None, got {type(tests).__name__}")
        case = replace(case, tests=tests)
    ps, label, src = _case_pairs(case, pairs, limit, seed)
    if len(ps) == 0:
        raise ValueError("`pairs` holds no pairs: there is nothing to run")
    given = pairs is not None
    if scorer is None:
        made = case.judged if judge and case.judged is not None else case.scorer_for(given=given)
    else:
        made = get_scorer(scorer)
    check_scorer(made, ps.columns, backend=True if judge else None)
    if config is None:
        config = GenerationConfig(max_tokens=src.max_tokens, temperature=0.0, seed=seed)
    return PreparedCase(case, ps, label, src, given, made, config, natural_cluster(ps), unparseable, seed)


#: The keywords of a run that :func:`prepare_case` now fixes (accepted by the runs until 0.3, with a warning).
PREPARE_KEYS = ("pairs", "scorer", "limit", "config", "unparseable", "seed")


def as_prepared(case: Any, legacy: Mapping[str, Any], where: str) -> PreparedCase:
    """``case`` as a PreparedCase: itself, or ``prepare_case(case, **legacy)`` for a case name or Case.

    ``legacy`` holds the keywords ``where`` (a run function) took before 0.2 (:data:`PREPARE_KEYS`;
    ``None``: not given); giving any warns (``DeprecationWarning``), and giving one with a
    PreparedCase is an error, since the PreparedCase fixes it.

    Examples
    --------
    >>> as_prepared("echo", {"limit": None}, "run_case").pairs is not None
    True
    """
    given = {k: v for k, v in legacy.items() if v is not None}
    if isinstance(case, PreparedCase):
        if given:
            k = sorted(given)[0]
            raise TypeError(f"`{k}`: the PreparedCase fixes it; give it to prepare_case(..., {k}=...) instead")
        return case
    if given:
        keys = ", ".join(f"{k}=" for k in given)
        warnings.warn(f"{where}(case, ..., {keys}) is deprecated and goes in 0.3; pass "
                      f"prepare_case(case, {keys}) as the case instead", DeprecationWarning, stacklevel=3)
    pairs = given.pop("pairs", None)
    return prepare_case(case, pairs, **given)
