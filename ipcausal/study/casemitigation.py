"""A registered case without and with a mitigation, on the same pairs (issue 21 item 2, SPEC §10).

:func:`run_case_mitigation` prepares a case's pairs exactly as :func:`~ipcausal.study.cases.run_case`
does (its demo set or given pairs, ``limit``, ``seed``), applies the :class:`~ipcausal.study.mitigation.Mitigation`
to both prompts of every pair (each rewrite checked with :func:`~ipcausal.interventions.check_pair`:
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
``mitigation.txt`` and ``checks.csv`` (the rewrite check of every pair, with its reason).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ipcausal.pairs import PairSet
from ipcausal.study.mitigation import MitigationGroup, MitigationResult, _mitigation, _model_label, apply_mitigation

__all__ = ["CaseMitigation", "run_case_mitigation", "tag_backgrounds", "mitigation_table", "bench_mitigation"]

_TEST_KEYS = ("alpha", "correction", "m0", "method", "n_resamples", "alternative", "margin")


def tag_backgrounds(pairs: PairSet) -> PairSet:
    """Write each prompt's background into it as a ``[background]`` tag (what the simulator reads).

    :class:`~ipcausal.testing.SimulatedModel` infers B from a ``[name]`` tag; the built-in cases'
    cues (a stated age, a belief, a dialect) mean nothing to it.  A tag in the text is removed by the
    mitigation ``strip`` (so the simulated effect goes to 0: truly removed) and kept by the others
    (``markers``, ``dialect``, ``instruct``: the simulated effect stays: truly not removed).

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records([{"pair_id": 1, "background_i": "young", "background_j": "old",
    ...                                      "x_i": "I am 20.", "x_j": "I am 70."}])
    >>> tag_backgrounds(ps)["x_j"].iloc[0]
    '[old] I am 70.'
    """
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    df = pairs.to_frame()
    for s in ("i", "j"):
        df[f"x_{s}"] = ["[" + str(b) + "] " + str(x) for b, x in zip(df[f"background_{s}"], df[f"x_{s}"])]
    return PairSet.from_frame(df)


def _similarity(ps: PairSet) -> PairSet:
    """A similarity run as pseudo-scores (score_i = 0, score_j = s): compare() then tests s_a − s_b per pair."""
    df = ps.to_frame()
    return PairSet.from_frame(df.assign(score_i=0.0, score_j=df["similarity"].astype(float)).drop(columns="similarity"))


def evaluate_runs(pairs: PairSet, backend: Any, mitigation: Any, *, scorer: Any, scoring: Mapping[str, Any] | None,
                  tests: Mapping[str, Any], cache: Any, run_options: Mapping[str, Any], cluster: str | None,
                  rng: Any) -> MitigationResult:
    """The two runs and their tests (the engine of :func:`evaluate_mitigation` and :func:`run_case_mitigation`).

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
    from ipcausal.study.mitigation import _score

    m = _mitigation(mitigation)
    unknown = sorted(set(tests) - set(_TEST_KEYS))
    if unknown:
        raise ValueError(f"`tests` has unknown key(s) {unknown}; allowed: {list(_TEST_KEYS)}")
    tk = {k: v for k, v in tests.items() if v is not None}
    margin, alpha = tk.pop("margin", None), float(tk.get("alpha", 0.05))
    opts = dict(run_options)
    opts.setdefault("progress", False)
    cache = ResponseCache(":memory:") if cache is None else cache
    mitigated, checks = apply_mitigation(pairs, m)
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
    base_kw = dict(outcome=w0.outcome, cluster=cluster, **tk)
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


def _reason(row: Mapping[str, Any]) -> str:
    parts = [f"{s}: {row[f'problems_{s}']}" for s in ("i", "j") if row[f"problems_{s}"]]
    return "; ".join(parts)


