"""Shared pieces of the scorers: status values, the unparseable policy and small validators."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["OK", "UNPARSEABLE", "MISSING", "FAILED", "UNPARSEABLE_POLICIES", "check_policy", "text_list", "is_missing"]

OK = "ok"
"""The response was scored."""
UNPARSEABLE = "unparseable"
"""The response (or the judge's answer about it) could not be turned into a score."""
MISSING = "missing"
"""There was no response to score (the run failed or has not happened)."""
FAILED = "failed"
"""A judge backend failed on this item after its retries."""

UNPARSEABLE_POLICIES: tuple[str, ...] = ("exclude", "zero")


def check_policy(unparseable: Any) -> str:
    """Validate the ``unparseable`` policy: ``"exclude"`` (drop the pair) or ``"zero"`` (score 0)."""
    if unparseable not in UNPARSEABLE_POLICIES:
        raise ValueError(f"`unparseable` must be one of 'exclude', 'zero', got {unparseable!r}")
    return str(unparseable)


def is_missing(value: Any) -> bool:
    """True for ``None`` and NaN (a response that is not there)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def text_list(values: Any, name: str) -> list[str | None]:
    """A list of texts (``None`` kept for missing responses); raise naming ``name`` otherwise."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence,)) and not hasattr(values, "__iter__"):
        raise TypeError(f"`{name}` must be a sequence of texts, got {type(values).__name__}")
    out: list[str | None] = []
    for v in values:
        if is_missing(v):
            out.append(None)
        elif isinstance(v, str):
            out.append(v)
        else:
            raise TypeError(f"`{name}` must hold texts (or None for a missing response), got {type(v).__name__}")
    return out
