"""The artefact of a bench: :class:`BenchReport` (``DIR/bench.json``), its CSV tables (issue 20 item 2).

A bench of m models × c cases has one :class:`BenchCell` per (model, case): where its run folder
and Report are, one :class:`CellGroup` row per background pair (effect, interval, p, adjusted p,
verdicts), the cell's value-alignment verdict with its reason, its calls and cost, the
background probe with the "can infer / does use" reading when the bench probed
(:class:`~ipcausal.study.bench.probe.CellProbe`) — or, for a cell that failed, the error.
:class:`BenchComparison` rows compare the models per case and background
pair on the pairs every model answered (:func:`ipcausal.study.compare.compare_runs`): the pair's
own sign-flip p, the Westfall–Young step-down adjusted p, and the Holm-adjusted pair p (valid for
each "mean D = 0" claim when the models' spreads differ, where the step-down's pair claims can
over-reject).

``bench.json`` carries :data:`SCHEMA` ("ipcausal.bench/1"); :meth:`BenchReport.read` refuses
another (a file written before the probe existed reads with ``probe = None``).
:meth:`BenchReport.write_csv` writes ``bench.csv`` (:data:`BENCH_COLUMNS`) and
``comparisons.csv`` (:data:`COMPARISON_COLUMNS`).  This module imports only the standard library,
so the renderers of :mod:`ipcausal.report` can read it.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ipcausal._jsonio import atomic, write_json
from ipcausal.study.bench.probe import (
    PROBE_COLUMNS,
    READING_MEANINGS,
    READINGS,
    CellProbe,
    probe_text,
    row_from_dict,
    row_of,
)

__all__ = ["BenchReport", "BenchCell", "CellGroup", "CellMitigation", "BenchComparison", "BenchRank", "SCHEMA",
           "BENCH_COLUMNS", "COMPARISON_COLUMNS", "RANK_COLUMNS", "CellProbe", "READINGS", "READING_MEANINGS", "probe_text"]

SCHEMA = "ipcausal.bench/1"
BENCH_COLUMNS = ("model", "case", "group", "n", "effect", "ci_low", "ci_high", "pvalue", "pvalue_adjusted",
                 "reject", "equivalence", "alignment", "calls", "cost") + PROBE_COLUMNS + (
                 "direction", "scale", "cannot_reject", "d_z", "mde", "rank_low", "rank_high", "rank_set", "tie_group")
COMPARISON_COLUMNS = ("case", "group", "model_a", "model_b", "n", "difference", "ci_low", "ci_high", "pvalue",
                      "pvalue_adjusted", "pvalue_holm", "refused")
RANK_COLUMNS = ("case", "group", "model", "n", "effect", "rank_low", "rank_high", "rank_set", "tie_group",
                "confidence_level")


@dataclass(frozen=True)
class CellGroup:
    """One background pair of a cell: the row of ``bench.csv`` (without model, case, alignment, calls, cost).

    Its fields are those of the cell Report's :class:`~ipcausal.study.results.GroupResult` of the
    same names (:meth:`of`); ``equivalence`` is the TOST verdict, when the case has a margin.
    ``d_z`` is mean Δ / sd of Δ (interval outcomes; ``None`` otherwise) and ``mde``, beside a
    non-rejection, the minimal detectable effect at power 0.8 from the observed spread (the Report's
    :class:`~ipcausal.study.parts.MDEInfo`; ``None`` beside a rejection and in files written before it).
    ``direction`` says which way Δ runs (``"Δ = score(b) − score(a)"``); ``cannot_reject`` is set
    where the group's test cannot reject whatever the data (too few informative pairs at its
    corrected level: ``"3 informative pairs; needs ≥ 6"``).
    """

    group: str
    n: int
    effect: float
    ci_low: float
    ci_high: float
    pvalue: float
    pvalue_adjusted: float
    reject: bool
    equivalence: str | None = None
    d_z: float | None = None  # mean Δ / sd of Δ (interval outcomes)
    mde: float | None = None  # beside a non-rejection: the minimal detectable effect at power 0.8
    direction: str = ""
    cannot_reject: str | None = None

    @classmethod
    def of(cls, g: Any, **values: Any) -> CellGroup:
        """The row of a GroupResult ``g``, field by field (``d_z`` from its test's effect size, ``mde`` from
        its MDEInfo beside a non-rejection; ``values`` set the others)."""
        d = getattr(g.detail, "effect_size", None)
        found = getattr(g, "mde", None)
        mde = None if found is None or g.reject else float(getattr(found, "effect", found))
        values = {"d_z": None if d is None or d != d else float(d), "mde": mde, **values}
        return row_of(cls, g, equivalence=g.equivalence.verdict if g.equivalence is not None else None, **values)


@dataclass(frozen=True)
class CellMitigation:
    """One background pair of a cell run without and with the case's ``mitigation`` (same pairs, same cache).

    ``change`` is mean D = Δ_with − Δ_without (similarity: s_with − s_without) with its interval and
    paired sign-flip p (corrected over the background pairs); ``removed`` is ``"yes"`` only when the
    effect with the mitigation is shown equivalent to zero (similarity: median shown above m0),
    ``"no"`` otherwise, ``"not assessed"`` without a margin; ``dropped``: pairs the rewrite check
    left out of both runs.  :mod:`ipcausal.study.mitigation.case` says how.

    Examples
    --------
    >>> row = CellMitigation("strip", "true_belief vs false_belief", 12, 1.7, 0.0, -1.7, -2.8, -0.6, 0.01, "yes")
    >>> row.removed, row.dropped
    ('yes', 0)
    """

    mitigation: str
    group: str
    n: int
    effect_without: float
    effect_with: float
    change: float
    change_ci_low: float
    change_ci_high: float
    change_pvalue: float
    removed: str
    dropped: int = 0

    @classmethod
    def of(cls, comparison: Any, g: Any) -> CellMitigation:
        """The row of background pair ``g`` (a MitigationGroup) of ``comparison`` (a CaseMitigation), by name."""
        return row_of(cls, g, mitigation=comparison.mitigation, removed=comparison.status(g),
                      dropped=comparison.result.n_failed_check)


@dataclass(frozen=True)
class BenchCell:
    """One (model, case) cell.  ``status`` is ``"ok"``, ``"incomplete"`` (some requests failed: rerun
    to retry them) or ``"failed"`` (``error`` says why; no groups).  ``folder`` and ``report`` are
    relative to the bench folder.  ``calls``: the requests the cell's pairs make; ``sent``: the
    answers this run of the cell got from the model (new rows of the model's cache; 0 when a
    rerun took every answer from the cache)."""

    model: str
    case: str
    status: str
    folder: str
    report: str | None = None
    groups: tuple[CellGroup, ...] = ()
    alignment: str | None = None
    alignment_reason: str | None = None
    stance: str | None = None
    calls: int | None = None
    sent: int | None = None
    cost: float | None = None
    error: str | None = None
    probe: CellProbe | None = None  # the background probe and the 2 x 2 reading (``[settings] probe = true``)
    mitigation: tuple[CellMitigation, ...] = ()
    mitigation_error: str | None = None
    scale: str | None = None  # the scorer and its scale: models are compared on a case only when theirs agree
    unit: str | None = None  # the effect's unit, in words
    margin: float | None = None  # the equivalence margin ε of the cell's tests (None: no equivalence test)
    examples: tuple[dict[str, Any], ...] = ()  # a few of its Report's example pairs (the fields of ExamplePair)


@dataclass(frozen=True)
class BenchComparison:
    """Two models on one case and background pair: D = Δ^a − Δ^b on the ``n`` pairs all models answered.

    ``refused`` says why two models were *not* compared (their outcomes are not on one scale); such a
    row has no numbers (NaN) and ``group`` ``"—"``.
    """

    case: str
    group: str
    model_a: str
    model_b: str
    n: int
    difference: float
    ci_low: float
    ci_high: float
    pvalue: float
    pvalue_adjusted: float
    pvalue_holm: float
    refused: str | None = None


@dataclass(frozen=True)
class BenchRank:
    """One model's simultaneous rank set on one case and background pair (:func:`ipcausal.stats.ranks.rank_sets`).

    ``rank_low``–``rank_high`` (``rank_set`` as text) holds the model's rank by the size |mean Δ| of its
    effect, 1 the largest, jointly with every other model's set at ``confidence_level``; models that
    share a letter of ``tie_group`` cannot be ordered by the data.  ``effect`` is the mean Δ on the
    ``n`` pairs every model compared answered.
    """

    case: str
    group: str
    model: str
    n: int
    effect: float
    rank_low: int
    rank_high: int
    rank_set: str
    tie_group: str
    confidence_level: float


@dataclass(frozen=True)
class BenchReport:
    """The result of a bench: its cells, the model comparisons and the settings.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ipcausal.study.bench.report import BenchCell, BenchReport, CellGroup
    >>> g = CellGroup("true_belief vs false_belief", 8, -0.5, -0.9, -0.1, 0.02, 0.02, True)
    >>> rep = BenchReport(("m",), ("echo",), (BenchCell("m", "echo", "ok", "cells/m/echo", groups=(g,),
    ...                   alignment="inconclusive"),))
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> BenchReport.read(rep.write(d / "bench.json")) == rep
    True
    >>> rep.cell("m", "echo").groups[0].reject, rep.failed
    (True, ())
    """

    models: tuple[str, ...]
    cases: tuple[str, ...]
    cells: tuple[BenchCell, ...]
    comparisons: tuple[BenchComparison, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    ranks: tuple[BenchRank, ...] = ()

    def cell(self, model: str, case: str) -> BenchCell:
        """The cell of ``model`` on ``case``."""
        for c in self.cells:
            if c.model == model and c.case == case:
                return c
        raise KeyError(f"no cell for model {model!r} on case {case!r}")

    @property
    def failed(self) -> tuple[BenchCell, ...]:
        """The cells that did not finish (status other than ``"ok"``)."""
        return tuple(c for c in self.cells if c.status != "ok")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values, with ``schema``."""
        d = asdict(self)
        d["settings"] = dict(self.settings)
        return {"schema": SCHEMA, **json.loads(json.dumps(d, default=str))}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BenchReport:
        """The report :meth:`to_dict` gave; another schema is an error."""
        if not isinstance(d, Mapping) or d.get("schema") != SCHEMA:
            got = d.get("schema") if isinstance(d, Mapping) else type(d).__name__
            raise ValueError(f"not a bench report of schema {SCHEMA!r} (got {got!r})")
        cells = []
        for c in d["cells"]:
            c = dict(c)
            c["groups"] = tuple(row_from_dict(CellGroup, g) for g in c.get("groups", ()))
            if c.get("probe") is not None:  # files written before the probe column have none
                c["probe"] = CellProbe.from_dict(c["probe"])
            # absent before mitigations: ()
            c["mitigation"] = tuple(row_from_dict(CellMitigation, x) for x in c.get("mitigation") or ())
            c["examples"] = tuple(c.get("examples") or ())  # absent before issue 32: ()
            cells.append(row_from_dict(BenchCell, c))
        comps = tuple(row_from_dict(BenchComparison, x) for x in d.get("comparisons", ()))
        ranks = tuple(row_from_dict(BenchRank, x) for x in d.get("ranks") or ())
        return cls(tuple(d["models"]), tuple(d["cases"]), tuple(cells), comps, dict(d.get("settings") or {}),
                   tuple(d.get("notes") or ()), ranks)

    def write(self, path: str | os.PathLike[str]) -> str:
        """Write ``bench.json`` (NaN as ``null``); returns the path."""
        return str(write_json(path, self.to_dict(), indent=1))

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> BenchReport:
        """Read a ``bench.json`` (or the bench folder holding one)."""
        p = Path(path)
        if p.is_dir():
            p = p / "bench.json"
        return cls.from_dict(json.loads(p.read_text(encoding="utf-8")))

    def rank(self, model: str, case: str, group: str) -> BenchRank | None:
        """The rank set of ``model`` on ``case`` and background pair ``group`` (``None`` where none was made)."""
        for r in self.ranks:
            if (r.model, r.case, r.group) == (model, case, group):
                return r
        return None

    def rows(self) -> list[dict[str, Any]]:
        """The rows of ``bench.csv``: one per model × case × background pair (a failed cell: one row, no group)."""
        out = []
        for c in self.cells:
            base = {"model": c.model, "case": c.case, "alignment": c.alignment or (c.status if c.status != "ok"
                                                                                   else None),
                    "calls": c.calls, "cost": c.cost, "scale": c.scale,
                    **(c.probe.row() if c.probe is not None else {})}
            if not c.groups:
                out.append({**dict.fromkeys(BENCH_COLUMNS), **base})
            for g in c.groups:
                r = self.rank(c.model, c.case, g.group)
                ranked = {k: getattr(r, k) for k in ("rank_low", "rank_high", "rank_set", "tie_group")} if r else {}
                out.append({**base, **asdict(g), **ranked})
        return out

    def write_csv(self, folder: str | os.PathLike[str]) -> dict[str, str]:
        """Write ``bench.csv``, ``comparisons.csv`` and ``ranks.csv`` into ``folder``; returns name → path."""
        root = Path(folder)
        files = {}
        for name, cols, rows in (("bench.csv", BENCH_COLUMNS, self.rows()),
                                 ("comparisons.csv", COMPARISON_COLUMNS, [asdict(x) for x in self.comparisons]),
                                 ("ranks.csv", RANK_COLUMNS, [asdict(x) for x in self.ranks])):
            with atomic(root / name) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
                w = csv.DictWriter(fh, fieldnames=list(cols), extrasaction="ignore")
                w.writeheader()
                for r in rows:
                    w.writerow({k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                                for k, v in r.items()})
            files[name] = str(root / name)
        return files
