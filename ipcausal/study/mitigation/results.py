"""The results of a mitigation comparison and their files.

:class:`MitigationGroup` per background pair and :class:`MitigationResult` are made by
:func:`ipcausal.study.mitigation.evaluate_mitigation` and
:func:`ipcausal.study.mitigation.run_case_mitigation` (which say how each field is tested);
:class:`CaseMitigation` is the comparison as reported, and :func:`write_mitigation` the one writer
of its files (``mitigation.json`` of schema :data:`SCHEMA`, ``mitigation.txt``, ``checks.csv``,
the two scored arms), for ``ipcausal case --mitigation``, ``ipcausal mitigate`` and the bench
alike; :func:`read_mitigation` reads a ``mitigation.json``, those written before 0.2 included.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ipcausal._jsonio import atomic, write_json, write_text
from ipcausal.outcomes import directed
from ipcausal.study.defaults import DEFAULTS

__all__ = ["MitigationGroup", "MitigationResult", "CaseMitigation", "mitigation_table", "write_mitigation",
           "read_mitigation", "SCHEMA"]

#: The header of ``mitigation.json`` (files written before 0.2 have none; :func:`read_mitigation` reads both).
SCHEMA = "ipcausal.mitigation/1"


@dataclass(frozen=True)
class MitigationGroup:
    """One background pair: the effect without and with the mitigation, and the test of the change.

    ``effect_*``/``pvalue_*`` come from :func:`ipcausal.test` on the pairs both runs scored;
    ``change`` is mean D = Δ_with − Δ_without with its interval and paired sign-flip p
    (``change_pvalue``, corrected over the background pairs); ``equivalence`` is the TOST verdict
    of Δ_with within ``margin`` (``None`` without a margin); ``removed`` is True only when it is
    ``"equivalent"``.
    """

    group: str
    background_a: str
    background_b: str
    n: int
    effect_without: float
    pvalue_without: float
    reject_without: bool
    effect_with: float
    pvalue_with: float
    reject_with: bool
    change: float
    change_ci_low: float
    change_ci_high: float
    change_pvalue: float
    change_reject: bool
    margin: float | None
    equivalence: str | None
    equivalence_pvalue: float | None
    removed: bool

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass(frozen=True)
class MitigationResult:
    """What :func:`evaluate_mitigation` returns (see there).

    ``groups``: one :class:`MitigationGroup` per background pair; ``checks``: the rewrite check of
    every input pair (:func:`apply_mitigation`); ``without``/``with_``: the :class:`~ipcausal.Report`
    of each run, ``comparison``: that of :func:`~ipcausal.study.compare.compare` (with, without);
    ``pairs_without``/``pairs_with``: the scored pairs both runs kept.
    """

    mitigation: str
    groups: tuple[MitigationGroup, ...]
    n_pairs: int
    n_failed_check: int
    n_not_undone: int
    n_compared: int
    checks: pd.DataFrame = field(repr=False)
    without: Any = field(repr=False)
    with_: Any = field(repr=False)
    comparison: Any = field(repr=False)
    pairs_without: Any = field(default=None, repr=False)
    pairs_with: Any = field(default=None, repr=False)
    margin: float | None = None
    alpha: float = DEFAULTS["alpha"]
    null_hypothesis: str = ("per background pair, the effects with and without the mitigation are exchangeable "
                            "per pair (each D = Δ_with − Δ_without is symmetric about 0)")
    method: str = "paired sign-flip test of D = Δ_with − Δ_without (ipcausal.study.compare.compare)"

    @property
    def removed(self) -> bool:
        """True when every background pair's effect with the mitigation is shown equivalent to zero."""
        return bool(self.groups) and all(g.removed for g in self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {"mitigation": self.mitigation, "n_pairs": self.n_pairs, "n_failed_check": self.n_failed_check,
                "n_not_undone": self.n_not_undone, "n_compared": self.n_compared, "margin": self.margin,
                "alpha": self.alpha, "removed": self.removed, "null_hypothesis": self.null_hypothesis,
                "method": self.method, "groups": [g.to_dict() for g in self.groups],
                "failed_pairs": self.checks.loc[~self.checks["trusted"], "pair_id"].astype(str).tolist()}

    def __str__(self) -> str:
        lines = [f"Mitigation {self.mitigation!r}: {self.n_compared} of {self.n_pairs} pairs compared "
                 f"({self.n_failed_check} not trusted and left out of both runs: a rewrite check failed or a cue "
                 f"was left; {self.n_not_undone} had a side not rewritten or a cue left)."]
        for g in self.groups:
            lines.append(f"{g.group}: effect without {g.effect_without:+.3f} (p={g.pvalue_without:.3g}), "
                         f"with {g.effect_with:+.3f} (p={g.pvalue_with:.3g}); change {g.change:+.3f} "
                         f"[{g.change_ci_low:+.3f}, {g.change_ci_high:+.3f}], p={g.change_pvalue:.3g}"
                         f"{' (changed)' if g.change_reject else ' (no change shown)'}.")
            if g.margin is None:
                lines.append("  Removal not assessed: no equivalence margin was given.")
            elif g.removed:
                lines.append(f"  The mitigation removed IP here: the effect with it is shown within ±{g.margin:g}.")
            else:
                lines.append(f"  Not shown removed: the effect with it is {g.equivalence} against ±{g.margin:g} "
                             "(a non-rejection is not removal).")
        return "\n".join(lines)


@dataclass(frozen=True)
class CaseMitigation:
    """A mitigation comparison as it is reported and written (``mitigation.json``): what
    :func:`~ipcausal.study.mitigation.run_case_mitigation` returns for a case, and what ``ipcausal mitigate``
    writes for a PairSet file (``case`` and ``title`` are then ``None``).

    ``result`` is the :class:`~ipcausal.study.mitigation.MitigationResult` (per background pair: the
    effect without and with, the change test, removed); ``outcome`` is ``"interval"`` or
    ``"similarity"``; ``margin`` the case's equivalence margin (interval: ``None`` means removal
    was not assessed); ``m0`` the similarity null median; ``sent`` the requests this call sent
    to the model (0 on a rerun from the cache); ``checks`` the rewrite check of every pair with
    ``reason``; ``files`` what was written.
    """

    case: str | None
    title: str | None
    mitigation: str
    instruction: str | None
    outcome: str
    margin: float | None
    m0: float
    result: MitigationResult = field(repr=False)
    sent: int
    checks: pd.DataFrame = field(repr=False)
    files: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, result: MitigationResult, mitigation: Any, *, sent: int | None, checks: pd.DataFrame | None = None,
           case: Any = None) -> CaseMitigation:
        """The comparison ``result`` of ``mitigation`` (a Mitigation) on ``case`` (a Case, or ``None`` for bare pairs).

        ``checks`` defaults to the result's own rewrite checks; the outcome is the one the runs were scored with.
        """
        outcome = "interval" if directed(result.pairs_without.outcome) else str(result.pairs_without.outcome)
        m0 = float(case.tests.m0) if case is not None else float(DEFAULTS["m0"])
        return cls(getattr(case, "name", None), getattr(case, "title", None), mitigation.name, mitigation.system,
                   outcome, result.margin, m0, result, sent, result.checks if checks is None else checks)

    def removal_rule(self) -> str:
        """How "removed" is decided here, in words."""
        a = self.result.alpha
        if not directed(self.outcome):
            return (f"removed = the sign test shows the median similarity with the mitigation above m0 = {self.m0:g} "
                    f"(alternative 'greater', level {a:g}, corrected over the background pairs)")
        if self.margin is None:
            whose = "the case has" if self.case is not None else "the comparison was given"
            return f"removal not assessed: {whose} no equivalence margin (set one to assess it)"
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
        reasons = failed["reason"] if "reason" in failed else [None] * len(failed)
        return {"schema": SCHEMA, "case": self.case, "title": self.title, "mitigation": self.mitigation,
                "instruction": self.instruction, "outcome": self.outcome, "margin": self.margin,
                "m0": None if directed(self.outcome) else self.m0, "alpha": r.alpha,
                "null_hypothesis": r.null_hypothesis, "change_test": r.method,
                "removal_rule": self.removal_rule(), "n_pairs": r.n_pairs, "n_failed_check": r.n_failed_check,
                "n_not_undone": r.n_not_undone, "n_compared": r.n_compared, "sent": self.sent,
                "groups": [{**g.to_dict(), "removed": self.status(g)} for g in r.groups],
                "failed_pairs": [{"pair_id": str(p), "reason": why} for p, why in zip(failed["pair_id"], reasons)],
                **self.examples()}

    def examples(self) -> dict[str, Any]:
        """``examples`` (pairs without and with the mitigation, by :func:`ipcausal.study.examples.arm_examples`)
        and ``example_rule`` (the rule in words), for ``mitigation.json`` and its page."""
        from ipcausal.study.examples import EXAMPLE_RULE, arm_examples

        r = self.result
        if r.pairs_without is None or r.pairs_with is None:
            return {}
        what = "|Δ_with − Δ_without|" if directed(self.outcome) else "|s_with − s_without|"
        rule = (f"per background pair, the {EXAMPLE_RULE['largest']} pairs with the largest change {what} and "
                f"{EXAMPLE_RULE['random']} more drawn at random (seed {EXAMPLE_RULE['seed']}) from the rest, each "
                "without and with the mitigation")
        return {"examples": arm_examples(r.pairs_without, r.pairs_with, r.groups, self.outcome),
                "example_rule": rule}

    def __str__(self) -> str:
        return mitigation_table(self)


