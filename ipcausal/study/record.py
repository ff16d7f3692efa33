"""Run metadata with one owner: :class:`RunRecord`, and :func:`write_outputs`, the one writer of a run folder.

A run (a case, an audit, a scored file tested) has a title, counts (pairs, requests, answers from
the cache, failures, unparseable answers, pairs scored), the pairs dropped by reason, settings
(model, backend, generation, scorer, seed …), timings and a cost.  :class:`RunRecord` holds them,
typed and read-only; :func:`write_outputs` writes ``responses.jsonl``, ``pairs.jsonl``,
``dropped.jsonl``, ``report.json`` (the Report with the record beside it, under ``"record"``,
plus the ``title``/``counts``/``settings`` keys the current release reads) and ``meta.json``;
:meth:`RunRecord.read` reads a record back from any of the files this and earlier releases write
(``report.json``, a case folder's ``meta.json``, a scored file's ``<stem>.meta.json``).

The record sits beside the Report, not inside it: the Report is the statistical result (equal
for equal data), the record says how the data was obtained (timings differ between reruns).
"""

from __future__ import annotations

import json
import numbers
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ipcausal._jsonio import write_json

__all__ = ["Counts", "RunRecord", "write_outputs", "write_report_file", "dropped_by_reason", "DROP_REASONS"]

#: Why a pair is left out of the test (the status :func:`ipcausal.scoring.score_pairs` gives it).
DROP_REASONS: tuple[str, ...] = ("missing", "unparseable", "failed")


