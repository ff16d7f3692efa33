"""Reading PairSet files into pandas fast: pyarrow where it gives the same table, Python where not.

``pyarrow`` parses JSON Lines and Parquet in C++ on several threads; the frame it gives is
the one the line-by-line Python reader gives whenever every column is text, a number, a
boolean, missing, or a list of those.  Anything else (a line that is not a JSON object,
text that is not UTF-8, timestamps that pyarrow would infer from strings, nested objects,
a column whose type changes) goes to the Python reader of :mod:`ipcausal._jsonl`, whose
errors name the file and the line.  Without pyarrow everything goes the Python way.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pandas as pd

from ipcausal._jsonl import iter_objects, not_utf8

__all__ = ["read_csv_frame", "read_jsonl_frame", "read_parquet_frame", "frame_from_records"]

_BLOCK = 16 << 20  # bytes per pyarrow parse block (a longer line falls back to Python)


def frame_from_records(rows: list[dict[str, Any]], required: tuple[str, ...]) -> pd.DataFrame:
    """A frame with the union of the rows' keys as columns, in order of first appearance."""
    cols: dict[str, None] = {}
    for r in rows:
        for k in r:
            cols.setdefault(str(k), None)
    return pd.DataFrame.from_records(rows, columns=list(cols) if rows else list(required))


def _pyarrow(parquet: bool = False) -> Any:
    """pyarrow with its JSON reader (and, for ``parquet``, its Parquet module: that one imports
    pyarrow's file systems and ssl, a tenth of a second a JSON Lines read does not need)."""
    try:
        import pyarrow as pa
        import pyarrow.json  # noqa: F401  (the submodules are not loaded by ``import pyarrow``)
        if parquet:
            import pyarrow.parquet  # noqa: F401
    except ImportError:
        return None
    return pa


def _plain_type(pa: Any, t: Any) -> bool:
    """Types whose pandas conversion equals what the Python reader builds."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _plain_type(pa, t.value_type)
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_int64(t)
                or pa.types.is_float64(t) or pa.types.is_boolean(t) or pa.types.is_null(t))


def _to_pandas(pa: Any, table: Any) -> pd.DataFrame:
    """``table.to_pandas()`` freeing Arrow memory as it goes; list columns as Python lists."""
    order = list(table.column_names)
    lists = {name: table.column(name).to_pylist() for name, t in zip(order, table.schema.types)
             if pa.types.is_list(t) or pa.types.is_large_list(t)}
    if lists:
        table = table.drop_columns(list(lists))
    df = table.to_pandas(self_destruct=True, split_blocks=True)
    del table
    if not lists:
        return df
    for name, values in lists.items():
        df[name] = pd.Series(values, dtype=object)
    return df[order]


def read_jsonl_frame(path: Path, expected: str, required: tuple[str, ...] = ()) -> pd.DataFrame:
    """The JSON Lines file ``path`` (one object per line) as a frame.

    Raises ``ValueError`` naming ``path:line`` for a line that is not UTF-8, not JSON or not
    an object (``expected`` says what a line should hold).
    """
    pa = _pyarrow()
    if pa is not None and Path(path).stat().st_size > 0:
        try:
            table = pa.json.read_json(path, read_options=pa.json.ReadOptions(block_size=_BLOCK))
            table.validate(full=True)  # UTF-8 of every string (pyarrow's parser does not check it)
            if all(_plain_type(pa, t) for t in table.schema.types):
                return _to_pandas(pa, table)
        except (pa.ArrowException, ValueError, OSError):
            pass  # the Python reader says precisely what is wrong (or reads what pyarrow cannot)
    rows = [row for _, row in iter_objects(path, expected)]
    return frame_from_records(rows, required)


def read_parquet_frame(path: Path) -> pd.DataFrame:
    """The Parquet file ``path`` as a frame (list columns as Python lists)."""
    pa = _pyarrow(parquet=True)
    if pa is None:  # pragma: no cover - depends on the environment
        raise ImportError("Parquet needs pyarrow: pip install 'ipcausal[parquet]'")
    try:
        table = pa.parquet.read_table(path)
    except pa.ArrowException as exc:
        raise ValueError(f"{path}: not a readable Parquet file ({exc})") from None
    return _to_pandas(pa, table)


def read_csv_frame(p: Path, required: tuple[str, ...], blank_is_missing: tuple[str, ...],
                   text: tuple[str, ...]) -> pd.DataFrame:
    """A CSV file as a frame, after checking its text and shape with errors that name the line.

    Values are kept as written (no "NA" → missing), except that an empty field is missing in
    the ``blank_is_missing`` columns; the ``text`` columns are read as text.
    """
    raw = p.read_bytes()
    if not raw.strip():
        raise ValueError(f"`path`: {p} is empty; a CSV PairSet starts with a header line naming its columns "
                         f"({', '.join(required)})")
    try:
        body = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = raw.rfind(b"\n", 0, exc.start) + 1
        end = raw.find(b"\n", exc.start)
        line = raw[start : end if end >= 0 else len(raw)]
        shifted = UnicodeDecodeError(exc.encoding, exc.object, exc.start - start, exc.end - start, exc.reason)
        lineno = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"`path`: {not_utf8(p, lineno, shifted, line)}") from None
    _check_csv_shape(p, body)
    return pd.read_csv(io.StringIO(body), keep_default_na=False, na_values={c: [""] for c in blank_is_missing},
                       dtype={c: str for c in text}, index_col=False)


def _check_csv_shape(p: Path, text: str) -> None:
    """Every record has as many fields as the header; every quoted field is closed."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    start = 1  # the line the current record starts on
    try:
        for row in reader:
            if row:
                if header is None:
                    header = row
                elif len(row) != len(header):
                    raise ValueError(f"`path`: {p}:{start}: {len(row)} fields, but the header has {len(header)} "
                                     f"({', '.join(header[:8])}{', …' if len(header) > 8 else ''}); "
                                     f"quote fields that hold commas")
            start = reader.line_num + 1
    except csv.Error as exc:
        if "end of data" in str(exc) or "EOF" in str(exc):
            raise ValueError(f"`path`: {p}:{start}: a quoted field opened on this line is never closed "
                             f"(a missing \" before the end of the file)") from None
        raise ValueError(f"`path`: {p}:{reader.line_num}: not valid CSV ({exc})") from None
