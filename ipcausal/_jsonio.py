"""One JSON path for every artefact ipcausal writes: plain values and an atomic write.

:func:`json_ready` turns a value into what JSON can hold — NaN as ``null``, ±inf as ``null``
(or as the text ``"inf"``/``"-inf"`` where a schema reads them back, as the Report's does), numpy
scalars as Python numbers, tuples as lists — and :func:`write_json` writes it through
:func:`write_text`, which writes a file atomically (a temporary file in the same folder, then
``os.replace``: a reader never sees half a file, a crash leaves the old one).  The Report, the
run record and ``meta.json``, the BenchReport and ``mitigation.json`` are written here; no other
module cleans NaN or writes a file by hand (a test greps for it).  A leaf: it imports nothing of
ipcausal (nor numpy: a numpy scalar is recognised by its ``item`` method and its module).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["json_ready", "dumps", "write_json", "write_text", "atomic"]


def json_ready(value: Any, *, inf_as_text: bool = False) -> Any:
    """``value`` as plain JSON values, in nested mappings, lists and tuples.

    NaN becomes ``None``; ±inf ``None``, or ``"inf"``/``"-inf"`` with ``inf_as_text``; a numpy
    scalar its Python number, a numpy array a list; a tuple a list; a mapping a dict.  Anything else is left as it is.

    Examples
    --------
    >>> json_ready({"p": float("nan"), "e": [1.0, float("inf")], "t": (2, -float("inf"))})
    {'p': None, 'e': [1.0, None], 't': [2, None]}
    >>> json_ready([float("inf"), -float("inf")], inf_as_text=True)
    ['inf', '-inf']
    >>> import numpy as np
    >>> json_ready({"n": np.int64(3), "x": np.float64("nan"), "ok": np.bool_(True), "a": np.array([1.5, np.nan])})
    {'n': 3, 'x': None, 'ok': True, 'a': [1.5, None]}
    """
    value = _scalar(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            if math.isnan(value) or not inf_as_text:
                return None
            return "inf" if value > 0 else "-inf"
        return float(value)
    if isinstance(value, Mapping):
        return {k: json_ready(v, inf_as_text=inf_as_text) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v, inf_as_text=inf_as_text) for v in value]
    return value


def dumps(value: Any, *, indent: int | None = 1, inf_as_text: bool = False, ascii_only: bool = False) -> str:
    """``value`` as JSON text (:func:`json_ready` first; an object JSON cannot hold is written as its ``str``).

    Examples
    --------
    >>> dumps({"p": float("nan")}, indent=None)
    '{"p": null}'
    """
    return json.dumps(json_ready(value, inf_as_text=inf_as_text), indent=indent, ensure_ascii=ascii_only,
                      allow_nan=False, default=str)


@contextmanager
def atomic(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside ``path`` (its folder created) that replaces ``path`` when the block succeeds.

    What is written to the temporary path becomes ``path`` in one step (``os.replace``) with the
    usual permissions; on an error it is removed and ``path`` is left as it was.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> with atomic(target) as tmp:
    ...     _ = tmp.write_text("x\\n1\\n")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('x\\n1\\n', ['a.csv'])
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic`), creating its folder; returns the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = write_text(pathlib.Path(tempfile.mkdtemp()) / "sub" / "a.txt", "hello\\n")
    >>> p.read_text()
    'hello\\n'
    """
    with atomic(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    return Path(path)


def write_json(path: str | os.PathLike[str], value: Any, *, indent: int | None = 1, inf_as_text: bool = False,
               ascii_only: bool = False) -> Path:
    """Write ``value`` as JSON (:func:`dumps`, a final newline) to ``path`` atomically; returns the path.

    Examples
    --------
    >>> import tempfile, pathlib, json
    >>> p = write_json(pathlib.Path(tempfile.mkdtemp()) / "r.json", {"p": float("nan"), "n": 3})
    >>> json.loads(p.read_text())
    {'p': None, 'n': 3}
    """
    return write_text(path, dumps(value, indent=indent, inf_as_text=inf_as_text, ascii_only=ascii_only) + "\n")


def _scalar(value: Any) -> Any:
    """A numpy scalar or array as Python values (``tolist``), recognised without importing numpy."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    return value


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
