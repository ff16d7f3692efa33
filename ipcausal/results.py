"""Frozen result objects: one per test, one per background pair, and the whole Report."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import pandas as pd

__all__ = ["PermutationTestResult", "SignTestResult", "PBResult", "GroupResult", "Report"]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value


class _ToDict:
    def to_dict(self) -> dict[str, Any]:
        """The fields as plain Python values (JSON-ready)."""
        return {f.name: _plain(_nested(getattr(self, f.name))) for f in fields(self)}  # type: ignore[arg-type]


def _nested(value: Any) -> Any:
    if isinstance(value, _ToDict):
        return value.to_dict()
    if isinstance(value, tuple) and value and isinstance(value[0], _ToDict):
        return [v.to_dict() for v in value]
    if isinstance(value, dict):
        return {k: _nested(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class PermutationTestResult(_ToDict):
    """Paired sign-flip permutation test of mean(Δ) = 0.

    ``statistic`` is mean(Δ); ``pvalue`` the p-value for ``alternative``; ``method`` one of
    ``"exact-enumeration"``, ``"exact-lattice"``, ``"monte-carlo"``, ``"saddlepoint"``,
    ``"paper-compat"``.  ``pvalue_se`` is the Monte Carlo standard error (0 when exact).
    ``ci_low``/``ci_high`` bound mean(Δ) (Student t interval at ``confidence_level``);
    ``effect_size`` is Cohen's d_z = mean(Δ)/sd(Δ).
    """

    statistic: float
    pvalue: float
    alternative: str
    method: str
    n: int
    null_hypothesis: str
    n_resamples: int | None
    pvalue_se: float
    n_zero: int
    ci_low: float
    ci_high: float
    confidence_level: float
    effect_size: float


@dataclass(frozen=True)
class SignTestResult(_ToDict):
    """One-sample sign test of median(s) = m0 (exact binomial).

    ``statistic`` is n₋ = #{s < m0} (for ``alternative="greater"``, the p-value uses
    n₊ = #{s > m0}); ``n`` counts the values that differ from m0 (ties dropped, reported
    in ``n_ties``).  ``median`` and ``share_below`` are the effect; ``ci_low``/``ci_high``
    bound the median (distribution-free order-statistic interval).
    """

    statistic: int
    pvalue: float
    alternative: str
    method: str
    n: int
    null_hypothesis: str
    m0: float
    n_total: int
    n_ties: int
    n_below: int
    n_above: int
    median: float
    share_below: float
    ci_low: float
    ci_high: float
    confidence_level: float


@dataclass(frozen=True)
class PBResult(_ToDict):
    """Personalization bias: population SD of the per-background mean outcomes (SPEC §4)."""

    value: float
    ci_low: float
    ci_high: float
    confidence_level: float
    n_resamples: int
    means: dict[str, Any]
    counts: dict[str, int]

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class GroupResult(_ToDict):
    """The test for one unordered background pair {background_a, background_b} within one model.

    For interval outcomes the effect is mean(Δ) with Δ = score(background_b) − score(background_a);
    for similarity outcomes it is the median similarity.
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
    detail: PermutationTestResult | SignTestResult


@dataclass(frozen=True)
class Report(_ToDict):
    """What :func:`ipcausal.test` returns: one :class:`GroupResult` per background pair and model."""

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

    def to_frame(self) -> pd.DataFrame:
        """One row per (model, background pair)."""
        rows = []
        for g in self.groups:
            row = {k: v for k, v in asdict(g).items() if k != "detail"}
            d = g.detail
            row["method"] = d.method
            row["alternative"] = d.alternative
            if isinstance(d, PermutationTestResult):
                row.update(effect_size=d.effect_size, pvalue_se=d.pvalue_se, n_resamples=d.n_resamples)
            else:
                row.update(n_ties=d.n_ties, share_below=d.share_below, m0=d.m0)
            rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["ip_detected"] = self.ip_detected
        d["ip_detected_by_model"] = self.ip_detected_by_model()
        return d

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text (NaN written as null)."""
        return json.dumps(_nan_to_none(self.to_dict()), indent=indent)

    def __str__(self) -> str:
        from ipcausal.report import format_text

        return format_text(self)


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    return value