@dataclass(frozen=True)
class Counts:
    """What a run counted, typed: a case run's pairs, requests and answers, an audit's pairs and requests.

    A field that a run does not count is ``None``.  :meth:`to_dict` gives the counts a run folder
    and a report show, under the labels they have always had (``"from cache"`` for
    :attr:`from_cache`), in this order, those counted only; :meth:`from_dict` reads them back.

    Attributes
    ----------
    pairs_available, pairs_sent, pairs_scored : int, optional
        An audit: the pairs it could send, sent, and scored into its e-processes.
    requests_full, requests_sent, requests_saved : int, optional
        An audit: the requests of the full design, sent, and not needed.
    requests_new : int, optional
        An audit: distinct requests asked of the model in this call (a shared prompt once).
    batches : int, optional
        An audit: the batches sent.
    pairs, requested, completed, from_cache, failed, unparseable, excluded, scored : int, optional
        A case run: its pairs; requests made, answered, answered from the response cache, failed;
        answers that could not be scored; pairs left out of the test, and pairs tested.

    Examples
    --------
    >>> c = Counts(pairs=3, requested=6, completed=6, from_cache=6, failed=0)
    >>> c.to_dict()
    {'pairs': 3, 'requested': 6, 'completed': 6, 'from cache': 6, 'failed': 0}
    >>> Counts.from_dict(c.to_dict()) == c, c.from_cache
    (True, 6)
    """

    pairs_available: int | None = None
    pairs_sent: int | None = None
    pairs_scored: int | None = None
    requests_full: int | None = None
    requests_sent: int | None = None
    requests_saved: int | None = None
    requests_new: int | None = None
    batches: int | None = None
    pairs: int | None = None
    requested: int | None = None
    completed: int | None = None
    from_cache: int | None = None
    failed: int | None = None
    unparseable: int | None = None
    excluded: int | None = None
    scored: int | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
                    raise ValueError(f"`{f.name}` must be a non-negative integer or None, got {v!r}")
                object.__setattr__(self, f.name, int(v))

    def to_dict(self) -> dict[str, int]:
        """The counts made, by their labels (what ``meta.json``, ``report.json`` and the reports show)."""
        return {_LABELS.get(f.name, f.name): getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Counts:
        """The counts :meth:`to_dict` gave (other keys are left out)."""
        if not isinstance(d, Mapping):
            raise TypeError(f"`counts` must be a mapping, got {type(d).__name__}")
        names = {_LABELS.get(f.name, f.name): f.name for f in fields(cls)}
        return cls(**{names[k]: v for k, v in d.items() if k in names})

    def __getitem__(self, key: str) -> int:
        """``counts["requested"]``, as when the counts were a dict (deprecated: read the field)."""
        name = {v: k for k, v in _LABELS.items()}.get(key, key)
        if name not in self.__dataclass_fields__ or getattr(self, name) is None:
            raise KeyError(key)
        warnings.warn(f"counts[{key!r}] is deprecated and goes in 0.3; read counts.{name}", DeprecationWarning,
                      stacklevel=2)
        return getattr(self, name)


#: The labels of the counts whose field name is not their label.
_LABELS = {"from_cache": "from cache"}


def _frozen(value: Any, name: str) -> Mapping[str, Any]:
    if value is None:
        value = {}
    if isinstance(value, Counts):
        value = value.to_dict()
    if not isinstance(value, Mapping):
        raise TypeError(f"`{name}` must be a mapping, got {type(value).__name__}")
    return MappingProxyType(dict(value))


@dataclass(frozen=True)
class RunRecord:
    """What a run was: its title, counts, dropped pairs by reason, settings, timings and cost.

    Attributes
    ----------
    title : str, optional
        The heading of its report.
    counts : Counts or mapping of str to int
        As the run reports them (a :class:`Counts` is kept by its labels; a case: ``pairs``,
        ``requested``, ``completed``, ``from cache``,
        ``failed``, ``unparseable``, ``excluded``, ``scored``; an audit: ``pairs_available``,
        ``pairs_sent`` …; a scored file: ``requested``, ``scored``, ``missing``, ``unparseable``,
        ``failed``, ``zeroed``).
    dropped : mapping of str to int
        Pairs left out of the test, by reason (:data:`DROP_REASONS`).
    settings : mapping
        Model, backend, generation settings, scorer, seed …
    seconds : mapping of str to float
        Timings (``"run"``: the model's time; ``"rerun (from cache)"``).
    cost : float, optional
        The cost of the new tokens, when prices were given.
    labels : mapping
        Where the human scores of the run came from (``ipcausal test --human``):
        :meth:`ipcausal.study.human.HumanLabels.provenance` — the file, the pairs labelled, whether they
        are the package's own seeded draw, its seed, size and population; empty without labels.

    Examples
    --------
    >>> from ipcausal.study.record import RunRecord
    >>> r = RunRecord("echo", counts={"requested": 6, "scored": 3}, dropped={"unparseable": 3})
    >>> RunRecord.from_dict(r.to_dict()) == r, r.counts["scored"]
    (True, 3)
    """

    title: str | None = None
    counts: Mapping[str, Any] = field(default_factory=dict)
    dropped: Mapping[str, int] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    seconds: Mapping[str, float] = field(default_factory=dict)
    cost: float | None = None
    labels: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.title is not None and not isinstance(self.title, str):
            raise TypeError(f"`title` must be a string or None, got {type(self.title).__name__}")
        for name in ("counts", "dropped", "settings", "seconds", "labels"):
            object.__setattr__(self, name, _frozen(getattr(self, name), name))
        unknown = sorted(set(self.dropped) - set(DROP_REASONS))
        if unknown:
            raise ValueError(f"`dropped` reasons must be among {', '.join(DROP_REASONS)}; got {unknown}")
        if self.cost is not None and (isinstance(self.cost, bool) or not isinstance(self.cost, (int, float))):
            raise TypeError(f"`cost` must be a number or None, got {self.cost!r}")

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True, default=str))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return json.loads(json.dumps({"title": self.title, "counts": dict(self.counts), "dropped": dict(self.dropped),
                                      "settings": dict(self.settings), "seconds": dict(self.seconds),
                                      "cost": self.cost, "labels": dict(self.labels)}, default=str))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RunRecord:
        """The record :meth:`to_dict` gave (unknown keys are ignored)."""
        if not isinstance(d, Mapping):
            raise TypeError(f"a run record must be a JSON object, got {type(d).__name__}")
        return cls(d.get("title"), d.get("counts") or {}, d.get("dropped") or {}, d.get("settings") or {},
                   d.get("seconds") or {}, d.get("cost"), d.get("labels") or {})

    @classmethod
    def from_score_counts(cls, counts: Mapping[str, int], *, scorer: str | None = None,
                          title: str | None = None) -> RunRecord:
        """The record of a scored file: :func:`~ipcausal.scoring.score_pairs`'s counts and its scorer."""
        dropped = {k: int(counts[k]) for k in DROP_REASONS if counts.get(k)}
        return cls(title, counts, dropped, {"scorer": scorer} if scorer else {})

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> RunRecord | None:
        """The record stored for ``path``, or ``None``: a ``report.json`` (its ``record``, else the
        ``title``/``counts``/``settings`` an earlier release wrote), a run folder (its report.json, else
        its ``meta.json``), or a scored file (its ``<stem>.meta.json`` sibling from ``ipcausal score``).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "s.meta.json").write_text('{"scorer": "mcq", "counts": {"requested": 4, "missing": 1}}')
        >>> RunRecord.read(d / "s.jsonl").dropped["missing"]
        1
        """
        p = Path(path)
        if p.is_dir():
            for name in ("report.json", "meta.json"):
                if (p / name).is_file():
                    return cls.read(p / name)
            return None
        if p.suffix.lower() == ".json" and p.is_file():
            d = _load(p)
            if isinstance(d, dict) and isinstance(d.get("record"), dict):
                return cls.from_dict(d["record"])
            if isinstance(d, dict) and ("counts" in d or "settings" in d or "title" in d):
                counts = d.get("counts") or {}
                if "scorer" in d and "settings" not in d:  # a scored file's .meta.json
                    return cls.from_score_counts(counts, scorer=d.get("scorer"), title=d.get("title"))
                return cls(d.get("title"), counts, {}, d.get("settings") or {})
            return None
        sibling = p.with_name(p.with_suffix("").name + ".meta.json")
        return cls.read(sibling) if sibling.is_file() else None


