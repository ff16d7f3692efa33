"""PairSet: the validated table of paired observations that every stage reads and writes.

One row per pair ``((x_i, y_i), (x_j, y_j))``: two prompts with the same meaning and
two implied user backgrounds (SPEC §2).  Columns:

=================  ========  ==========================================================
column             required  meaning
=================  ========  ==========================================================
``pair_id``        yes       unique id (stored as text)
``background_i``   yes       background signalled by ``x_i``
``background_j``   yes       background signalled by ``x_j`` (differs from ``background_i``)
``x_i``, ``x_j``   yes       the two prompts (text)
``y_i``, ``y_j``   no        the two responses (text, missing until ``ipcausal run``)
``score_i/_j``     no        interval outcome per response; Δ = score_j − score_i
``similarity``     no        similarity of the two responses, in [0, 1]
``model``          no        the model that answered (separate test families per model)
anything else      no        kept as metadata
=================  ========  ==========================================================
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ipcausal._jsonio import atomic
from ipcausal._tables import frame_from_records, read_csv_frame, read_jsonl_frame, read_parquet_frame

__all__ = ["PairSet", "REQUIRED_COLUMNS", "OUTCOME_COLUMNS"]

REQUIRED_COLUMNS: tuple[str, ...] = ("pair_id", "background_i", "background_j", "x_i", "x_j")
OUTCOME_COLUMNS: tuple[str, ...] = ("score_i", "score_j", "similarity")
_TEXT_COLUMNS = ("background_i", "background_j", "x_i", "x_j")
_OPTIONAL_TEXT = ("y_i", "y_j", "model")
_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
FORMATS = _FORMATS  # public: file suffix -> format (the CLI imports it from here)


#: Where a row is, for error messages: ``where(positions, limit) -> text``.  In memory: the
#: 0-based row positions; for a file :meth:`PairSet.read` passes the 1-based line numbers.
Where = Callable[[np.ndarray, int], str]


def _positions(idx: np.ndarray, limit: int) -> str:
    shown = ", ".join(str(int(i)) for i in idx[:limit])
    more = f" and {idx.size - limit} more" if idx.size > limit else ""
    return f"row(s) {shown}{more}"


def _rows(mask: np.ndarray, where: Where | None = None, limit: int = 5) -> str:
    idx = np.flatnonzero(mask)
    return (where or _positions)(idx, limit)


def record_lines(path: Path, fmt: str) -> list[int]:
    """The 1-based line on which each record of the file starts (Parquet: the record number).

    JSON Lines: the non-blank lines; CSV: the records after the header (a quoted field may span
    lines, so a record's line is where it starts).

    Examples
    --------
    >>> import tempfile, os
    >>> p = Path(tempfile.mkdtemp()) / "x.csv"
    >>> _ = p.write_text('pair_id,x_i\\n1,"two\\nlines"\\n\\n2,b\\n')
    >>> record_lines(p, "csv")
    [2, 5]
    """
    if fmt == "jsonl":
        with path.open("rb") as fh:
            return [k for k, raw in enumerate(fh, 1) if raw.strip()]
    if fmt == "csv":
        import csv
        import io

        reader = csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline=""))
        out, start, header = [], 1, False
        for row in reader:
            if row:
                if header:
                    out.append(start)
                header = True
            start = reader.line_num + 1
        return out
    return []


def file_where(path: Path, fmt: str) -> Where:
    """A :data:`Where` naming 1-based file lines (``line(s) 2, 4 of data.jsonl``); the file is scanned on use."""

    def where(idx: np.ndarray, limit: int) -> str:
        more = f" and {idx.size - limit} more" if idx.size > limit else ""
        if fmt == "parquet":
            return f"record(s) {', '.join(str(int(i) + 1) for i in idx[:limit])}{more} of {path.name}"
        lines = record_lines(path, fmt)
        shown = ", ".join(str(lines[i]) if i < len(lines) else f"record {int(i) + 1}" for i in idx[:limit])
        return f"line(s) {shown}{more} of {path.name}"

    return where


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _all_text(col: pd.Series) -> bool:
    """True when every value of ``col`` is a ``str`` (checked in C for the usual dtypes)."""
    if isinstance(col.dtype, pd.StringDtype):
        return not bool(col.isna().any())
    return col.dtype == object and pd.api.types.infer_dtype(col, skipna=False) == "string"


def _text_or_missing(col: pd.Series) -> bool:
    """True when every value of ``col`` is a ``str`` or missing (None / NaN)."""
    if isinstance(col.dtype, pd.StringDtype) or bool(col.isna().all()):
        return True
    return col.dtype == object and pd.api.types.infer_dtype(col, skipna=True) == "string"


def _pair_ids(ids: pd.Series) -> pd.Series:
    """``pair_id`` as text: integers (and integral floats) without a decimal point."""
    if _all_text(ids):
        return ids
    if pd.api.types.is_integer_dtype(ids) and not pd.api.types.is_bool_dtype(ids):
        return ids.astype(str)
    return ids.map(lambda v: str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else str(v))


def _validate_frame(df: pd.DataFrame, where: Where | None = None) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        names = ", ".join(f"`{c}`" for c in missing)
        raise ValueError(f"missing required column(s) {names}; a PairSet needs {', '.join(REQUIRED_COLUMNS)}")
    if df.columns.duplicated().any():
        dup = sorted(set(df.columns[df.columns.duplicated()]))
        raise ValueError(f"duplicate column name(s): {dup}")
    out = df.reset_index(drop=True).copy()

    ids = out["pair_id"]
    if ids.isna().any():
        raise ValueError(f"column `pair_id` has missing values at {_rows(ids.isna().to_numpy(), where)}")
    out["pair_id"] = _pair_ids(ids)
    if not out["pair_id"].is_unique:  # the key of a pair is (model, pair_id): two models may share ids
        if "model" in out.columns:
            models = out["model"].astype(object).where(out["model"].notna(), None)
            dup = pd.DataFrame({"model": models, "pair_id": out["pair_id"]}).duplicated(keep=False).to_numpy()
        else:
            dup = out["pair_id"].duplicated(keep=False).to_numpy()
        if dup.any():
            vals = list(dict.fromkeys(out.loc[dup, "pair_id"]))[:5]
            scope = "the same `model`" if "model" in out.columns else "no `model` column"
            raise ValueError(f"column `pair_id` has duplicate values {vals} at {_rows(dup, where)} with {scope} "
                             "(a pair's key is (`model`, `pair_id`))")

    for col in _TEXT_COLUMNS:
        if _all_text(out[col]):
            continue
        bad = out[col].map(lambda v: not isinstance(v, str)).to_numpy()
        if bad.any():
            raise ValueError(f"column `{col}` must hold text; non-text or missing values at {_rows(bad, where)}")
    same = (out["background_i"] == out["background_j"]).to_numpy()
    if same.any():
        raise ValueError(
            f"columns `background_i` and `background_j` must differ within a pair; equal at {_rows(same, where)}"
        )
    for col in ("background_i", "background_j"):
        empty = (out[col].str.strip() == "").to_numpy()
        if empty.any():
            raise ValueError(f"column `{col}` has empty backgrounds at {_rows(empty, where)}")

    for col in _OPTIONAL_TEXT:
        if col in out.columns:
            values = out[col]
            if not _text_or_missing(values):
                bad = values.map(lambda v: not (_is_missing(v) or isinstance(v, str))).to_numpy()
                if bad.any():
                    raise ValueError(f"column `{col}` must hold text or be missing; other values at {_rows(bad, where)}")
            if isinstance(values.dtype, pd.StringDtype) and not values.isna().any():
                continue  # all text already (pandas' own string type): nothing to convert
            obj = values.astype(object)
            out[col] = obj.where(values.notna(), None) if values.dtype != object or values.isna().any() else obj

    has_i, has_j = "score_i" in out.columns, "score_j" in out.columns
    if has_i != has_j:
        raise ValueError("columns `score_i` and `score_j` come together: one is missing")
    problems: list[str] = []  # every bad outcome column, each with its first few rows
    missing = False
    for col in OUTCOME_COLUMNS:
        if col not in out.columns:
            continue
        values = out[col]
        if values.dtype == object or not (
            pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        ):
            numeric = pd.to_numeric(values, errors="coerce")
            bad = (numeric.isna() & values.notna()).to_numpy() | values.map(lambda v: isinstance(v, bool)).to_numpy()
            if bad.any():
                problems.append(f"column `{col}` must be numeric; non-numeric values at {_rows(bad, where)}")
                continue
            values = numeric
        arr = values.to_numpy(dtype=np.float64)
        bad = ~np.isfinite(arr)
        if bad.any():
            missing = missing or bool(np.isnan(arr).any())
            problems.append(f"column `{col}` must be finite (no NaN, inf or missing values); bad at {_rows(bad, where)}")
            continue
        if col == "similarity":
            out_of_range = (arr < 0) | (arr > 1)
            if out_of_range.any():
                problems.append(f"column `similarity` must lie in [0, 1]; outside at {_rows(out_of_range, where)}")
                continue
        out[col] = arr
    if problems:
        hint = (" (to leave out the pairs without an outcome: PairSet.read(path, on_missing='drop'), or "
                "`ipcausal test --on-missing drop`)") if missing else ""
        raise ValueError("; ".join(problems) + hint)
    return out


class PairSet:
    """A validated, pandas-backed table of paired observations (one row per pair).

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns as in the module docstring.  The frame is copied and validated.

    Raises
    ------
    ValueError
        When a required column is missing, ``pair_id`` repeats, a background pair is
        degenerate, or an outcome is non-numeric, non-finite or (``similarity``) outside [0, 1].

    Examples
    --------
    >>> from ipcausal import PairSet
    >>> ps = PairSet.from_records([
    ...     {"pair_id": 1, "background_i": "US", "background_j": "UK",
    ...      "x_i": "What color?", "x_j": "What colour?", "similarity": 0.9},
    ... ])
    >>> len(ps), ps.outcome
    (1, 'similarity')
    """

    __slots__ = ("_df",)

    def __init__(self, frame: pd.DataFrame) -> None:
        self._df = _validate_frame(frame)

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> PairSet:
        """Build a PairSet from a DataFrame (copied and validated)."""
        return cls(frame)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> PairSet:
        """Build a PairSet from an iterable of dicts, one per pair."""
        if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
            raise TypeError("`records` must be an iterable of mappings")
        rows = list(records)
        if any(not isinstance(r, Mapping) for r in rows):
            raise TypeError("`records` must be an iterable of mappings")
        return cls(frame_from_records(rows, REQUIRED_COLUMNS))

    @classmethod
    def read(cls, path: str | os.PathLike[str], *, on_missing: str = "error") -> PairSet:
        """Read a PairSet from ``.jsonl``, ``.csv`` or ``.parquet`` (chosen by suffix).

        Errors name the file and, where there is one, the 1-based line (the line a record starts
        on; Parquet: the record number): a file that does not exist, a directory, an empty file,
        text that is not UTF-8, a line that is not JSON, a CSV row with more or fewer fields than
        its header, a quoted field that is never closed, and every value the checks of the class
        refuse (all bad outcome columns at once, the first five lines of each).

        Parameters
        ----------
        path : str or path-like
        on_missing : {"error", "drop"}
            A record whose outcome (``score_i``/``score_j``/``similarity``) is missing (null,
            absent, NaN): ``"error"`` (default) refuses the file; ``"drop"`` leaves those records
            out (:meth:`read_dropping_missing` also says which lines went).

        Examples
        --------
        >>> import tempfile, os, json
        >>> p = os.path.join(tempfile.mkdtemp(), "s.jsonl")
        >>> rows = [{"pair_id": k, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q",
        ...          "score_i": 1, "score_j": None if k == 1 else 0} for k in range(3)]
        >>> _ = open(p, "w").write("".join(json.dumps(r) + "\\n" for r in rows))
        >>> PairSet.read(p)
        Traceback (most recent call last):
        ...
        ValueError: column `score_j` must be finite (no NaN, inf or missing values); bad at line(s) 2 of s.jsonl (to leave out the pairs without an outcome: PairSet.read(path, on_missing='drop'), or `ipcausal test --on-missing drop`)
        >>> len(PairSet.read(p, on_missing="drop"))
        2
        """
        if on_missing not in ("error", "drop"):
            raise ValueError(f"`on_missing` must be 'error' or 'drop', got {on_missing!r}")
        if on_missing == "drop":
            return cls.read_dropping_missing(path)[0]
        frame, where = _read_frame(path)
        return cls._checked(_validate_frame(frame, where))

    @classmethod
    def read_dropping_missing(cls, path: str | os.PathLike[str]) -> tuple[PairSet, list[int]]:
        """Read a PairSet file leaving out the records whose outcome is missing; also return their lines.

        A record is left out when any outcome column it has (``score_i``, ``score_j``,
        ``similarity``) is null, absent or NaN; every other problem is an error as in :meth:`read`.

        Returns
        -------
        (PairSet, list of int)
            The pairs kept, and the 1-based file lines (Parquet: record numbers) left out.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "sims.jsonl"
        >>> line = '{{"pair_id": {}, "background_i": "US", "background_j": "UK", "x_i": "a", "x_j": "b", "similarity": {}}}'
        >>> _ = p.write_text("\\n".join(line.format(k, s) for k, s in [(1, 0.9), (2, "null"), (3, 0.7)]))
        >>> ps, dropped = PairSet.read_dropping_missing(p)
        >>> len(ps), dropped
        (2, [2])
        """
        frame, where = _read_frame(path)
        cols = [c for c in OUTCOME_COLUMNS if c in frame.columns]
        gone = np.zeros(len(frame), dtype=bool)
        for c in cols:
            gone |= frame[c].isna().to_numpy()
        p = Path(path)
        fmt = _format_of(p)
        lines: list[int] = []
        if gone.any():
            idx = np.flatnonzero(gone)
            starts = record_lines(p, fmt)
            lines = [starts[i] if i < len(starts) else int(i) + 1 for i in idx.tolist()]
            keep = np.flatnonzero(~gone)
            frame = frame.iloc[keep].reset_index(drop=True)

            def shifted(ix: np.ndarray, limit: int, _inner: Where = where) -> str:
                return _inner(keep[ix], limit)

            where = shifted
        return cls._checked(_validate_frame(frame, where)), lines

    @classmethod
    def _checked(cls, frame: pd.DataFrame) -> PairSet:
        """A PairSet around a frame that :func:`_validate_frame` has just returned (not checked twice)."""
        obj = cls.__new__(cls)
        obj._df = frame
        return obj

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write atomically to ``.jsonl``, ``.csv`` or ``.parquet`` (chosen by suffix); return the path."""
        p = Path(path)
        fmt = _format_of(p)
        with atomic(p) as tmp:
            if fmt == "jsonl":
                with open(tmp, "w", encoding="utf-8") as fh:
                    for rec in self.records():
                        fh.write(json.dumps(rec, ensure_ascii=False, default=_json_default) + "\n")
            elif fmt == "csv":
                self._df.to_csv(tmp, index=False)
            else:
                pa = _parquet()
                import pyarrow as pyarrow_mod

                pa.write_table(pyarrow_mod.Table.from_pandas(self._df, preserve_index=False), str(tmp))
        return p

    # -- access ------------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """A copy of the underlying table."""
        return self._df.copy()

    def records(self) -> list[dict[str, Any]]:
        """The rows as plain dicts (missing values as ``None``)."""
        out = []
        for rec in self._df.to_dict(orient="records"):
            out.append({k: (None if _is_missing(v) else _plain(v)) for k, v in rec.items()})
        return out

    @property
    def columns(self) -> list[str]:
        return list(self._df.columns)

    @property
    def outcome(self) -> str | None:
        """``"interval"`` (scores), ``"similarity"``, ``"both"`` or ``None`` (no outcome yet)."""
        has_scores = "score_i" in self._df.columns
        has_sim = "similarity" in self._df.columns
        if has_scores and has_sim:
            return "both"
        return "interval" if has_scores else "similarity" if has_sim else None

    @property
    def deltas(self) -> np.ndarray:
        """Δ = score_j − score_i per pair (requires the score columns)."""
        if "score_i" not in self._df.columns:
            raise ValueError("this PairSet has no `score_i`/`score_j` columns")
        return self._df["score_j"].to_numpy(np.float64) - self._df["score_i"].to_numpy(np.float64)

    def pair_groups(self) -> list[tuple[str | None, str, str, np.ndarray, int]]:
        """Rows per model and unordered background pair, found with array operations.

        Returns one ``(model, low, high, rows, forward)`` per group, sorted by model (missing
        last) and then by the two backgrounds: ``low < high`` alphabetically, ``rows`` the
        row positions in increasing order, ``forward`` how many of them are stored as
        ``low → high`` (the rest as ``high → low``).  ``model`` is ``None`` where the column
        is absent or missing.  The cost is a factorize and a sort, not a loop over rows.

        Examples
        --------
        >>> ps = PairSet.from_records([
        ...     {"pair_id": k, "background_i": i, "background_j": j, "x_i": "a", "x_j": "b"}
        ...     for k, (i, j) in enumerate([("US", "UK"), ("UK", "US"), ("UK", "US"), ("US", "IN")])])
        >>> [(m, lo, hi, rows.tolist(), fwd) for m, lo, hi, rows, fwd in ps.pair_groups()]
        [(None, 'IN', 'US', [3], 0), (None, 'UK', 'US', [0, 1, 2], 2)]
        """
        df, n = self._df, len(self._df)
        if "model" in df.columns:
            m_codes, m_names = pd.factorize(df["model"], sort=True)  # missing: code -1
            m_codes = np.where(m_codes < 0, len(m_names), m_codes)
        else:
            m_codes, m_names = np.zeros(n, dtype=np.intp), pd.Index([])
        b_codes, b_names = pd.factorize(pd.concat([df["background_i"], df["background_j"]], ignore_index=True),
                                        sort=True)
        ci, cj = b_codes[:n].astype(np.int64), b_codes[n:].astype(np.int64)
        lo, hi = np.minimum(ci, cj), np.maximum(ci, cj)
        nb = max(len(b_names), 1)
        key = (m_codes.astype(np.int64) * nb + lo) * nb + hi
        order = np.argsort(key, kind="stable")
        _, starts, counts = np.unique(key[order], return_index=True, return_counts=True)
        forward = ci == lo
        out: list[tuple[str | None, str, str, np.ndarray, int]] = []
        for start, count in zip(starts.tolist(), counts.tolist()):
            rows = order[start : start + count]
            first = rows[0]
            m = int(m_codes[first])
            out.append((str(m_names[m]) if m < len(m_names) else None, str(b_names[lo[first]]),
                        str(b_names[hi[first]]), rows, int(forward[rows].sum())))
        return out

    def __len__(self) -> int:
        return len(self._df)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.records())

    def __getitem__(self, column: str) -> pd.Series:
        return self._df[column].copy()

    def __contains__(self, column: object) -> bool:
        return column in self._df.columns

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PairSet):
            return NotImplemented
        return self._df.equals(other._df)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        bgs = sorted(set(self._df["background_i"]) | set(self._df["background_j"]))
        return f"PairSet(n={len(self)}, backgrounds={bgs}, outcome={self.outcome!r})"

    # -- derivation --------------------------------------------------------------------
    def with_columns(self, **columns: Any) -> PairSet:
        """A new PairSet with columns added or replaced (values: sequence or scalar)."""
        df = self._df.copy()
        for name, values in columns.items():
            df[name] = values
        return PairSet(df)

    def drop_columns(self, *names: str) -> PairSet:
        """A new PairSet without the named (non-required) columns."""
        bad = [n for n in names if n in REQUIRED_COLUMNS]
        if bad:
            raise ValueError(f"`names`: cannot drop required column(s) {bad}")
        return PairSet(self._df.drop(columns=[n for n in names if n in self._df.columns]))

    def filter(self, mask: Any) -> PairSet:
        """A new PairSet with the rows where ``mask`` is true."""
        m = np.asarray(mask, dtype=bool)
        if m.shape != (len(self),):
            raise ValueError(f"`mask` must have shape ({len(self)},), got {m.shape}")
        return PairSet(self._df.loc[m])

    def head(self, n: int) -> PairSet:
        """The first ``n`` pairs."""
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
            raise ValueError(f"`n` must be a non-negative integer, got {n!r}")
        return PairSet(self._df.head(int(n)))

    @staticmethod
    def concat(pairsets: Iterable[PairSet]) -> PairSet:
        """Stack several PairSets; a pair's key is (``model``, ``pair_id``), so runs of two models may share ids.

        Examples
        --------
        >>> a = PairSet.from_records([{"pair_id": 1, "background_i": "US", "background_j": "UK",
        ...                            "x_i": "q", "x_j": "q", "model": "m1"}])
        >>> b = PairSet.from_records([{"pair_id": 1, "background_i": "US", "background_j": "UK",
        ...                            "x_i": "q", "x_j": "q", "model": "m2"}])
        >>> len(PairSet.concat([a, b]))
        2
        """
        items = list(pairsets)
        if not items or any(not isinstance(p, PairSet) for p in items):
            raise TypeError("`pairsets` must be a non-empty iterable of PairSet")
        return PairSet(pd.concat([p._df for p in items], ignore_index=True))


