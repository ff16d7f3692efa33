"""The probe column of IP-Bench: can the model infer the background, does it use it? (issue 21 item 1).

A bench file opts in with ``[settings] probe = true`` (a case can opt out with ``probe = false``,
or in with ``probe = true`` when the settings leave the probe off).  After a (model, case) cell has
run, :func:`probe_cell` asks the model the background probe (:func:`ipcausal.study.probe.probe`)
about every distinct prompt of the pairs the cell ran, with the case's backgrounds as the options
(chance = 1/|B|), the bench's seed for the options' order and the model's response cache (a rerun
asks nothing new).  The cell keeps a :class:`CellProbe`: the probe's counts, its accuracy, the
exact binomial p of "no better than chance" and the Clopper–Pearson interval, and the 2 × 2
reading of the cell (:func:`reading`):

* **can infer**: the probe's binomial test rejects "the model names the background no better than
  chance" at the bench's ``alpha`` (unit: the prompt);
* **does use**: at least one of the cell's background pairs rejects "no effect" (its adjusted p,
  at the same ``alpha``; unit: the pair).

Neither half is ever read the other way round: a test that does not reject shows nothing, so the
readings say "not shown", never "cannot infer" or "does not use" (:data:`READINGS`,
:data:`READING_MEANINGS`).

This module imports only the standard library at import time (the renderers read
:class:`CellProbe` through :mod:`ipcausal.study.bench.report`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

__all__ = ["CellProbe", "reading", "probe_cell", "probe_text", "READINGS", "READING_MEANINGS", "PROBE_COLUMNS",
           "stored_answers"]

#: (can infer, does use) → the cell's reading.
READINGS: dict[tuple[bool, bool], str] = {
    (True, True): "infers and uses",
    (True, False): "infers; use not shown",
    (False, True): "use shown; inference not shown",
    (False, False): "neither shown",
}

#: Each reading in words (the legend of ``bench.md`` and ``bench.html``).
READING_MEANINGS: dict[str, str] = {
    "infers and uses": "the probe names the background better than chance and at least one background pair "
                       "rejected \"no effect\": the model can infer the background and its answers depend on it",
    "infers; use not shown": "the probe names the background better than chance, but no background pair rejected "
                             "\"no effect\": the model can infer it; that it does not use it is not shown (the "
                             "test may lack power; only an equivalence verdict with a margin shows an effect absent)",
    "use shown; inference not shown": "the answers depend on the background, but the probe did not show that the "
                                      "model can name it (it may act on cues it cannot name, or the probe may lack "
                                      "power)",
    "neither shown": "neither test rejected: this is not evidence that the model cannot infer the background or "
                     "does not use it",
}

#: The probe's columns of ``bench.csv`` (after the original columns; the same on every row of a cell).
PROBE_COLUMNS: tuple[str, ...] = ("probe_n", "probe_accuracy", "probe_chance", "probe_pvalue", "probe_ci_low",
                                  "probe_ci_high", "can_infer", "does_use", "reading")


def reading(can_infer: bool, does_use: bool) -> str:
    """The 2 × 2 reading of a cell from its two test decisions (see :data:`READING_MEANINGS`).

    Examples
    --------
    >>> reading(True, False)
    'infers; use not shown'
    >>> reading(False, True)
    'use shown; inference not shown'
    >>> reading(1, 0)
    Traceback (most recent call last):
    ...
    TypeError: `can_infer` and `does_use` must be True or False, got 1 and 0
    """
    if not isinstance(can_infer, bool) or not isinstance(does_use, bool):
        raise TypeError(f"`can_infer` and `does_use` must be True or False, got {can_infer!r} and {does_use!r}")
    return READINGS[(can_infer, does_use)]


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


@dataclass(frozen=True)
class CellProbe:
    """The background probe of one bench cell and the cell's 2 × 2 reading.

    ``correct`` of ``n`` answered prompts named the true background (``accuracy``; NaN when none
    was answered); ``unparseable`` answers named no option or several and ``failed`` requests got
    no answer (both left out of ``n``).  ``chance`` = 1/|B|, ``pvalue`` the exact one-sided
    binomial test of "no better than chance", ``ci_low``/``ci_high`` the Clopper–Pearson interval
    of the accuracy at ``confidence_level``.  ``calls``: the probe's requests (one per distinct
    prompt); ``sent``: those this run got from the model (0 when all came from the cache).
    ``can_infer`` (``pvalue <= alpha``), ``does_use`` (a background pair of the cell rejected) and
    ``reading`` (:func:`reading`).  A probe that raised keeps its ``error`` and no reading; one
    with no answered prompt (``n`` = 0: every answer failed or was unparseable) has no test
    (``can_infer`` and ``reading`` are ``None``).
    """

    correct: int
    n: int
    unparseable: int
    failed: int
    accuracy: float
    chance: float
    pvalue: float
    ci_low: float
    ci_high: float
    confidence_level: float = 0.95
    alpha: float = 0.05
    can_infer: bool | None = None
    does_use: bool | None = None
    reading: str | None = None
    calls: int | None = None
    sent: int | None = None
    error: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CellProbe:
        """The probe as ``bench.json`` stores it (``null`` numbers read as NaN).

        Examples
        --------
        >>> from dataclasses import asdict
        >>> p = CellProbe(16, 16, 0, 0, 1.0, 0.5, 1.5e-05, 0.79, 1.0, can_infer=True, does_use=False,
        ...               reading="infers; use not shown")
        >>> CellProbe.from_dict(asdict(p)) == p
        True
        """
        if not isinstance(d, Mapping):
            raise TypeError(f"`probe` must be a mapping, got {type(d).__name__}")
        floats = {"accuracy", "chance", "pvalue", "ci_low", "ci_high"}
        return cls(**{f.name: (_num(d.get(f.name)) if f.name in floats else d[f.name])
                      for f in fields(cls) if f.name in d or f.name in floats})

    def row(self) -> dict[str, Any]:
        """The probe's columns of ``bench.csv`` (:data:`PROBE_COLUMNS`)."""
        return {"probe_n": self.n, "probe_accuracy": self.accuracy, "probe_chance": self.chance,
                "probe_pvalue": self.pvalue, "probe_ci_low": self.ci_low, "probe_ci_high": self.ci_high,
                "can_infer": self.can_infer, "does_use": self.does_use, "reading": self.reading}