def dropped_by_reason(result: Any) -> dict[str, int]:
    """The pairs a :class:`~ipcausal.scoring.ScoreResult` (or its ``dropped`` frame) left out, by reason (a
    pair with two: the first of :data:`DROP_REASONS`, as its status says).

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.scoring import score_pairs
    >>> answers = ["Yes", "perhaps", None]  # read, unparseable, never answered
    >>> ps = ipcausal.PairSet.from_records({"pair_id": k, "background_i": "a", "background_j": "b", "x_i": "?",
    ...     "x_j": "?", "options": ["Yes", "No"], "y_i": "No", "y_j": y} for k, y in enumerate(answers))
    >>> dropped_by_reason(score_pairs(ps, "choice"))
    {'missing': 1, 'unparseable': 1}
    """
    frame = getattr(result, "dropped", result)
    if len(frame) == 0:
        return {}
    if "similarity_status" in frame.columns:
        statuses = list(frame["similarity_status"])
    else:
        statuses = [next((r for r in DROP_REASONS if r in (a, b)), "failed")
                    for a, b in zip(frame["status_i"], frame["status_j"])]
    return {r: statuses.count(r) for r in DROP_REASONS if statuses.count(r)}


def _load(p: Path) -> Any:
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def write_report_file(path: str | os.PathLike[str], report: Any, record: RunRecord | None) -> Path:
    """Write ``report`` as :meth:`~ipcausal.study.results.Report.write` does, with ``record`` beside it
    (its ``title``/``counts``/``settings`` at the top, as earlier releases read them, and all of it
    under ``"record"``)."""
    if record is None:
        return report.write(path)
    if not isinstance(record, RunRecord):
        raise TypeError(f"`record` must be a RunRecord or None, got {type(record).__name__}")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    payload = report.payload(title=record.title, counts=dict(record.counts), settings=dict(record.settings))
    payload["record"] = record.to_dict()
    return write_json(p, payload, indent=1)


def write_outputs(folder: str | os.PathLike[str], report: Any, record: RunRecord, *, responses: Any = None,
                  scored: Any = None, dropped: Any = None, meta: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Write a run folder: ``responses.jsonl``, ``pairs.jsonl``, ``dropped.jsonl`` (when any), ``report.json``
    (the Report, its ``record`` and the keys earlier releases read) and, with ``meta``, ``meta.json``.

    Returns the files written by name (``"responses"``, ``"pairs"``, ``"dropped"``, ``"report.json"``,
    ``"meta.json"``), as :class:`~ipcausal.study.cases.CaseResult` keeps them.

    Examples
    --------
    >>> import tempfile, ipcausal
    >>> ps = ipcausal.PairSet.from_records(
    ...     {"pair_id": k, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q",
    ...      "score_i": 1, "score_j": k % 3} for k in range(12))
    >>> files = write_outputs(tempfile.mkdtemp(), ipcausal.test(ps), RunRecord("t", {"scored": 12}))
    >>> RunRecord.read(files["report.json"]).counts["scored"]
    12
    """
    if not isinstance(record, RunRecord):
        raise TypeError(f"`record` must be a RunRecord, got {type(record).__name__}")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    if responses is not None:
        files["responses"] = str(responses.write(out / "responses.jsonl"))
    if scored is not None:
        files["pairs"] = str(scored.write(out / "pairs.jsonl"))
    if dropped is not None and len(dropped):
        p = out / "dropped.jsonl"
        dropped.to_json(p, orient="records", lines=True, force_ascii=False)
        files["dropped"] = str(p)
    files["report.json"] = str(write_report_file(out / "report.json", report, record))
    if meta is not None:
        files["meta.json"] = str(write_json(out / "meta.json", dict(meta), indent=2, ascii_only=True))
    return files