def _read_frame(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, Where]:
    """The raw frame of a PairSet file and the :data:`Where` naming its lines (errors name the file)."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"`path`: {p} is a directory; give a PairSet file (.jsonl, .csv or .parquet)")
    if not p.is_file():
        raise ValueError(f"`path`: {p} does not exist")
    fmt = _format_of(p)
    where = file_where(p, fmt)
    if fmt == "jsonl":
        try:
            return read_jsonl_frame(p, "one JSON object per pair", REQUIRED_COLUMNS), where
        except ValueError as exc:
            raise ValueError(f"`path`: {exc}") from None
    if fmt == "csv":
        return read_csv_frame(p, REQUIRED_COLUMNS, (*OUTCOME_COLUMNS, *_OPTIONAL_TEXT), _TEXT_COLUMNS), where
    try:
        return read_parquet_frame(p), where
    except ValueError as exc:
        raise ValueError(f"`path`: {exc}") from None


def _format_of(p: Path) -> str:
    fmt = _FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise ValueError(f"`path`: unknown file type {p.suffix!r}; use one of {sorted(_FORMATS)}")
    return fmt


def _parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("Parquet needs pyarrow: pip install 'ipcausal[parquet]'") from exc
    return pq


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v


def _json_default(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"cannot write value of type {type(v).__name__} to JSON")
