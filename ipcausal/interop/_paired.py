"""The paired comparison of two models on the same items, shared by ``compare lm-eval`` and ``compare inspect``.

One row compares the per-item scores ``xa`` (model A) and ``xb`` (model B) of one task and
metric (or scorer).  The differences d = xb − xa are tested with the exact sign-flip permutation
test (:func:`ipcausal.permutation_test`): H0 says each unit's difference is as likely positive as
negative.  The unit is the item, or with ``units`` a group of items (a sample's epochs, a
cluster), whose differences are summed and flip together.  For 0/1 scores with one item per
unit this *is* the exact McNemar test (the concordant items have d = 0 and drop out; the p is the
two-sided binomial test of the items only B got right among the discordant ones).  The interval
for mean(d) inverts that test; with unequal unit sizes it inverts the unit-sum test by bisection
(:func:`ipcausal.stats.clusters.unequal_cluster_interval`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ipcausal._validate import choice, open_unit
from ipcausal.stats.clusters import INTERVAL_SEED, unequal_cluster_interval
from ipcausal.stats.multitest import CORRECTIONS, adjust_pvalues
from ipcausal.stats.permutation import permutation_test
from ipcausal.stats.results import Result

__all__ = ["CompareResult", "paired_row", "adjust_rows", "write_table", "shown", "input_files", "check_options"]


def check_options(correction: Any, alpha: Any, confidence_level: Any, allow_missing: Any, names: Any,
                  names_param: str, what: str) -> tuple[str, float, float]:
    """The options both comparisons share, checked: ``(correction, alpha, confidence_level)``.

    ``names`` (the ``metrics`` of lm-eval, the ``scorers`` of inspect; ``what`` says which in the error)
    must be None or a sequence of non-empty names.

    Examples
    --------
    >>> check_options("holm", 0.05, 0.95, False, None, "scorers", "scorer")
    ('holm', 0.05, 0.95)
    >>> check_options("holm", 0.05, 0.95, False, "accuracy", "metrics", "metric")
    Traceback (most recent call last):
    ...
    TypeError: `metrics` must be a sequence of metric names or None
    """
    correction = choice(correction, "correction", CORRECTIONS)
    alpha = open_unit(alpha, "alpha")
    level = open_unit(confidence_level, "confidence_level")
    if not isinstance(allow_missing, bool):
        raise TypeError(f"`allow_missing` must be True or False, got {allow_missing!r}")
    if names is not None and (isinstance(names, str) or not all(isinstance(m, str) and m for m in names)):
        raise TypeError(f"`{names_param}` must be a sequence of {what} names or None")
    return correction, alpha, level


@dataclass(frozen=True)
class CompareResult(Result):
    """What :func:`ipcausal.interop.compare_lm_eval` and :func:`ipcausal.interop.inspect.compare_logs` return.

    Attributes
    ----------
    rows : tuple of dict
        One per compared (task, filter, metric) for lm-eval, (task, scorer) for inspect:
        ``n`` (items compared), ``mean_a``, ``mean_b``, ``statistic`` (mean of B − A),
        ``ci_low``, ``ci_high``, ``confidence_level``, ``pvalue``, ``pvalue_adjusted``,
        ``reject``, ``method`` (``"exact-mcnemar"`` for 0/1 scores with one item per unit, else
        the sign-flip route), ``b_better``/``a_better`` (items where B, resp. A, scored
        higher), ``n_units`` (what the signs flip: items, or the groups of ``unit``),
        ``n_missing``/``n_mismatched`` (items left out, named in ``missing``), and the
        harness's keys (lm-eval: ``task, filter, metric``; inspect: ``task, scorer, unit,
        model_a, model_b``).
    missing : dict
        Per task: the items left out, by why (lm-eval: ``only_a``, ``only_b``, ``mismatched``;
        inspect also ``errored_a``/``errored_b`` and ``unscored``).
    skipped : tuple of str
        ``"task/…/metric: why"`` for what could not be compared (not one number per item).
    alpha, correction, confidence_level, null_hypothesis, files_a, files_b
    """

    rows: tuple[dict[str, Any], ...]
    missing: dict[str, dict[str, list[Any]]]
    skipped: tuple[str, ...]
    alpha: float
    correction: str
    confidence_level: float
    null_hypothesis: str
    files_a: tuple[str, ...]
    files_b: tuple[str, ...]

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame (the table ``ipcausal compare … -o`` writes)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows))


def input_files(value: Any, name: str, *, what: str, find: Any, none_found: str) -> list[Path]:
    """The files ``value`` names (a file, a folder searched with ``find(folder)``, or a sequence of those).

    ``what`` says what ``name`` must be (the ``TypeError``), ``none_found`` what a folder lacks.
    """
    from collections.abc import Sequence

    items = [value] if isinstance(value, (str, os.PathLike)) else list(value) if isinstance(value, Sequence) else None
    if not items or not all(isinstance(p, (str, os.PathLike)) for p in items):
        raise TypeError(f"`{name}` must be {what}, a folder of them, or a non-empty sequence of those")
    out: list[Path] = []
    for p in map(Path, items):
        if p.is_dir():
            found = sorted(find(p))
            if not found:
                raise ValueError(f"`{name}`: no {none_found} under {p}")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise ValueError(f"`{name}`: no such file or folder: {p}")
    return out


def shown(ids: list[Any], limit: int = 10) -> str:
    """The first ``limit`` ids (repr), and how many more."""
    return ", ".join(repr(i) for i in ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def paired_row(xa: np.ndarray, xb: np.ndarray, *, units: np.ndarray | None = None, method: str = "auto",
               n_resamples: int = 100_000, rng: Any = 0, level: float = 0.95) -> dict[str, Any]:
    """The test of one (task, metric) row: mean(B − A), its interval, p, route and counts.

    ``units`` (optional integer codes, one per item) groups items whose differences flip
    together; with every unit of one item it is the plain paired test.
    """
    d = xb - xa
    binary = bool(np.isin(np.concatenate([xa, xb]), (0.0, 1.0)).all())
    if units is None or np.bincount(units).max() == 1:
        res = permutation_test(d, method=method, n_resamples=n_resamples, rng=rng, confidence_level=level)
        lo, hi, n_units = float(res.ci_low), float(res.ci_high), int(d.size)
        route = "exact-mcnemar" if binary and res.method.startswith("exact") else res.method
    else:
        sizes = np.bincount(units).astype(np.float64)
        keep = sizes > 0
        v = np.bincount(units, weights=d)[keep]
        sizes = sizes[keep]
        if v.size < 2:
            raise ValueError("fewer than 2 units")
        res = permutation_test(v, method=method, n_resamples=n_resamples, rng=rng, confidence_level=level)
        if np.all(sizes == sizes[0]):
            lo, hi = float(res.ci_low / sizes[0]), float(res.ci_high / sizes[0])
        else:
            span = float(np.max(np.abs(d))) + 1e-12
            lo, hi = unequal_cluster_interval(v, sizes, span, method="monte-carlo" if method == "monte-carlo"
                                              else "auto", n_resamples=n_resamples, level=level, seed=INTERVAL_SEED,
                                              pvalue=float(res.pvalue))  # 0 outside exactly when p ≤ 1 − level
        n_units, route = int(v.size), f"{res.method} (unit sums)"
    return {"n": int(d.size), "n_units": n_units, "mean_a": float(xa.mean()), "mean_b": float(xb.mean()),
            "statistic": float(d.mean()), "ci_low": lo, "ci_high": hi, "confidence_level": level,
            "pvalue": float(res.pvalue), "method": route, "b_better": int((d > 0).sum()),
            "a_better": int((d < 0).sum())}


def adjust_rows(rows: list[dict[str, Any]], correction: str, alpha: float) -> None:
    """Add ``pvalue_adjusted`` (``correction`` over every row) and ``reject`` (adjusted p ≤ ``alpha``)."""
    adj = adjust_pvalues([r["pvalue"] for r in rows], correction, axis=None)
    for r, p in zip(rows, adj):
        r["pvalue_adjusted"] = float(p)
        r["reject"] = bool(p <= alpha)


def write_table(result: CompareResult, out: str | os.PathLike[str]) -> Path:
    """The rows as CSV (``.csv``) or JSON Lines (``.jsonl``)."""
    p = Path(out)
    if p.suffix.lower() == ".csv":
        result.to_frame().to_csv(p, index=False)
    elif p.suffix.lower() in (".jsonl", ".ndjson"):
        p.write_text("".join(json.dumps(r) + "\n" for r in result.rows), encoding="utf-8")
    else:
        raise ValueError(f"`out` must end in .csv or .jsonl, got {p.name!r}")
    return p
