"""The JSON of a Report file: reading it, and the upgrade of schema version 1 (writing: :mod:`ipcausal._jsonio`).

Version 2 (``ipcausal.report`` v2) keeps a group's optional parts as nested objects —
``equivalence`` (:class:`~ipcausal.study.results.EquivalenceInfo`) and ``sequential``
(:class:`~ipcausal.study.results.SequentialInfo`) — and ``audit`` as one object or ``null``.
Version 1 kept them as flat NaN-defaulted fields of the group (``margin``, ``equivalence`` as the
verdict text, ``equivalence_pvalue``, ``equivalence_ci_low``/``_high``, ``n_available``,
``n_sent``, ``stop_reason``, ``e_value``, ``e_adjusted``, ``path_n``, ``path_e``) and ``audit`` as
a dict, empty for a fixed-n test; :func:`upgrade` rewrites such a payload as version 2.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["load_json", "upgrade", "version_of"]

_EQUIVALENCE_V1 = {"equivalence_pvalue": "pvalue", "equivalence_ci_low": "ci_low", "equivalence_ci_high": "ci_high"}
_SEQUENTIAL_V1 = ("n_available", "n_sent", "stop_reason", "e_value", "e_adjusted", "path_n", "path_e")


def load_json(path: Any) -> tuple[Any, Path]:
    """The parsed JSON of a report file and its path (errors name the file and the problem)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"`path` must be a file path, got {type(path).__name__}")
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"`path` {str(p)!r} is a directory, not a report file")
    try:
        return json.loads(p.read_text(encoding="utf-8")), p
    except FileNotFoundError:
        raise FileNotFoundError(f"no report file at {str(p)!r}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p}: not a JSON report ({exc})") from None


def _group_v1(g: dict[str, Any], alpha: float) -> dict[str, Any]:
    g = dict(g)
    margin = g.pop("margin", None)
    verdict = g.pop("equivalence", None)
    eq = {new: g.pop(old, None) for old, new in _EQUIVALENCE_V1.items()}
    if margin is not None and verdict is not None:
        g["equivalence"] = {"margin": margin, "verdict": verdict, **eq, "confidence_level": 1.0 - 2.0 * alpha}
    seq = {k: g.pop(k, None) for k in _SEQUENTIAL_V1}
    if seq["n_sent"] is not None:
        g["sequential"] = seq
    return g


def version_of(report: dict[str, Any]) -> int:
    """The schema version of a ``report`` entry without a header: 1 when a group has the flat v1 fields."""
    groups = report.get("groups") if isinstance(report, dict) else None
    flat = ("equivalence_pvalue", "n_sent")
    return 1 if isinstance(groups, list) and any(isinstance(g, dict) and any(k in g for k in flat) for g in groups) else 2


def upgrade(report: dict[str, Any], version: int) -> dict[str, Any]:
    """The ``report`` entry of a schema-``version`` file as version 2 (unchanged when it is 2)."""
    if version >= 2:
        return report
    out = dict(report)
    alpha = float(out.get("alpha") or 0.05)
    out["groups"] = [_group_v1(g, alpha) if isinstance(g, dict) else g for g in out.get("groups", [])]
    if not out.get("audit"):
        out["audit"] = None
    return out