def stored_answers(cache: Any) -> int | None:
    """Answers stored in a model's response cache, ``None`` without one, 0 for a file not yet written.

    The cells of one model run in turn, so the difference across a step is what the step sent
    and got answered (the bench's ``sent`` counts).

    Examples
    --------
    >>> stored_answers(None), stored_answers(__import__("pathlib").Path("/nonexistent/cache.sqlite"))
    (None, 0)
    """
    from pathlib import Path

    from ipcausal.backends.cache import ResponseCache

    if cache is None:
        return None
    if isinstance(cache, ResponseCache):
        return len(cache)
    if not Path(cache).is_file():
        return 0
    with ResponseCache(cache) as c:
        return len(c)


def probe_cell(cell: Any, pairs: Any, backend: Any, *, backgrounds: Any, alpha: float, seed: int = 0,
               cache: Any = None) -> Any:
    """``cell`` (a :class:`~ipcausal.study.bench.report.BenchCell`) with the probe of ``pairs`` on ``backend``.

    Every distinct prompt of ``pairs`` is probed once with ``backgrounds`` as the options
    (:func:`ipcausal.study.probe.probe`, options shuffled with ``seed``, answers kept in ``cache``);
    ``can_infer`` is the probe's p <= ``alpha``, ``does_use`` any of the cell's groups rejected.  A
    probe that raises is recorded in the CellProbe's ``error``; the cell's own results stay.

    Examples
    --------
    >>> from ipcausal.study.bench.report import BenchCell, CellGroup
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=0.0, probe_accuracy=1.0, seed=2)
    >>> pairs = sim.study(n=10, rng=0)
    >>> g = CellGroup("american vs british", 10, 0.1, -0.5, 0.7, 0.6, 0.6, False)
    >>> cell = probe_cell(BenchCell("m", "c", "ok", "cells/m/c", groups=(g,)), pairs, sim,
    ...                   backgrounds=sim.backgrounds, alpha=0.05)
    >>> cell.probe.accuracy, cell.probe.n, cell.probe.reading
    (1.0, 20, 'infers; use not shown')
    """
    from ipcausal.study.probe import probe

    if not isinstance(alpha, float) or not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be a level in (0, 1), got {alpha!r}")
    does_use = any(bool(g.reject) for g in cell.groups)
    before = stored_answers(cache)
    try:
        res = probe(pairs, backend, backgrounds=tuple(backgrounds), rng=seed, cache=cache)
    except Exception as exc:  # noqa: BLE001 - the cell's run stands; the probe's failure is reported with it
        nan = math.nan
        return replace(cell, probe=CellProbe(0, 0, 0, 0, nan, nan, nan, nan, nan, alpha=alpha, does_use=does_use,
                                             error=f"{type(exc).__name__}: {exc}"))
    after = stored_answers(cache)
    # no answered prompt: no test, no reading (``n`` 0 and the failed or unparseable counts say why)
    can_infer = bool(res.pvalue <= alpha) if res.n > 0 else None
    p = CellProbe(int(res.correct), int(res.n), int(res.unparseable), int(res.failed), float(res.accuracy),
                  float(res.chance), float(res.pvalue), float(res.ci_low), float(res.ci_high),
                  float(res.confidence_level), alpha, can_infer, does_use,
                  None if can_infer is None else reading(can_infer, does_use),
                  int(res.n + res.unparseable + res.failed), None if before is None else after - before)
    return replace(cell, probe=p)


def probe_text(p: Any) -> str:
    """One line for a cell's probe: its reading, accuracy against chance, p (or its error)."""
    if p is None:
        return ""
    if p.error:
        return f"probe failed: {p.error}"
    acc = "—" if math.isnan(p.accuracy) else f"{p.accuracy:.2f}"
    tail = (f", {p.failed} failed" if p.failed else "") + (f", {p.unparseable} unparseable" if p.unparseable else "")
    return f"{p.reading or 'no probe answer'} (probe accuracy {acc} vs chance {p.chance:.2f}, p {p.pvalue:.2g}, n {p.n}{tail})"
