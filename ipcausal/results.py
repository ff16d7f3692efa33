"""Frozen result objects: one per test, one per background pair, and the whole Report."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from ipcausal.stats.results import PBResult, Result, SignFlipResult, SignTestResult

__all__ = ["GroupResult", "Report"]


class _ToDict(Result):
    pass


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
    detail: SignFlipResult | SignTestResult


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
            if isinstance(d, SignFlipResult):
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