def mitigation_table(res: CaseMitigation) -> str:
    """The per-background-pair table of a :class:`CaseMitigation` (what ``ipcausal case --mitigation`` prints).

    Examples
    --------
    >>> from ipcausal.study.mitigation import run_case_mitigation
    >>> from ipcausal.study.prepare import prepare_case
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=2.0, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> res = run_case_mitigation(prepare_case("echo", scorer=sim.answer_scorer, limit=12), sim, "strip")
    >>> print(mitigation_table(res).splitlines()[0])
    Mitigation 'strip' on case 'echo': 12 of 12 pairs compared (0 dropped: rewrite check failed or a cue left); interval outcome
    """
    r = res.result
    eff = "mean Δ" if directed(res.outcome) else "median s"
    lines = [f"Mitigation {res.mitigation!r} on case {res.case!r}: {r.n_compared} of {r.n_pairs} pairs compared "
             f"({r.n_failed_check} dropped: rewrite check failed or a cue left); {res.outcome} outcome",
             f"  H0 of the change: {r.null_hypothesis}",
             f"  {res.removal_rule()}",
             f"  {'pair':<28} {eff + ' without':>16} {eff + ' with':>14} {'change [CI]':>26} {'p':>8}  removed"]
    for g in r.groups:
        ci = f"{g.change:+.3f} [{g.change_ci_low:+.3f}, {g.change_ci_high:+.3f}]"
        lines.append(f"  {g.group:<28} {g.effect_without:>16.4g} {g.effect_with:>14.4g} {ci:>26} "
                     f"{g.change_pvalue:>8.4f}  {res.status(g)}")
    if r.n_failed_check:
        lines.append(f"  {r.n_failed_check} pair(s) whose rewrite may have changed S, or that still carry a cue the "
                     "detectors find, were left out of both runs (checks.csv says why): the mitigation is "
                     "reported, not trusted, there")
    lines.append("  (no change shown or not removed is not evidence that the mitigation does nothing)")
    return "\n".join(lines)


