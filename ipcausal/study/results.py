"""The study's results: one :class:`GroupResult` per background pair, the whole :class:`Report`.

A Report is the artefact between testing and rendering: it carries every number a reader sees
and the bounded data the pictures need (the oriented values of each group and the null
distribution of the route that produced its p), so :mod:`ipcausal.report` renders it without
testing again.  ``Report.write(path)`` / ``Report.read(path)`` keep it as JSON with a schema
version; ``Report.read(p).to_dict() == r.to_dict()``.
"""

from __future__ import annotations

import json
import math
import os
import types
import typing
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from ipcausal.stats.null import Distribution
from ipcausal.stats.results import (
    MMDTestResult,
    PBResult,
    Result,
    SequentialSignResult,
    SequentialTestResult,
    SignFlipResult,
    SignTestResult,
)
from ipcausal._jsonio import json_ready, write_json
from ipcausal.study._schema import load_json, upgrade, version_of
from ipcausal.study.parts import (AuditInfo, CueEffect, EquivalenceInfo, ExamplePair, HumanInfo, HumanSource,
                                  JudgeAgreement, MDEInfo, OmnibusInfo, SequentialInfo, StrataInfo, TrendInfo)

__all__ = ["GroupResult", "Report", "MDEInfo", "HumanInfo", "HumanSource", "JudgeAgreement", "EquivalenceInfo", "SequentialInfo", "OmnibusInfo", "AuditInfo", "TrendInfo", "CueEffect", "ExamplePair",
           "StrataInfo", "SCHEMA",
           "SCHEMA_VERSION", "UNKNOWN_MODEL", "load_json"]

SCHEMA = "ipcausal.report"
#: 2: a group's equivalence and sequential parts and the Report's audit are typed objects (v1: flat fields).
SCHEMA_VERSION = 2
#: The ``model`` of the groups when the pairs name no model.
UNKNOWN_MODEL = "(model not given)"
#: A group's ``test`` -> the result type of its ``detail`` (how :meth:`Report.read` rebuilds it).
DETAIL_TYPES: dict[str, type] = {"permutation": SignFlipResult, "sign": SignTestResult, "distribution": MMDTestResult}


@dataclass(frozen=True)
class GroupResult(Result):
    """The test for one unordered background pair {background_a, background_b} within one model.

    For interval outcomes the effect is mean(Δ) with Δ = score(background_b) − score(background_a);
    for similarity outcomes it is the median similarity.  ``data`` holds the oriented Δ (or the
    similarities) — the values themselves up to 5,000, a histogram beyond — and ``null`` the null
    distribution of the route that produced ``pvalue``, on the scale of ``observed`` (mean Δ for
    the sign-flip test, the sign test's count for the sign test).  ``n`` counts the pairs;
    ``n_clusters`` the clusters when the test flipped whole clusters (``unit`` says which), in
    which case ``data``, ``null`` and ``observed`` are on the scale of the cluster sums.  With a
    ``margin`` ε, ``equivalence`` holds the group's :class:`EquivalenceInfo` (its ``verdict``:
    reject / equivalent / inconclusive); without one it is ``None``.  ``ci_method`` names the
    interval ``ci_low``/``ci_high``: ``"betting-fixed-n"`` (a bound on |Δ| known: an interval for
    the mean valid for every distribution on it; "(cluster means)" with clusters), ``"shift: …"``
    (no bound: the inverted sign-flip test, an interval for a shift δ under "Δ − δ symmetric",
    not for the mean of an asymmetric Δ), ``"median: …"`` (similarities) or the confidence
    sequence's name (audits); ``""`` in files written before it.

    Groups of an audit (:func:`ipcausal.audit`, ``test == "sequential"``) carry a
    :class:`~ipcausal.stats.results.SequentialTestResult` or
    :class:`~ipcausal.stats.results.SequentialSignResult` as ``detail`` (the group's own sequential
    test before the correction: its ``reject`` says the e-process reached 1/α; the group's
    ``reject`` says it was rejected after e-Holm/e-Bonferroni), no ``null``, and ``sequential``:
    the :class:`SequentialInfo` (pairs available and sent, why it stopped, the e-value before and
    after the correction, the e-process path); it is ``None`` for a fixed-n test.  Their ``effect``
    is mean(Δ), or for similarities the share of untied values below m0, with the confidence
    sequence as the interval.
    """

    model: str
    group: str
    background_a: str
    background_b: str
    outcome: str
    test: str
    n: int
    statistic: float
    effect: float
    ci_low: float
    ci_high: float
    pvalue: float
    pvalue_adjusted: float
    reject: bool
    detail: Any
    data: Distribution | None = None
    null: Distribution | None = None
    observed: float = math.nan
    n_clusters: int | None = None
    unit: str = "pairs"
    equivalence: EquivalenceInfo | None = None
    sequential: SequentialInfo | None = None
    ci_method: str = ""
    mde: MDEInfo | None = None