@dataclass(frozen=True)
class CaseMitigation:
    """What :func:`run_case_mitigation` returns: the comparison of one case without and with a mitigation.

    ``result`` is the :class:`~ipcausal.study.mitigation.MitigationResult` (per background pair: the
    effect without and with, the change test, removed); ``outcome`` is ``"interval"`` or
    ``"similarity"``; ``margin`` the case's equivalence margin (interval: ``None`` means removal
    was not assessed); ``m0`` the similarity null median; ``sent`` the requests this call sent
    to the model (0 on a rerun from the cache); ``checks`` the rewrite check of every pair with
    ``reason``; ``files`` what was written.
    """

    case: str
    title: str
    mitigation: str
    instruction: str | None
    outcome: str
    margin: float | None
    m0: float
    result: MitigationResult = field(repr=False)
    sent: int
    checks: pd.DataFrame = field(repr=False)
    files: dict[str, str] = field(default_factory=dict)

    def removal_rule(self) -> str:
        """How "removed" is decided here, in words."""
        a = self.result.alpha
        if self.outcome != "interval":
            return (f"removed = the sign test shows the median similarity with the mitigation above m0 = {self.m0:g} "
                    f"(alternative 'greater', level {a:g}, corrected over the background pairs)")
        if self.margin is None:
            return "removal not assessed: the case has no equivalence margin (set one to assess it)"
        return (f"removed = the TOST shows the mean effect with the mitigation within ±{self.margin:g} "
                f"(level {a:g})")

    def status(self, g: MitigationGroup) -> str:
        """``"yes"``, ``"no"`` or ``"not assessed"`` for one background pair."""
        if self.outcome == "interval" and self.margin is None:
            return "not assessed"
        return "yes" if g.removed else "no"

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        failed = self.checks.loc[~self.checks["trusted"]]
        return {"case": self.case, "title": self.title, "mitigation": self.mitigation,
                "instruction": self.instruction, "outcome": self.outcome, "margin": self.margin,
                "m0": self.m0 if self.outcome != "interval" else None, "alpha": r.alpha,
                "null_hypothesis": r.null_hypothesis, "change_test": r.method,
                "removal_rule": self.removal_rule(), "n_pairs": r.n_pairs, "n_failed_check": r.n_failed_check,
                "n_not_undone": r.n_not_undone, "n_compared": r.n_compared, "sent": self.sent,
                "groups": [{**g.to_dict(), "removed": self.status(g)} for g in r.groups],
                "failed_pairs": [{"pair_id": str(p), "reason": why}
                                 for p, why in zip(failed["pair_id"], failed["reason"])]}

    def __str__(self) -> str:
        return mitigation_table(self)


def mitigation_table(res: CaseMitigation) -> str:
    """The per-background-pair table of a :class:`CaseMitigation` (what ``ipcausal case --mitigation`` prints).

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=2.0, seed=1, backgrounds=("young", "old"))
    >>> res = run_case_mitigation("age", sim, "strip", limit=12, tag=True)
    >>> print(mitigation_table(res).splitlines()[0])
    Mitigation 'strip' on case 'age': 12 of 12 pairs compared (0 dropped by the rewrite check); interval outcome
    """
    r = res.result
    eff = "mean Δ" if res.outcome == "interval" else "median s"
    lines = [f"Mitigation {res.mitigation!r} on case {res.case!r}: {r.n_compared} of {r.n_pairs} pairs compared "
             f"({r.n_failed_check} dropped by the rewrite check); {res.outcome} outcome",
             f"  H0 of the change: {r.null_hypothesis}",
             f"  {res.removal_rule()}",
             f"  {'pair':<28} {eff + ' without':>16} {eff + ' with':>14} {'change [CI]':>26} {'p':>8}  removed"]
    for g in r.groups:
        ci = f"{g.change:+.3f} [{g.change_ci_low:+.3f}, {g.change_ci_high:+.3f}]"
        lines.append(f"  {g.group:<28} {g.effect_without:>16.4g} {g.effect_with:>14.4g} {ci:>26} "
                     f"{g.change_pvalue:>8.4f}  {res.status(g)}")
    if r.n_failed_check:
        lines.append(f"  {r.n_failed_check} pair(s) whose rewrite may have changed S were left out of both runs "
                     "(checks.csv says why): the mitigation is reported, not trusted, there")
    lines.append("  (no change shown or not removed is not evidence that the mitigation does nothing)")
    return "\n".join(lines)


