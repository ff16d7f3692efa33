"""Validate a case before anyone trusts it (``ipcausal check-case NAME``, SPEC §10).

:func:`check_case` runs seven checks on a :class:`~ipcausal.cases.Case` and returns a frozen
:class:`CaseCheck` with each check's verdict and the reason in words:

============  ====================================================================================
check         passes when
============  ====================================================================================
``card``      the card is complete: application, backgrounds, scorer, the stance and its three
              §3.2 answers (the Case requires these), and what is optional elsewhere: the pairs'
              generator declaration and data licence (``PairSource.intervention``/``licence``
              of the source checked) and the smallest effect of interest
              (``Case.tests.smallest_effect``)
``pairs``     the pairs load, every pair's backgrounds are the case's, and every pair passes
              :func:`~ipcausal.interventions.check_pair` (the strings a pair declares it changed,
              its ``allowed`` column — a JSON list — or its ``edits_i``/``edits_j``, the marker
              swaps of a ``generator == "swap_markers"`` pair, the stated beliefs of a pair with
              ``true_statement``/``false_statement``, are masked)
``generator`` the declaration passes :func:`ipcausal.scm.check_intervention`: it changes B and
              holds S
``placebo``   A-vs-A runs of :func:`ipcausal.placebo` on the SCM simulator (no effect, sampling at
              temperature 0.7, one simulator seed per run), tested with the case's test options,
              reject no more often than α allows: with k rejections in R runs the check fails
              when P(Binomial(R, α) ≥ k) < 0.01
``power``     :func:`ipcausal.power` solves for the pairs per background pair that reach power
              0.8 at the case's α (Bonferroni over its background pairs) for ``tests.smallest_effect``
``fluency``   every style twin (uk/us, aae, esl) reads within its threshold of its source under the
              local model (:mod:`ipcausal.study.checkfluency`); skipped, and shown as ``skip``, without
              style twins or without the local model
``reads``     (with a ``backend``) the case's scorer reads at least 80 % of the replies a real model
              gives to the first few pairs (:func:`ipcausal.study.checkread.read_check`); a failure
              shows the replies it could not read.  Without a backend it is skipped (``skipped``)
============  ====================================================================================

The placebo runs score the simulator's answers with the simulator's own scorer (its answers are
numbers, not the case's text): the check is of the design — the pairs, the test, the correction —
holding its size, not of the case's scorer on real text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ipcausal.outcomes import directed
from ipcausal.pairs import PairSet

__all__ = ["check_case", "CaseCheck", "CheckItem", "CHECKS"]

#: The checks of :func:`check_case`, in order.
CHECKS: tuple[str, ...] = ("card", "pairs", "generator", "placebo", "power", "fluency", "reads")
_TARGET_POWER = 0.8
_PLACEBO_FLOOR = 0.01


@dataclass(frozen=True)
class CheckItem:
    """One check's verdict: ``name`` (one of :data:`CHECKS`), ``passed``, the ``reason`` in words, and
    ``skipped`` (the check did not run, and the reason says why: it is not a pass; it does not fail
    the case, and the table says ``skip``)."""

    name: str
    passed: bool
    reason: str
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "reason": self.reason, "skipped": self.skipped}


@dataclass(frozen=True)
class CaseCheck:
    """What :func:`check_case` returns.

    Attributes
    ----------
    case : str
        The case's name.
    checks : tuple of CheckItem
        One per entry of :data:`CHECKS`, in that order.
    n : int
        Pairs checked (0 when they could not be loaded).
    pairs_needed : int or None
        Pairs per background pair for power 0.8 at ``tests.smallest_effect`` (None when not solved).
    """

    case: str
    checks: tuple[CheckItem, ...]
    n: int
    pairs_needed: int | None

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> tuple[str, ...]:
        """The names of the checks that failed."""
        return tuple(c.name for c in self.checks if not c.passed)

    def __getitem__(self, name: str) -> CheckItem:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"`name` must be one of {', '.join(map(repr, CHECKS))}, got {name!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case, "passed": self.passed, "n": self.n, "pairs_needed": self.pairs_needed,
                "checks": [c.to_dict() for c in self.checks]}

    def __str__(self) -> str:
        lines = [f"check-case {self.case}: {'PASSED' if self.passed else 'FAILED (' + ', '.join(self.failed) + ')'}"]
        width = max(len(c.name) for c in self.checks)
        lines += [f"  {'skip' if c.skipped else 'ok  ' if c.passed else 'FAIL'}  {c.name.ljust(width)}  {c.reason}"
                  for c in self.checks]
        return "\n".join(lines) + "\n"


def _card(case: Any, src: Any) -> CheckItem:
    missing = [f"`{src_name}.{name}`" for name in ("intervention", "licence") if getattr(src, name) is None
               for src_name in ("demo" if src is case.demo else "full",)]
    if case.tests.smallest_effect is None:
        missing.append("`tests.smallest_effect`")
    if missing:
        return CheckItem("card", False, "the card lacks " + ", ".join(missing)
                         + " (see docs/cases.md, 'Contribute a case')")
    return CheckItem("card", True, f"complete: {len(case.backgrounds)} backgrounds, {case.outcome.name} outcome "
                                   f"({case.scorer.name}), stance {case.stance}, licence {src.licence!r}")


def _allowed(row: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for col in ("allowed", "edits_i", "edits_j"):
        value = row.get(col)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = [value]
        if isinstance(value, list):
            out += [tuple(v) if isinstance(v, list) else (v.get("old"), v.get("new")) if isinstance(v, dict) else v
                    for v in value]
    if row.get("generator") == "swap_markers":  # the marker swaps (and their articles) the builder made
        from ipcausal.builders.ambrqa import marker_allowed

        out += marker_allowed(str(row["x_i"]), str(row["x_j"]))
    if isinstance(row.get("true_statement"), str) or isinstance(row.get("false_statement"), str):
        from ipcausal.builders.manifest import belief_allowed  # the two stated beliefs of an echo pair

        out += belief_allowed(row)
    return [a for a in out if a is not None and a != (None, None)]


def _pairs(case: Any, pairs: PairSet) -> CheckItem:
    from ipcausal.interventions import check_pair

    bad_bg, bad = [], []
    for row in pairs.to_frame().to_dict("records"):
        pid = str(row["pair_id"])
        if row["background_i"] not in case.backgrounds or row["background_j"] not in case.backgrounds:
            bad_bg.append(pid)
            continue
        problems = check_pair(str(row["x_i"]), str(row["x_j"]), allowed=_allowed(row))
        if problems:
            bad.append(f"{pid} ({', '.join(p.kind for p in problems)})")
    if bad_bg:
        return CheckItem("pairs", False, f"{len(bad_bg)} pair(s) with backgrounds outside {case.backgrounds}: "
                                         + ", ".join(bad_bg[:5]))
    if bad:
        return CheckItem("pairs", False, f"{len(bad)} of {len(pairs)} pair(s) fail check_pair: " + "; ".join(bad[:5]))
    return CheckItem("pairs", True, f"all {len(pairs)} pairs pass check_pair")


def _generator(src: Any) -> CheckItem:
    from ipcausal.scm import check_intervention

    if src.intervention is None:
        return CheckItem("generator", False, f"the pairs ({src.label}) declare no generator (`intervention` is None)")
    try:
        spec = check_intervention(src.intervention)
    except (TypeError, ValueError) as exc:
        return CheckItem("generator", False, f"the declaration fails check_intervention: {exc}")
    return CheckItem("generator", True, f"{spec.name!r} changes B ({spec.changes}) and holds "
                                        f"{', '.join(spec.holds)} ({spec.preserves_semantics_by})")


def _placebo(case: Any, pairs: PairSet, runs: int, rng: int) -> CheckItem:
    from scipy.stats import binom

    from ipcausal.backends.base import GenerationConfig
    from ipcausal.study.options import RunOptions
    from ipcausal.study.placebo import placebo
    from ipcausal.testing.simulator import SimulatedModel

    outcome = case.outcome.name
    alpha = case.tests.alpha
    hot = RunOptions(config=GenerationConfig(temperature=0.7, max_tokens=16, seed=rng))
    k = 0
    for r in range(runs):
        sim = SimulatedModel(effect=0.0, outcome=outcome, backgrounds=case.backgrounds, seed=rng + r)
        scorer = {"score": sim.score} if directed(outcome) else {"similarity": sim.similarity}
        res = placebo(pairs, sim, options=hot, tests=case.tests, rng=rng + r, **scorer)
        k += bool(res.false_positive)
    tail = float(binom.sf(k - 1, runs, alpha)) if k else 1.0
    reason = (f"{k} of {runs} A-vs-A runs on the simulator rejected at alpha = {alpha:g} "
              f"(P(>= {k} | alpha) = {tail:.3g})")
    return CheckItem("placebo", tail >= _PLACEBO_FLOOR, reason + ("" if tail >= _PLACEBO_FLOOR else
                                                                  f" < {_PLACEBO_FLOOR}: the design does not hold alpha"))


def _power(case: Any, pairs: PairSet) -> tuple[CheckItem, int | None]:
    from ipcausal.study.power import power

    effect = case.tests.smallest_effect
    if effect is None:
        return CheckItem("power", False, "no `tests.smallest_effect` on the card: the pairs needed cannot be "
                                         "stated"), None
    df = pairs.to_frame()
    groups = {tuple(sorted(g)) for g in zip(df["background_i"], df["background_j"])}
    n_tests = 1 if case.tests.correction == "none" else max(1, len(groups))
    outcome = case.outcome.name
    if not directed(outcome) and not 0.5 < effect < 1.0:
        return CheckItem("power", False, f"`smallest_effect` must be a share in (0.5, 1) for a similarity "
                                         f"outcome, got {effect!r}"), None
    try:
        res = power(effect, power=_TARGET_POWER, alpha=case.tests.alpha, n_tests=n_tests, outcome=outcome,
                    m0=case.tests.m0, alternative=case.tests.alternative)
    except ValueError as exc:
        return CheckItem("power", False, f"ipcausal.power cannot size the study: {exc}"), None
    what = f"d_z = {effect:g}" if directed(outcome) else f"P(similarity < {case.tests.m0:g}) = {effect:g}"
    per = df.assign(_g=[" vs ".join(sorted(g)) for g in zip(df["background_i"], df["background_j"])])["_g"]
    fewest = int(per.value_counts().min())
    given = (f"the case's pairs give {fewest} per background pair" if len(groups) == 1 else
             f"the case's pairs give {fewest} for the background pair with fewest ({len(df)} in all)")
    short = f"; {res.n - fewest} short of that: a null result of a run on them is weak" if fewest < res.n else ""
    reason = (f"{res.n} pairs per background pair for power {_TARGET_POWER:g} at {what} "
              f"(alpha = {res.alpha:g} / {n_tests}); {given}{short}")
    return CheckItem("power", True, reason), res.n


def _reads(case: Any, pairs: PairSet | None, backend: Any, n_pairs: int, seed: int, *, given: bool) -> CheckItem:
    """The ``reads`` step (:mod:`ipcausal.study.checkread`), or why it was not run."""
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or n_pairs < 1:
        raise ValueError(f"`read_pairs` must be an integer >= 1, got {n_pairs!r}")
    if backend is None:
        return CheckItem("reads", True, "not run: no backend given (ipcausal check-case sends a few pairs to the "
                                        "local model unless --backend none)", skipped=True)
    if pairs is None:
        return CheckItem("reads", False, "not run: no pairs")
    from ipcausal.study.checkread import read_check

    got = read_check(case, backend, pairs, given=given, n_pairs=n_pairs, seed=seed)
    return CheckItem("reads", got.passed, got.reason)


def check_case(case: Any, *, pairs: PairSet | None = None, placebo_runs: int = 20, rng: int = 0,
               fluency: bool | None = None, backend: Any = None, read_pairs: int = 5) -> CaseCheck:
    """Check that a case is fit to be run: its card, pairs, generator, size, power, twins' fluency and reader.

    Parameters
    ----------
    case : Case or str
        The case, or the name of a registered one (:func:`ipcausal.cases.get_case`).
    pairs : PairSet, optional
        The pairs to check (default: the case's demo set, all of it); the card's declaration is
        then read from the case's ``full`` source when it has one.
    placebo_runs : int
        A-vs-A runs on the simulator (>= 1), one simulator seed each.
    rng : int
        The first seed (runs use ``rng``, ``rng + 1``, …); same seed, same verdict.
    fluency : bool or None
        The fluency step: ``None`` runs it when the local model is installed, ``False`` skips it,
        ``True`` requires the model.
    backend : Backend, optional
        A real model for the ``reads`` step (``ipcausal check-case`` gives the local model by
        default); ``None`` skips it.
    read_pairs : int
        Pairs the ``reads`` step sends (>= 1).

    Returns
    -------
    CaseCheck
        ``passed`` is True when every check passed; ``failed`` names the others.

    Examples
    --------
    >>> from ipcausal.study.checkcase import check_case
    >>> res = check_case("age", placebo_runs=2)
    >>> res.passed, res["pairs"].passed, res.n
    (True, True, 20)
    >>> check_case("age", placebo_runs=0)
    Traceback (most recent call last):
    ...
    ValueError: `placebo_runs` must be an integer >= 1, got 0
    """
    from ipcausal.cases import Case, get_case

    case = get_case(case)
    if not isinstance(case, Case):  # pragma: no cover - get_case raises first
        raise TypeError("`case` must be a Case or a registered case name")
    if isinstance(placebo_runs, bool) or not isinstance(placebo_runs, int) or placebo_runs < 1:
        raise ValueError(f"`placebo_runs` must be an integer >= 1, got {placebo_runs!r}")
    if isinstance(rng, bool) or not isinstance(rng, int) or rng < 0:
        raise ValueError(f"`rng` must be a non-negative integer, got {rng!r}")
    if pairs is not None and not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet or None, got {type(pairs).__name__}")
    if fluency is not None and not isinstance(fluency, bool):
        raise TypeError(f"`fluency` must be True, False or None, got {fluency!r}")
    # the source whose declaration is checked: the full pairs for given ones (when the case has them)
    src = case.full if case.full is not None and (pairs is not None or case.demo is None) else case.demo
    checks = [_card(case, src)]
    loaded: PairSet | None = pairs
    if loaded is None and case.demo is None:
        checks.append(CheckItem("pairs", False, "the case has no demo set: give `pairs` (a PairSet)"))
    elif loaded is None:
        try:
            loaded = case.demo.load(rng, None)
        except Exception as exc:  # noqa: BLE001 - a contributed loader may fail in any way: report it
            checks.append(CheckItem("pairs", False, f"the demo set failed to load: {type(exc).__name__}: {exc}"))
        else:
            if not isinstance(loaded, PairSet) or len(loaded) == 0:
                checks.append(CheckItem("pairs", False, "the demo loader returned no pairs (a PairSet is needed)"))
                loaded = None
    if loaded is not None:
        checks.append(_pairs(case, loaded))
    checks.append(_generator(src))
    needed = None
    if loaded is None:
        checks += [CheckItem("placebo", False, "not run: no pairs"), CheckItem("power", False, "not run: no pairs"),
                   CheckItem("fluency", False, "not run: no pairs")]
    else:
        checks.append(_placebo(case, loaded, placebo_runs, rng))
        item, needed = _power(case, loaded)
        checks.append(item)
        from ipcausal.study.checkfluency import fluency_step

        ok, skipped, why = fluency_step(loaded, fluency)
        checks.append(CheckItem("fluency", ok, why, skipped))
    checks.append(_reads(case, loaded, backend, read_pairs, rng, given=pairs is not None))
    return CaseCheck(case=case.name, checks=tuple(checks), n=0 if loaded is None else len(loaded), pairs_needed=needed)
