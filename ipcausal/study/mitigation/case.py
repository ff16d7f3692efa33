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
``mitigation.txt``, ``checks.csv`` (the rewrite check of every pair, with its reason) and
``pairs_without.jsonl``/``pairs_with.jsonl`` (the two arms, scored, on the pairs compared).
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

from ipcausal.outcomes import directed
from ipcausal.pairs import PairSet
from ipcausal.study.mitigation.evaluate import TEST_KEYS
from ipcausal.study.mitigation.results import MitigationGroup, MitigationResult
from ipcausal.study.mitigation.transforms import Mitigation, as_mitigation

__all__ = ["CaseMitigation", "run_case_mitigation", "tag_backgrounds", "mitigation_table"]


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
        if not directed(self.outcome):
            return (f"removed = the sign test shows the median similarity with the mitigation above m0 = {self.m0:g} "
                    f"(alternative 'greater', level {a:g}, corrected over the background pairs)")
        if self.margin is None:
            return "removal not assessed: the case has no equivalence margin (set one to assess it)"
        return (f"removed = the TOST shows the mean effect with the mitigation within ±{self.margin:g} "
                f"(level {a:g})")

    def status(self, g: MitigationGroup) -> str:
        """``"yes"``, ``"no"`` or ``"not assessed"`` for one background pair."""
        if directed(self.outcome) and self.margin is None:
            return "not assessed"
        return "yes" if g.removed else "no"

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        failed = self.checks.loc[~self.checks["trusted"]]
        return {"case": self.case, "title": self.title, "mitigation": self.mitigation,
                "instruction": self.instruction, "outcome": self.outcome, "margin": self.margin,
                "m0": None if directed(self.outcome) else self.m0, "alpha": r.alpha,
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
    eff = "mean Δ" if directed(res.outcome) else "median s"
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
        Run folder: ``mitigation.json``, ``mitigation.txt``, ``checks.csv``, ``pairs_without.jsonl``,
        ``pairs_with.jsonl``; its ``cache.sqlite``
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
    from ipcausal.study.cases import _cluster_column, prepare_case
    from ipcausal.study.mitigation.evaluate import evaluate_runs

    case = get_case(case)
    m = as_mitigation(mitigation)
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
    tests = {k: v for k, v in case.tests.kwargs().items() if k in TEST_KEYS}
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
                 "checks.csv": str(outdir / "checks.csv"), "pairs_without.jsonl": str(outdir / "pairs_without.jsonl"),
                 "pairs_with.jsonl": str(outdir / "pairs_with.jsonl")}
        Path(files["mitigation.json"]).write_text(json.dumps(_clean(cm.to_dict()), indent=2) + "\n", encoding="utf-8")
        Path(files["mitigation.txt"]).write_text(mitigation_table(cm) + "\n", encoding="utf-8")
        checks.to_csv(files["checks.csv"], index=False)
        res.pairs_without.write(files["pairs_without.jsonl"])  # the two arms, scored, on the compared pairs
        res.pairs_with.write(files["pairs_with.jsonl"])
        cm = replace(cm, files=files)
    return cm


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
