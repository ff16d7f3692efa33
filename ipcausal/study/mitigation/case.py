"""A registered case without and with a mitigation, on the same pairs (issue 21 item 2, SPEC §10).

:func:`run_case_mitigation` takes a prepared case (:class:`~ipcausal.study.prepare.PreparedCase`: its
demo set or given pairs, ``limit``, scorer, ``seed``) as :func:`~ipcausal.study.cases.run_case` does,
applies the :class:`~ipcausal.study.mitigation.Mitigation` to both prompts of every pair (each rewrite
checked with :func:`~ipcausal.interventions.check_pair`:
a pair whose rewrite may have changed S is reported, counted and left out of *both* runs), runs
the pairs without and with it through one response cache (``out/cache.sqlite``: a rerun sends
nothing new), scores both with the case's own scorer, and reports per background pair:

* **interval outcomes** (education, echo, age): the effect (mean Δ) without and with; the change,
  mean D = Δ_with − Δ_without with its interval and the paired sign-flip test of H0 "per pair the
  effects with and without are exchangeable" (:func:`ipcausal.study.compare.compare`; the unit
  of randomisation is the pair, or the whole cluster where pairs share a unit — the case's
  cluster column); and "removed" only when the TOST of Δ_with within the case's ``margin``
  shows it equivalent to zero.  Without a margin, removal is *not assessed* (said so).
* **similarity outcomes** (culture): the median similarity without and with (the case's sign
  test against m0, "less"); the change, mean of s_with − s_without per pair with the same paired
  sign-flip test (H0: exchangeable); and "removed" only when the sign test shows median(s_with)
  *above* m0 (alternative "greater") at ``alpha``.

A non-rejection is never read as removal.  Files written into ``out``: ``mitigation.json``,
``mitigation.txt``, ``checks.csv`` (the rewrite check of every pair, with its reason) and
``pairs_without.jsonl``/``pairs_with.jsonl`` (the two arms, scored, on the pairs compared).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ipcausal.pairs import PairSet
from ipcausal.study.mitigation.results import CaseMitigation, mitigation_table, write_mitigation
from ipcausal.study.mitigation.transforms import as_mitigation
from ipcausal.study.options import RunOptions

__all__ = ["CaseMitigation", "run_case_mitigation", "tag_backgrounds", "mitigation_table"]


def tag_backgrounds(pairs: PairSet) -> PairSet:
    """Write each prompt's background into it as a ``[background]`` tag (deprecated; goes in 0.3).

    The SCM simulator no longer needs it: it reads the built-in cases' own cues (a stated belief or
    age, culture markers, dialect features), and is told the pairs' backgrounds with
    ``get_backend("simulated", known=pairs)``.  A tag is removed by the mitigation ``strip`` and
    kept by the others.

    Examples
    --------
    >>> import ipcausal, warnings
    >>> ps = ipcausal.PairSet.from_records([{"pair_id": 1, "background_i": "young", "background_j": "old",
    ...                                      "x_i": "I am 20.", "x_j": "I am 70."}])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     tag_backgrounds(ps)["x_j"].iloc[0]
    '[old] I am 70.'
    """
    warnings.warn("tag_backgrounds is deprecated and goes in 0.3: the simulator reads the cases' own cues, "
                  "or is told the backgrounds with get_backend('simulated', known=pairs)", DeprecationWarning,
                  stacklevel=2)
    return _tag(pairs)


def _tag(pairs: PairSet) -> PairSet:
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    df = pairs.to_frame()
    for s in ("i", "j"):
        df[f"x_{s}"] = ["[" + str(b) + "] " + str(x) for b, x in zip(df[f"background_{s}"], df[f"x_{s}"])]
    return PairSet.from_frame(df)


def _reason(row: Mapping[str, Any]) -> str:
    parts = [f"{s}: {row[f'problems_{s}']}" for s in ("i", "j") if row[f"problems_{s}"]]
    return "; ".join(parts)


def run_case_mitigation(
    case: Any,
    backend: Any,
    mitigation: Any,
    *,
    out: str | os.PathLike[str] | None = None,
    cache: Any = None,
    tag: bool = False,
    pairs: Any = None,
    scorer: Any = None,
    limit: int | None = None,
    config: Any = None,
    unparseable: str | None = None,
    seed: int | None = None,
) -> CaseMitigation:
    """Run a prepared case without and with ``mitigation`` on the same pairs; per background pair, what it changed.

    The module docstring states the tests.  The pairs, scorer, generation settings, cluster
    column and seed are the :class:`~ipcausal.study.prepare.PreparedCase`'s, as
    :func:`~ipcausal.study.cases.run_case` uses them; the margin (interval outcomes) and
    m0/alpha/correction (both) are the case's ``tests``.

    Parameters
    ----------
    case : PreparedCase, str or Case
        The case (:func:`~ipcausal.study.prepare.prepare_case`); a name or Case is prepared with the defaults.
    backend : Backend
        The model.
    mitigation : Mitigation or {"markers", "dialect", "strip", "instruct"}
        The countermeasure (a :class:`~ipcausal.study.mitigation.Mitigation` carries an instruction).
    out : path, optional
        Run folder: ``mitigation.json``, ``mitigation.txt``, ``checks.csv``, ``pairs_without.jsonl``,
        ``pairs_with.jsonl``; its ``cache.sqlite``
        is the response cache unless ``cache`` is given.
    cache : path or ResponseCache, optional
        One response cache for both runs (default ``out/cache.sqlite``, else in memory).
    tag : bool
        Deprecated (goes in 0.3): write each prompt's background into it as a ``[background]`` tag
        first; the simulator now reads the cases' own cues (or its ``known`` mapping).
    pairs, scorer, limit, config, unparseable, seed
        Deprecated (until 0.3): the keywords of ``prepare_case``; pass ``prepare_case(case, …)``.

    Returns
    -------
    CaseMitigation

    Examples
    --------
    >>> from ipcausal.study.prepare import prepare_case
    >>> from ipcausal.testing import SimulatedModel
    >>> from ipcausal.scoring import get_scorer
    >>> sim = SimulatedModel(effect=2.0, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> read = sim.answer_scorer  # the simulator's "Answer: <v>"
    >>> res = run_case_mitigation(prepare_case("echo", scorer=read, limit=12), sim, "strip")
    >>> g = res.result.groups[0]  # strip removes the stated belief, the simulator's cue: both prompts become one
    >>> g.effect_without > 1, g.effect_with == 0, g.change_reject, res.status(g)
    (True, True, True, 'not assessed')
    """
    from ipcausal.backends.base import Backend
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.study.mitigation.evaluate import evaluate_runs
    from ipcausal.study.prepare import PREPARE_KEYS, as_prepared

    m = as_mitigation(mitigation)
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend")
    if not isinstance(tag, bool):
        raise TypeError(f"`tag` must be True or False, got {tag!r}")
    if tag:
        warnings.warn("run_case_mitigation(tag=True) is deprecated and goes in 0.3: the simulator reads the cases' "
                      "own cues, or is told the backgrounds with get_backend('simulated', known=pairs)",
                      DeprecationWarning, stacklevel=2)
    prepared = as_prepared(case, dict(zip(PREPARE_KEYS, (pairs, scorer, limit, config, unparseable, seed))),
                           "run_case_mitigation")
    case, ps, config = prepared.case, prepared.pairs, prepared.config
    if tag:
        ps = _tag(ps)
    if config.n > 1:
        raise ValueError("`config`: the mitigation comparison takes one answer per prompt (n = 1)")
    outdir = Path(out) if out is not None else None
    if outdir is not None:
        if outdir.exists() and not outdir.is_dir():
            raise ValueError(f"`out` must be a folder, but {str(outdir)!r} is a file")
        outdir.mkdir(parents=True, exist_ok=True)
    if cache is None:
        cache = outdir / "cache.sqlite" if outdir is not None else ":memory:"
    own = not isinstance(cache, ResponseCache)
    store = ResponseCache(cache) if own else cache
    try:
        before = len(store)
        res = evaluate_runs(ps, backend, m, scorer=prepared.scorer, scoring={"unparseable": prepared.unparseable},
                            tests=case.tests, options=RunOptions(config=config, cache=store),
                            cluster=prepared.cluster, rng=prepared.seed)
        sent = len(store) - before
    finally:
        if own:
            store.close()
    checks = res.checks.assign(reason=[_reason(r) for r in res.checks.to_dict("records")])
    cm = CaseMitigation.of(res, m, sent=sent, checks=checks, case=case)
    return replace(cm, files=write_mitigation(cm, outdir)) if outdir is not None else cm
