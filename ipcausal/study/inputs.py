"""The input checks the study layer's entry points share, each written once.

:func:`as_pairset` (a PairSet, a DataFrame or a file path → PairSet), :func:`check_prompts` (every
prompt has text), :func:`check_progress` (``progress`` is a bool or tqdm-like) and
:func:`positive_number`.  :func:`ipcausal.test`, :func:`ipcausal.run`, :func:`ipcausal.audit` and the
cases call them, so the same mistake gets the same message everywhere.
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np

from ipcausal.pairs import PairSet

__all__ = ["as_pairset", "check_prompts", "check_progress", "positive_number"]


def as_pairset(pairs: Any, *, frames: bool = True, name: str = "pairs") -> PairSet:
    """``pairs`` as a PairSet: itself, a DataFrame (with ``frames``) or the file a path names;
    ``name`` is the parameter the error names.

    Examples
    --------
    >>> as_pairset(3)
    Traceback (most recent call last):
    ...
    TypeError: `pairs` must be a PairSet, a DataFrame or a file path, got int
    """
    if isinstance(pairs, PairSet):
        return pairs
    if isinstance(pairs, (str, os.PathLike)):
        return PairSet.read(pairs)
    if frames:
        import pandas as pd

        if isinstance(pairs, pd.DataFrame):
            return PairSet.from_frame(pairs)
        raise TypeError(f"`{name}` must be a PairSet, a DataFrame or a file path, got {type(pairs).__name__}")
    raise TypeError(f"`{name}` must be a PairSet or a path to one, got {type(pairs).__name__}")


def check_prompts(frame: Any) -> None:
    """Every ``x_i``/``x_j`` of ``frame`` (a DataFrame of pairs) has text; the error names the rows."""
    for s in ("i", "j"):
        blank = frame[f"x_{s}"].astype(str).str.strip() == ""
        if blank.any():
            rows = ", ".join(str(int(r)) for r in np.flatnonzero(blank.to_numpy())[:5])
            raise ValueError(f"`pairs`: column `x_{s}` has empty prompts (no text to send) at row(s) {rows}")


def check_progress(progress: Any) -> None:
    """``progress`` is True, False (or None) or a tqdm-like object with ``update``."""
    if not (progress is None or isinstance(progress, bool) or hasattr(progress, "update")):
        raise TypeError("`progress` must be True, False or a tqdm-like object with `update`")


def positive_number(value: Any, name: str) -> float:
    """``value`` as a finite float > 0 (errors name ``name``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"`{name}` must be a finite number > 0, got {value!r}")
    if float(value) <= 0:
        raise ValueError(f"`{name}` must be > 0, got {value!r}")
    return float(value)
