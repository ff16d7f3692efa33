"""Placebo check: the false-positive floor of a study, from the same prompt asked twice.

A placebo pair holds no intervention at all: the prompt ``x_i`` of a real pair is sent
twice, at the run's generation settings, and the two answers are scored and tested exactly
like the real pairs.  Any "effect" it finds is sampling noise (or a scorer that cannot
recognise two equivalent answers).  When the placebo is rejected, a rejection of the real
pairs says nothing about implicit personalization.

How the two copies are obtained: the placebo PairSet is sent through :func:`ipcausal.run`
with ``config.n = 2``: sample 0 is copy 1 and sample 1 is copy 2 (backends draw sample k with
seed ``seed + k``; with the same cache as the real run, copy 1 is the real run's own answer
and only copy 2 is new).  At temperature 0 a deterministic model gives two equal copies, so
the floor is zero by construction; the check matters when the run samples.

Labels: a PairSet needs two different backgrounds per pair, so the sides of a placebo pair
are labelled ``"<b> (copy 1)"`` and ``"<b> (copy 2)"`` for the background b of the prompt;
pair ids are ``"<pair_id>/placebo-i"`` (or ``-j`` for prompts taken from ``x_j``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from ipcausal.outcomes import directed, get_outcome
from ipcausal.backends.base import Backend
from ipcausal.pairs import PairSet
from ipcausal.study.options import Design, RunOptions, TestOptions, given
from ipcausal.study.results import Report

__all__ = ["placebo", "PlaceboResult"]

_SIDES = {"i": ("i",), "j": ("j",), "both": ("i", "j")}


@dataclass(frozen=True)
class PlaceboResult:
    """What :func:`placebo` returns: the placebo report and, when known, the real one.

    Attributes
    ----------
    placebo : Report
        :func:`ipcausal.test` on the placebo pairs (same prompt twice).
    real : Report or None
        The real pairs' report (given, or computed from scored pairs), for comparison.
    pairs : PairSet
        The scored placebo pairs (with both copies' responses).
    outcome : str
        ``"interval"`` or ``"similarity"``.
    temperature : float
        The sampling temperature of the placebo run.
    n_failed : int
        Placebo pairs dropped because a copy could not be obtained (see ``pairs``' errors).
    """

    placebo: Report
    real: Report | None
    pairs: PairSet
    outcome: str
    temperature: float
    n_failed: int

    @property
    def false_positive(self) -> bool:
        """True when noise alone "detects" IP: the placebo is rejected."""
        return self.placebo.ip_detected

    @property
    def real_beyond_floor(self) -> bool | None:
        """True when the real pairs are rejected and the placebo is not (None without a real report)."""
        if self.real is None:
            return None
        return self.real.ip_detected and not self.placebo.ip_detected

    def verdict(self) -> str:
        """One sentence on what the placebo says about the real result."""
        if self.false_positive:
            return ("placebo REJECTED: sampling noise alone 'finds' implicit personalization here; "
                    "a rejection of the real pairs is not evidence of IP under these settings")
        if self.real is None:
            return "placebo not rejected: sampling noise alone does not reach significance"
        if self.real.ip_detected:
            return "real pairs rejected and placebo not: the result stands above the noise floor"
        return "neither the real pairs nor the placebo are rejected"

    def to_frame(self) -> pd.DataFrame:
        """One row per group: placebo rows then real rows, with a ``kind`` column."""
        frames = [self.placebo.to_frame().assign(kind="placebo")]
        if self.real is not None:
            frames.append(self.real.to_frame().assign(kind="real"))
        return pd.concat(frames, ignore_index=True)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the two reports, the verdict and the settings)."""
        return {
            "placebo": self.placebo.to_dict(),
            "real": None if self.real is None else self.real.to_dict(),
            "outcome": self.outcome,
            "temperature": self.temperature,
            "n_failed": self.n_failed,
            "false_positive": self.false_positive,
            "verdict": self.verdict(),
        }

    def __str__(self) -> str:
        from ipcausal.study.text import format_p

        effect = "mean Δ" if directed(self.outcome) else "median s"
        header = ["", "pair", "n", effect, "p", "p adj", "reject"]
        rows = []
        for kind, rep in (("placebo", self.placebo), ("real", self.real)):
            if rep is None:
                continue
            for g in rep.groups:
                rows.append([kind, g.group, str(g.n), f"{g.effect:.4g}", format_p(g.pvalue),
                             format_p(g.pvalue_adjusted), "yes" if g.reject else "no"])
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
        lines = [
            f"placebo check — {self.outcome} outcome, the same prompt twice at temperature {self.temperature:g}",
            f"alpha = {self.placebo.alpha:g}, {self.placebo.correction} correction; "
            f"the placebo rows are the false-positive floor",
        ]
        if self.temperature == 0:
            lines.append("note: temperature 0 — a deterministic model answers both copies alike (floor 0 by construction)")
        if self.n_failed:
            lines.append(f"note: {self.n_failed} placebo pair(s) dropped (a copy could not be obtained)")
        lines.append("")
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
        lines += ["", self.verdict()]
        return "\n".join(lines) + "\n"


def _callable(value: Any, name: str) -> Callable[..., float] | None:
    if value is not None and not callable(value):
        raise TypeError(f"`{name}` must be a callable, got {type(value).__name__}")
    return value


def placebo(
    pairs: PairSet,
    backend: Backend,
    *,
    score: Callable[[str], float] | None = None,
    similarity: Callable[[str, str], float] | None = None,
    options: RunOptions | None = None,
    sides: str = "i",
    real: Report | None = None,
    tests: TestOptions | None = None,
    rng: Any = None,
    progress: bool = False,
) -> PlaceboResult:
    """Test the same prompt against itself: the false-positive floor of a study.

    Parameters
    ----------
    pairs : PairSet
        The real pairs (prompts needed; responses and outcomes optional).
    backend : Backend
        The model, as used for the real run.
    score : callable(text) -> float, optional
        Interval scorer: ``score_i = score(copy 1)``, ``score_j = score(copy 2)``.
    similarity : callable(text_a, text_b) -> float, optional
        Similarity scorer (values in [0, 1]).  Give exactly one of ``score`` and ``similarity``.
    options : RunOptions, optional
        The real run's: its ``config`` (temperature, seed, …; ``n`` is set to 2 here), its
        ``cache`` (copy 1 then comes from it), its ``system`` message and ``concurrency``.
    sides : {"i", "j", "both"}
        Which prompts to repeat: ``x_i`` (default), ``x_j`` or both (twice the requests).
    real : Report, optional
        The real report.  When omitted and ``pairs`` carry the outcome's columns, the real
        pairs are tested here with the same settings.
    tests : TestOptions, optional
        The options of :func:`ipcausal.test` (``alpha``, ``correction``, ``m0``, ``method``,
        ``n_resamples`` …), for the placebo and the real pairs alike.
    rng : int, numpy.random.Generator or None
        Passed to :func:`ipcausal.test`.
    progress : bool
        Show the run's progress bar.

    Returns
    -------
    PlaceboResult

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.backends import GenerationConfig
    >>> from ipcausal.study.options import RunOptions
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=0.0, outcome="similarity", seed=4)
    >>> pairs = sim.study(n=30, rng=0)
    >>> hot = RunOptions(config=GenerationConfig(temperature=0.7))
    >>> res = ipcausal.placebo(pairs, sim, similarity=sim.similarity, options=hot)
    >>> res.placebo.groups[0].group
    'american (copy 1) vs american (copy 2)'
    """
    from ipcausal.study.test import test
    from ipcausal.study.run import run

    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    if len(pairs) == 0:
        raise ValueError("`pairs` is empty")
    score, similarity = _callable(score, "score"), _callable(similarity, "similarity")
    if (score is None) == (similarity is None):
        raise ValueError("give exactly one of `score` (interval outcome) and `similarity` (similarity outcome)")
    outcome = "interval" if score is not None else "similarity"
    if sides not in _SIDES:
        raise ValueError(f"`sides` must be one of 'i', 'j', 'both'; got {sides!r}")
    if real is not None and not isinstance(real, Report):
        raise TypeError(f"`real` must be a Report or None, got {type(real).__name__}")
    options = given(options, RunOptions, "options")
    tests = given(tests, TestOptions, "tests")
    cfg = options.generation
    twice = replace(cfg, n=2)

    df = pairs.to_frame()
    records = []
    for side in _SIDES[sides]:
        for pid, b, x in zip(df["pair_id"], df[f"background_{side}"], df[f"x_{side}"]):
            records.append({"pair_id": f"{pid}/placebo-{side}", "background_i": f"{b} (copy 1)",
                            "background_j": f"{b} (copy 2)", "x_i": x, "x_j": x, "source_pair_id": pid})
    ran = run(PairSet.from_records(records), backend, cache=options.cache, config=twice, system=options.system,
              concurrency=options.concurrency, progress=progress)
    out = ran.to_frame()
    samples = out["samples_i"] if "samples_i" in out else pd.Series([None] * len(out))
    ok = samples.map(lambda s: isinstance(s, (list, tuple)) and len(s) >= 2 and all(isinstance(t, str) for t in s[:2]))
    n_failed = int((~ok).sum())
    out = out.loc[ok.to_numpy()].reset_index(drop=True)
    if len(out) == 0:
        raise ValueError("`backend` returned no usable pair of samples; see the run's errors")
    first = [s[0] for s in out["samples_i"]]
    second = [s[1] for s in out["samples_i"]]
    out["y_i"], out["y_j"] = first, second
    out = out.drop(columns=[c for c in ("samples_i", "samples_j") if c in out])
    if directed(outcome):
        out["score_i"] = [float(score(t)) for t in first]  # type: ignore[misc]
        out["score_j"] = [float(score(t)) for t in second]  # type: ignore[misc]
    else:
        out["similarity"] = [float(similarity(a, b)) for a, b in zip(first, second)]  # type: ignore[misc]
    scored = PairSet.from_frame(out)
    # the placebo pairs test "no difference at all": a case's trend/strata rows are not part of it
    order = tests.design.order if tests.design is not None else None
    kwargs = {**tests.kwargs(), "rng": rng, "design": Design(outcome=outcome, order=order)}
    placebo_report = test(scored, **kwargs)
    needed = get_outcome(outcome).columns[0]
    if real is None and needed in pairs:
        real = test(pairs, **kwargs)
    temp = float(cfg.temperature)
    return PlaceboResult(placebo=placebo_report, real=real, pairs=scored, outcome=outcome,
                         temperature=temp if math.isfinite(temp) else 0.0, n_failed=n_failed)