@dataclass(frozen=True)
class Report(Result):
    """What :func:`ipcausal.test` returns: one :class:`GroupResult` per background pair and model.

    ``backgrounds`` gives, per model and background, the mean outcome with an interval that
    respects the outcome (:func:`ipcausal.stats.bounded.bounded_mean_ci`)
    and count (interval outcomes; for the per-background picture next to PB).  ``omnibus`` gives,
    per model, the joint test of "no background matters" (``correction="westfall-young"``).
    ``margin`` is the equivalence margin when one was given.  ``audit`` is ``None``
    for a fixed-n test; an audit (``method == "sequential"``) puts its :class:`AuditInfo` there
    (pairs available and sent, requests of the full design and sent, why it stopped, 1/α …).
    ``trend`` holds one :class:`TrendInfo` per model when the test was given ``Design(trend=[level, …])``
    and ``strata`` one :class:`StrataInfo` per model and group when it was given ``Design(strata=COLUMN)``
    (both empty otherwise; files written before them read back with them empty).  ``human`` holds
    one :class:`HumanInfo` per group when the test was given human scores (``human=``: the effect on
    the human scale by PPI++, the judge's agreement and its bias by background) and ``human_source``
    where they came from (empty and ``None`` otherwise).
    ``examples`` holds a few pairs per group to show (prompts, responses, scores; chosen by
    :data:`ipcausal.study.examples.EXAMPLE_RULE`), empty where the Report was made without them.
    """

    groups: tuple[GroupResult, ...]
    outcome: str
    alpha: float
    correction: str
    method: str
    m0: float | None
    paper_compat: bool
    null_hypothesis: str
    direction: str
    pb: dict[str, PBResult] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    backgrounds: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    margin: float | None = None
    omnibus: dict[str, OmnibusInfo] = field(default_factory=dict)
    audit: AuditInfo | None = None
    trend: tuple[TrendInfo, ...] = ()
    strata: tuple[StrataInfo, ...] = ()
    human: tuple[HumanInfo, ...] = ()
    human_source: HumanSource | None = None
    examples: tuple[ExamplePair, ...] = ()

    @property
    def ip_detected(self) -> bool:
        """True when any background pair is rejected after the correction."""
        return any(g.reject for g in self.groups)

    def ip_detected_by_model(self) -> dict[str, bool]:
        """The IP verdict per model (each model is its own correction family)."""
        out: dict[str, bool] = {}
        for g in self.groups:
            out[g.model] = out.get(g.model, False) or g.reject
        return out

    def to_frame(self) -> Any:
        """One row per (model, background pair), as a pandas DataFrame."""
        import pandas as pd

        rows = []
        for g in self.groups:
            row = {k: v for k, v in asdict(g).items() if k not in _NOT_COLUMNS}
            if g.equivalence is not None:  # flat columns, named as in the JSON of schema version 1
                e = g.equivalence
                row.update(margin=e.margin, equivalence=e.verdict, equivalence_pvalue=e.pvalue,
                           equivalence_ci_low=e.ci_low, equivalence_ci_high=e.ci_high)
            if g.sequential is not None:
                row.update(asdict(g.sequential))
            if g.mde is not None:  # the minimal detectable effect at power 0.8
                row.update(mde=g.mde.effect, mde_d_z=g.mde.d_z)
            d = g.detail
            row["method"] = d.method
            row["alternative"] = d.alternative
            if isinstance(d, SignFlipResult):
                row.update(effect_size=d.effect_size, pvalue_se=d.pvalue_se, n_resamples=d.n_resamples)
            elif isinstance(d, (SequentialTestResult, SequentialSignResult)):
                row.update(stopped_at=d.stopped_at)
            else:
                row.update(n_ties=d.n_ties, share_below=d.share_below, m0=d.m0)
            rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (NaN as ``None``, ±inf as ``"inf"``/``"-inf"``) plus the verdicts."""
        d = json_ready(super().to_dict(), inf_as_text=True)
        d["ip_detected"] = self.ip_detected
        d["ip_detected_by_model"] = self.ip_detected_by_model()
        return d

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text (the payload of :meth:`write`, without the schema header)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def payload(self, *, title: str | None = None, counts: dict[str, Any] | None = None,
                settings: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON object :meth:`write` writes: schema header, the Report, and optional case metadata."""
        out: dict[str, Any] = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION}
        if title is not None:
            out["title"] = str(title)
        out["report"] = self.to_dict()
        if counts is not None:
            out["counts"] = json_ready(dict(counts), inf_as_text=True)
        if settings is not None:
            out["settings"] = json_ready(json.loads(json.dumps(dict(settings), default=str)), inf_as_text=True)
        return out

    def write(self, path: str | os.PathLike[str], *, title: str | None = None,
              counts: dict[str, Any] | None = None, settings: dict[str, Any] | None = None) -> Path:
        """Write the Report as JSON with a schema header; :meth:`read` gives it back.

        ``title``, ``counts`` and ``settings`` (a case's heading, request counts and settings) are
        stored beside it for :func:`ipcausal.report.read_sections`.

        Examples
        --------
        >>> import tempfile, os, ipcausal
        >>> ps = ipcausal.PairSet.from_records(
        ...     {"pair_id": k, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q",
        ...      "score_i": 1, "score_j": k % 3} for k in range(12))
        >>> r = ipcausal.test(ps)
        >>> path = r.write(os.path.join(tempfile.mkdtemp(), "report.json"))
        >>> ipcausal.Report.read(path).to_dict() == r.to_dict()
        True
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"`path` must be a file path, got {type(path).__name__}")
        return write_json(path, self.payload(title=title, counts=counts, settings=settings), inf_as_text=True)

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> "Report":
        """Read a Report written by :meth:`write` (or the ``report`` entry of a case's report.json)."""
        payload, p = load_json(path)
        return cls.from_dict(payload, source=str(p))

    @classmethod
    def from_dict(cls, payload: dict[str, Any], *, source: str = "report") -> "Report":
        """A Report from :meth:`to_dict`'s output (with or without the :meth:`write` header).

        A payload of schema version 1 is upgraded first: the header says so, or without one, the
        flat v1 fields of its groups.
        """
        if not isinstance(payload, dict):
            raise ValueError(f"{source}: a report must be a JSON object")
        version = version_of(payload)
        if "schema" in payload:
            if payload.get("schema") != SCHEMA:
                raise ValueError(f"{source}: not an ipcausal report (schema {payload.get('schema')!r})")
            version = payload.get("schema_version")
            if not isinstance(version, int) or version > SCHEMA_VERSION:
                raise ValueError(f"{source}: report schema version {version!r} is newer than this ipcausal "
                                 f"reads ({SCHEMA_VERSION}); upgrade ipcausal")
            payload = payload["report"]
        try:
            return _build(cls, upgrade(payload, version))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{source}: malformed report ({exc})") from None

    def __str__(self) -> str:
        from ipcausal.study.text import format_text

        return format_text(self)


def _float(v: Any) -> float:
    if v is None:
        return math.nan
    if v in ("inf", "-inf"):
        return float(v)
    return float(v)


_HINTS: dict[type, dict[str, Any]] = {}
#: GroupResult fields that are not columns of :meth:`Report.to_frame` (the parts are flattened).
_NOT_COLUMNS = ("detail", "data", "null", "equivalence", "sequential", "mde")


def _build(cls: type, d: dict[str, Any]) -> Any:
    """Rebuild a dataclass from its plain dict, using its type hints for floats, tuples and nesting."""
    if cls is Distribution:
        return Distribution.from_dict(d)
    hints = _HINTS.setdefault(cls, typing.get_type_hints(cls))
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in d:
            continue
        v, hint = d[f.name], hints[f.name]
        kwargs[f.name] = _convert(f.name, v, hint, d)
    return cls(**kwargs)


def _convert(name: str, v: Any, hint: Any, parent: dict[str, Any]) -> Any:
    if name == "detail":
        if parent.get("test") == "sequential":
            return _build(SequentialSignResult if "m0" in v else SequentialTestResult, v)
        kind = DETAIL_TYPES.get(str(parent.get("test")))
        if kind is None:
            raise ValueError(f"unknown test {parent.get('test')!r} (known: {', '.join(DETAIL_TYPES)})")
        return _build(kind, v)
    if name == "path_e":
        return tuple(_float(x) for x in v)
    if v is None:
        return None if _optional(hint) else (math.nan if hint is float else None)
    if hint in (Distribution, Distribution | None):
        return Distribution.from_dict(v)
    part = _part(hint)
    if part is not None:  # a typed part: EquivalenceInfo, SequentialInfo, AuditInfo
        return _build(part, v)
    if _is_float(hint):
        return _float(v)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple:  # groups: tuple[GroupResult, ...]; warnings, path_n: plain values
        return tuple(_build(args[0], x) for x in v) if is_dataclass(args[0]) else tuple(v)
    if origin is dict and is_dataclass(args[1]):  # pb, omnibus: one result per model
        return {str(k): _build(args[1], x) for k, x in v.items()}
    if name == "backgrounds":
        return {m: {b: {k: _float(x) if k != "n" else int(x) for k, x in s.items()} for b, s in bg.items()}
                for m, bg in v.items()}
    return v


def _part(hint: Any) -> type | None:
    """The dataclass of a ``Part | None`` hint (``None`` for any other hint)."""
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    return args[0] if len(args) == 1 and is_dataclass(args[0]) else None


def _optional(hint: Any) -> bool:
    return type(None) in typing.get_args(hint)


def _is_float(hint: Any) -> bool:
    if hint is float:
        return True
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    return union and float in typing.get_args(hint) and int not in typing.get_args(hint)