def run_case_mitigation(
    case: Any,
    backend: Any,
    mitigation: Any,
    *,
    pairs: PairSet | str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    scorer: Any = None,
    limit: int | None = None,
    config: Any = None,
    unparseable: str = "exclude",
    seed: int = 0,
    cache: Any = None,
    tag: bool = False,
) -> CaseMitigation:
    """Run ``case`` without and with ``mitigation`` on the same pairs; per background pair, what it changed.

    The module docstring states the tests.  The pairs, scorer, generation settings and cluster
    column are those :func:`~ipcausal.study.cases.run_case` uses; the margin (interval outcomes)
    and m0/alpha/correction (both) are the case's ``tests``.

    Parameters
    ----------
    case : str or Case
        A registered case.
    backend : Backend
        The model.
    mitigation : Mitigation or {"markers", "dialect", "strip", "instruct"}
        The countermeasure (a :class:`~ipcausal.study.mitigation.Mitigation` carries an instruction).
    pairs, scorer, limit, config, unparseable, seed
        As in :func:`~ipcausal.study.cases.run_case`.
    out : path, optional
        Run folder: ``mitigation.json``, ``mitigation.txt``, ``checks.csv``; its ``cache.sqlite``
        is the response cache unless ``cache`` is given.
    cache : path or ResponseCache, optional
        One response cache for both runs (default ``out/cache.sqlite``, else in memory).
    tag : bool
        Write each prompt's background into it as a ``[background]`` tag first (:func:`tag_backgrounds`:
        for the SCM simulator, which reads nothing else).

    Returns
    -------
    CaseMitigation

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> from ipcausal.scoring import get_scorer
    >>> sim = SimulatedModel(effect=2.0, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> read = get_scorer("essay", rater=SimulatedModel.read)  # the simulator's "Answer: <v>"
    >>> res = run_case_mitigation("echo", sim, "strip", scorer=read, limit=12, tag=True)
    >>> g = res.result.groups[0]  # strip removes the tag (and the belief): both prompts become one
    >>> g.effect_without > 1, g.effect_with == 0, g.change_reject, res.status(g)
    (True, True, True, 'not assessed')
    """
    from ipcausal.backends.base import Backend, GenerationConfig
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.cases.registry import get_case
    from ipcausal.outcomes import directed
    from ipcausal.study.cases import _cluster_column, prepare_case

    case = get_case(case)
    m = _mitigation(mitigation)
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend")
    if not isinstance(tag, bool):
        raise TypeError(f"`tag` must be True or False, got {tag!r}")
    ps, _, made = prepare_case(case, pairs, scorer=scorer, limit=limit, unparseable=unparseable, seed=seed)
    if tag:
        ps = tag_backgrounds(ps)
    if config is None:
        config = GenerationConfig(max_tokens=case.source(given=pairs is not None).max_tokens, temperature=0.0,
                                  seed=seed)
    if not isinstance(config, GenerationConfig):
        raise TypeError("`config` must be a GenerationConfig")
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
    tests = {k: v for k, v in case.tests.kwargs().items() if k in _TEST_KEYS}
    try:
        before = len(store)
        res = evaluate_runs(ps, backend, m, scorer=made, scoring={"unparseable": unparseable}, tests=tests,
                            cache=store, run_options={"config": config, "progress": False},
                            cluster=_cluster_column(ps), rng=seed)
        sent = len(store) - before
    finally:
        if own:
            store.close()
    checks = res.checks.assign(reason=[_reason(r) for r in res.checks.to_dict("records")])
    outcome = "interval" if directed(res.pairs_without.outcome) else str(res.pairs_without.outcome)
    cm = CaseMitigation(case.name, case.title, m.name, m.system, outcome, res.margin, float(case.tests.m0), res,
                        sent, checks)
    if outdir is not None:
        files = {"mitigation.json": str(outdir / "mitigation.json"), "mitigation.txt": str(outdir / "mitigation.txt"),
                 "checks.csv": str(outdir / "checks.csv")}
        Path(files["mitigation.json"]).write_text(json.dumps(_clean(cm.to_dict()), indent=2) + "\n", encoding="utf-8")
        Path(files["mitigation.txt"]).write_text(mitigation_table(cm) + "\n", encoding="utf-8")
        checks.to_csv(files["checks.csv"], index=False)
        cm = replace(cm, files=files)
    return cm


def bench_mitigation(case: Any, cs: Any, backend: Any, *, scorer: Any, seed: int, cache: Any, out: Any,
                     tag: bool = False) -> dict[str, Any]:
    """The mitigation fields of a bench cell (``mitigation``, ``mitigation_error``) for ``[[cases]]`` entry ``cs``.

    Runs :func:`run_case_mitigation` on the cell's case (its margin and level), pairs, cache and
    folder; an error of the comparison (e.g. every rewrite failed its check) is recorded, not raised,
    since the cell's own run stands.

    Examples
    --------
    >>> from ipcausal.study.benchspec import CaseSpec
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=2.0, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> from ipcausal.scoring import get_scorer
    >>> got = bench_mitigation("echo", CaseSpec("echo", limit=8, mitigation="strip"), sim, tag=True,
    ...                        scorer=get_scorer("essay", rater=SimulatedModel.read), seed=0, cache=None, out=None)
    >>> got["mitigation"][0].effect_with, got["mitigation"][0].removed, got["mitigation_error"]
    (0.0, 'not assessed', None)
    """
    from ipcausal.study.benchreport import CellMitigation
    from ipcausal.study.mitigation import Mitigation

    if getattr(cs, "mitigation", None) is None:
        raise ValueError("`cs` names no mitigation")
    try:
        res = run_case_mitigation(case, backend, Mitigation(cs.mitigation, instruction=cs.instruction),
                                  pairs=cs.source, out=out, scorer=scorer, limit=cs.limit, seed=seed, cache=cache,
                                  tag=tag)
    except (ValueError, TypeError) as exc:
        return {"mitigation": (), "mitigation_error": f"{type(exc).__name__}: {exc}"}
    r = res.result
    rows = tuple(CellMitigation(res.mitigation, g.group, int(g.n), float(g.effect_without), float(g.effect_with),
                                float(g.change), float(g.change_ci_low), float(g.change_ci_high),
                                float(g.change_pvalue), res.status(g), int(r.n_failed_check)) for g in r.groups)
    return {"mitigation": rows, "mitigation_error": None}


def _clean(v: Any) -> Any:
    """JSON-safe: NaN/inf → None, numpy scalars → Python."""
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