#: The files of a mitigation comparison, by name.
FILES = ("mitigation.json", "mitigation.txt", "checks.csv", "pairs_without.jsonl", "pairs_with.jsonl")


def write_mitigation(cm: CaseMitigation, folder: str | os.PathLike[str], *, text: str | None = None) -> dict[str, str]:
    """Write a comparison's files into ``folder``; returns them by name (each written atomically).

    ``mitigation.json`` (:meth:`CaseMitigation.to_dict`), ``mitigation.txt`` (``text``, default
    :func:`mitigation_table`), ``checks.csv`` (the rewrite check of every pair) and
    ``pairs_without.jsonl``/``pairs_with.jsonl`` (the two arms, scored, on the pairs compared).
    """
    out = Path(folder)
    files = {name: str(out / name) for name in FILES}
    write_json(files["mitigation.json"], cm.to_dict(), indent=2)
    write_text(files["mitigation.txt"], (mitigation_table(cm) if text is None else text) + "\n")
    with atomic(files["checks.csv"]) as tmp:
        cm.checks.to_csv(tmp, index=False)
    cm.result.pairs_without.write(files["pairs_without.jsonl"])
    cm.result.pairs_with.write(files["pairs_with.jsonl"])
    return files


def read_mitigation(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A ``mitigation.json`` (or the folder holding one) in the shape :meth:`CaseMitigation.to_dict` writes.

    A file written before 0.2 has no ``schema``: one by ``ipcausal case --mitigation`` reads as it is;
    one by ``ipcausal mitigate`` (groups with a True/False ``removed``, ``failed_pairs`` as ids,
    ``method`` for the change test) is moved into the shape, ``case``/``title``/``sent`` ``None``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> old = {"mitigation": "markers", "n_pairs": 4, "n_failed_check": 1, "n_not_undone": 0, "n_compared": 3,
    ...        "margin": None, "alpha": 0.05, "removed": False, "null_hypothesis": "H0", "method": "sign flips",
    ...        "groups": [{"group": "a vs b", "removed": False}], "failed_pairs": ["7"]}
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "mitigation.json"
    >>> _ = p.write_text(json.dumps(old))
    >>> d = read_mitigation(p)
    >>> d["schema"], d["case"], d["change_test"], d["groups"][0]["removed"], d["failed_pairs"]
    ('ipcausal.mitigation/1', None, 'sign flips', 'not assessed', [{'pair_id': '7', 'reason': None}])
    """
    p = Path(path)
    if p.is_dir():
        p = p / "mitigation.json"
    d = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(d, dict):
        raise ValueError(f"{p}: not a mitigation.json (a JSON object)")
    if d.get("schema") not in (None, SCHEMA):
        raise ValueError(f"{p}: not a mitigation.json of schema {SCHEMA!r} (got {d.get('schema')!r})")
    if "schema" in d or "change_test" in d:  # this release's, or one of `ipcausal case --mitigation` before it
        return {"schema": SCHEMA, **{k: v for k, v in d.items() if k != "schema"}}
    margin = d.get("margin")

    def status(removed: Any) -> str:  # the old `ipcausal mitigate` shape: interval outcomes only
        return "not assessed" if margin is None else ("yes" if removed else "no")

    return {"schema": SCHEMA, "case": None, "title": None, "mitigation": d.get("mitigation"), "instruction": None,
            "outcome": "interval", "margin": margin, "m0": None, "alpha": d.get("alpha"),
            "null_hypothesis": d.get("null_hypothesis"), "change_test": d.get("method"), "removal_rule": None,
            "n_pairs": d.get("n_pairs"), "n_failed_check": d.get("n_failed_check"),
            "n_not_undone": d.get("n_not_undone"), "n_compared": d.get("n_compared"), "sent": None,
            "groups": [{**g, "removed": status(g.get("removed"))} for g in d.get("groups", [])],
            "failed_pairs": [{"pair_id": str(x), "reason": None} for x in d.get("failed_pairs", [])]}
