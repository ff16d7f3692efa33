"""A mitigation's evaluation: the pairs run without and with it, and what it changed (SPEC §10).

:func:`evaluate_mitigation` runs the pairs without and with the mitigation (one shared response
cache), scores both, and per background pair reports the effect without, the effect with, the
test of the change (:func:`ipcausal.study.compare.compare`: per pair D = Δ_with − Δ_without, sign
flips, whole clusters with ``cluster``), and "removed" only when Δ_with is *shown* equivalent to
zero within ``margin`` (TOST of :func:`ipcausal.test`) — never from a non-rejection.
:func:`evaluate_runs` is its engine, shared with a case run with a mitigation
(:mod:`ipcausal.study.mitigation.case`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ipcausal.pairs import PairSet
from ipcausal.study.defaults import DEFAULTS
from ipcausal.study.mitigation.results import MitigationGroup, MitigationResult
from ipcausal.study.mitigation.transforms import Mitigation, apply_mitigation, as_mitigation

__all__ = ["evaluate_mitigation", "evaluate_runs", "RUN_KEYS", "TEST_KEYS"]

#: The keys of ``run_options`` (the run's request options) and of ``tests`` (the test options).
RUN_KEYS = ("config", "system", "concurrency", "batch_size", "progress", "preflight")
TEST_KEYS = ("alpha", "correction", "m0", "method", "n_resamples", "alternative", "margin")


def _score(answered: PairSet, scorer: Any, scoring: Mapping[str, Any] | None) -> PairSet:
    """Score a run with a Scorer, a scorer name, or a ``str -> float`` rater (the essay scorer's)."""
    from ipcausal.scoring import score_pairs
    from ipcausal.scoring.registry import Scorer

    kw = dict(scoring or {})
    if isinstance(scorer, (Scorer, str)):
        return score_pairs(answered, scorer, **kw).pairs
    return score_pairs(answered, "essay", rater=scorer, **kw).pairs


def evaluate_mitigation(
    pairs: PairSet,
    backend: Any,
    mitigation: Mitigation | str,
    *,
    scorer: Any,
    scoring: Mapping[str, Any] | None = None,
    margin: float | None = None,
    cache: Any = None,
    run_options: Mapping[str, Any] | None = None,
    alpha: float = DEFAULTS["alpha"],
    method: str = DEFAULTS["method"],
    cluster: str | None = None,
    rng: int | np.random.Generator | None = None,
) -> MitigationResult:
    """Run the pairs without and with ``mitigation`` and test, per background pair, what it changed.

    H0 of the change test, per background pair: the effects with and without the mitigation are
    exchangeable per pair (each D = Δ_with − Δ_without keeps or flips its sign with probability
    1/2); the unit of randomisation is the pair, or the cluster with ``cluster``.  "Removed" is
    claimed only when the TOST of Δ_with against ``±margin`` rejects (``equivalence ==
    "equivalent"``).  Both runs and all tests use the same pairs: those that passed the rewrite
    check and were scored in both runs.

    Parameters
    ----------
    pairs : PairSet
        Unanswered pairs (``x_i``/``x_j``).
    backend : Backend
        The model (any backend, the SCM simulator included).
    mitigation : Mitigation or {"markers", "dialect", "strip", "instruct"}
        The countermeasure.
    scorer : Scorer, str or callable
        A Scorer (:func:`ipcausal.scoring.get_scorer`, a case's own), a scorer name of
        :func:`ipcausal.scoring.score_pairs` (``"mcq"``, ``"essay"`` …), or a ``str -> float``
        rater (e.g. ``SimulatedModel.score``).  A similarity scorer is tested as
        :mod:`ipcausal.study.mitigation.case` says (change: s_with − s_without per pair; removed:
        median(s_with) shown above m0, which is 0.8 here).
    scoring : mapping, optional
        More keywords for ``score_pairs`` (``backend`` of a judge, ``k`` …).
    margin : float, optional
        Equivalence margin ε > 0 on mean Δ_with; without it, removal is not assessed.
    cache : path or ResponseCache, optional
        One response cache for both runs (default: an in-memory cache).
    run_options : mapping, optional
        Keywords of :func:`ipcausal.run`: ``config``, ``system``, ``concurrency``, ``batch_size``,
        ``progress`` (default False), ``preflight``.  ``"instruct"`` puts its instruction before ``system``.
    alpha, method, rng
        As in :func:`ipcausal.test`; the correction (Holm) runs over the background pairs.
    cluster : str, optional
        Column naming each pair's cluster (e.g. ``prompt_id``): clusters are flipped whole.

    Returns
    -------
    MitigationResult

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> from ipcausal.study.mitigation import evaluate_mitigation
    >>> sim = SimulatedModel(effect=1.0, noise=0.5, seed=1)
    >>> pairs = sim.study(n=30, rng=0).to_frame()[["pair_id", "background_i", "background_j", "x_i", "x_j"]]
    >>> import ipcausal
    >>> res = evaluate_mitigation(ipcausal.PairSet.from_frame(pairs), sim, "markers", scorer=sim.score,
    ...                           margin=0.2, rng=0)
    >>> g = res.groups[0]
    >>> g.effect_without > 0.5, abs(g.effect_with) < 0.1, g.change_reject, g.removed
    (True, True, True, True)
    """
    from ipcausal.scoring.registry import Scorer

    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    m = as_mitigation(mitigation)
    if not (callable(scorer) or isinstance(scorer, (str, Scorer))):
        raise TypeError("`scorer` must be a scorer name or a callable str -> float (or a Scorer)")
    if margin is not None and (isinstance(margin, bool) or not isinstance(margin, (int, float))
                               or not math.isfinite(margin) or margin <= 0):
        raise ValueError(f"`margin` must be a positive finite number or None, got {margin!r}")
    if scoring is not None and not isinstance(scoring, Mapping):
        raise TypeError("`scoring` must be a mapping of score_pairs keywords or None")
    if run_options is not None and not isinstance(run_options, Mapping):
        raise TypeError("`run_options` must be a mapping of ipcausal.run keywords or None")
    opts = dict(run_options or {})
    unknown = sorted(set(opts) - set(RUN_KEYS))
    if unknown:
        raise ValueError(f"`run_options` has unknown key(s) {unknown}; allowed: {list(RUN_KEYS)}")
    if cluster is not None and cluster not in pairs:
        raise ValueError(f"`cluster` names no column of `pairs`: {cluster!r}")
    return evaluate_runs(pairs, backend, m, scorer=scorer, scoring=scoring,
                         tests={"alpha": alpha, "method": method, "margin": margin}, cache=cache,
                         run_options=opts, cluster=cluster, rng=rng)


def _model_label(ps: PairSet) -> str:
    """The run's single model name (the with/without runs must share it to be tested alike)."""
    if "model" in ps:
        names = ps["model"].dropna().astype(str).unique()
        if len(names) == 1:
            return str(names[0])
    return "model"


def _similarity(ps: PairSet) -> PairSet:
    """A similarity run as pseudo-scores (score_i = 0, score_j = s): compare() then tests s_a − s_b per pair.

    s is symmetric, so every pair is first stored in its background pair's direction as
    :func:`ipcausal.study.groups.orient` (the rule of ``ipcausal.test``) gives it: a pseudo-Δ never flips.
    """
    from ipcausal.study.groups import orient

    df = ps.to_frame()
    bi, bj = df["background_i"].astype(str).tolist(), df["background_j"].astype(str).tolist()
    key = [(min(a, b), max(a, b)) for a, b in zip(bi, bj)]
    counts: dict[tuple[str, str], list[int]] = {}
    for k, a in zip(key, bi):  # per background pair: (pairs stored low -> high, pairs)
        c = counts.setdefault(k, [0, 0])
        c[0] += a == k[0]
        c[1] += 1
    way = {k: orient(k[0], k[1], f, n, rank=None, one_sided=False) for k, (f, n) in counts.items()}
    flip = np.array([(a, b) != way[k] for a, b, k in zip(bi, bj, key)], dtype=bool)
    df.loc[flip, ["background_i", "background_j"]] = df.loc[flip, ["background_j", "background_i"]].to_numpy()
    return PairSet.from_frame(df.assign(score_i=0.0, score_j=df["similarity"].astype(float)).drop(columns="similarity"))


def evaluate_runs(pairs: PairSet, backend: Any, mitigation: Any, *, scorer: Any, scoring: Mapping[str, Any] | None,
                  tests: Mapping[str, Any], cache: Any, run_options: Mapping[str, Any], cluster: str | None,
                  rng: Any) -> MitigationResult:
    """The two runs and their tests: the engine of :func:`evaluate_mitigation` and of
    :func:`~ipcausal.study.mitigation.case.run_case_mitigation`.

    ``tests`` holds :func:`ipcausal.test` options (``alpha``, ``correction``, ``m0``, ``method``,
    ``n_resamples``, ``alternative``, ``margin``); the outcome follows the scored runs.

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=1.0, noise=0.5, seed=1)
    >>> ps = PairSet.from_frame(sim.study(n=20, rng=0).to_frame()[["pair_id", "background_i", "background_j",
    ...                                                             "x_i", "x_j"]])
    >>> r = evaluate_runs(ps, sim, "markers", scorer=sim.score, scoring=None, tests={"margin": 0.3},
    ...                   cache=None, run_options={"progress": False}, cluster=None, rng=0)
    >>> r.groups[0].change < -0.5, r.removed
    (True, True)
    """
    import ipcausal
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.outcomes import directed
    from ipcausal.stats._validate import as_generator
    from ipcausal.study.compare import compare

    m = as_mitigation(mitigation)
    unknown = sorted(set(tests) - set(TEST_KEYS))
    if unknown:
        raise ValueError(f"`tests` has unknown key(s) {unknown}; allowed: {list(TEST_KEYS)}")
    tk = {k: v for k, v in tests.items() if v is not None}
    margin, alpha = tk.pop("margin", None), float(tk.get("alpha", 0.05))
    opts = dict(run_options)
    opts.setdefault("progress", False)
    cache = ResponseCache(":memory:") if cache is None else cache
    mitigated, checks = apply_mitigation(pairs, m, cache=cache)
    if len(mitigated) == 0:
        raise ValueError(f"`mitigation` {m.name!r}: every pair failed the rewrite check; nothing to compare")
    gen = as_generator(rng)
    keep_ids = set(mitigated["pair_id"].astype(str))
    base = PairSet.from_frame(pairs.to_frame().loc[pairs["pair_id"].astype(str).isin(keep_ids).to_numpy()])
    without = _score(ipcausal.run(base, backend, cache=cache, **opts), scorer, scoring)
    with_opts = dict(opts)
    if m.system is not None:
        with_opts["system"] = m.system if not opts.get("system") else f"{m.system}\n\n{opts['system']}"
    with_ = _score(ipcausal.run(mitigated, backend, cache=cache, **with_opts), scorer, scoring)
    common = set(without["pair_id"].astype(str)) & set(with_["pair_id"].astype(str))
    if not common:
        raise ValueError(f"`mitigation` {m.name!r}: no pair was scored in both runs; nothing to compare")

    def only(ps: PairSet) -> PairSet:
        return PairSet.from_frame(ps.to_frame().loc[ps["pair_id"].astype(str).isin(common).to_numpy()]
                                  .drop(columns=["model"], errors="ignore").assign(model=_model_label(ps)))

    w0, w1 = only(without), only(with_)
    interval = directed(w0.outcome)
    from ipcausal.study.options import Design

    base_kw = dict(design=Design(outcome=w0.outcome), cluster=cluster, **tk)
    r0 = ipcausal.test(w0, rng=gen, **base_kw)
    r1 = ipcausal.test(w1, rng=gen, margin=margin if interval else None, **base_kw)
    above = None
    if not interval:  # removal: median(s_with) shown above m0 by the sign test ("greater")
        above = {g.group: g for g in ipcausal.test(w1, rng=gen, **{**base_kw, "alternative": "greater"}).groups}
    ck = {k: tk[k] for k in ("alpha", "correction", "method", "n_resamples") if k in tk}
    c0, c1 = (w0, w1) if interval else (_similarity(w0), _similarity(w1))
    rc = compare(c1, c0, labels=("with", "without"), rng=gen, cluster=cluster, **ck)
    by0, by1 = {g.group: g for g in r0.groups}, {g.group: g for g in r1.groups}
    groups = []
    for c in rc.groups:
        g0, g1 = by0[c.group], by1[c.group]
        if interval:
            eq = g1.equivalence
            verdict, eq_p = (eq.verdict, eq.pvalue) if eq is not None else (None, None)
            removed = verdict == "equivalent"
        else:
            ga = above[c.group]
            verdict = "above m0" if ga.reject else "not shown above m0"
            eq_p, removed = float(ga.pvalue_adjusted), bool(ga.reject)
        groups.append(MitigationGroup(
            group=c.group, background_a=c.background_a, background_b=c.background_b, n=c.n,
            effect_without=g0.effect, pvalue_without=g0.pvalue_adjusted, reject_without=g0.reject,
            effect_with=g1.effect, pvalue_with=g1.pvalue_adjusted, reject_with=g1.reject,
            change=c.effect, change_ci_low=c.ci_low, change_ci_high=c.ci_high, change_pvalue=c.pvalue_adjusted,
            change_reject=c.reject, margin=margin if interval else None, equivalence=verdict,
            equivalence_pvalue=eq_p, removed=removed))
    return MitigationResult(
        mitigation=m.name, groups=tuple(groups), n_pairs=len(pairs), n_failed_check=int((~checks["trusted"]).sum()),
        n_not_undone=int((checks["not_undone"] != "").sum()), n_compared=len(common), checks=checks,
        without=r0, with_=r1, comparison=rc, pairs_without=w0, pairs_with=w1, margin=margin, alpha=alpha)
