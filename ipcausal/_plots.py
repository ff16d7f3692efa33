"""Matplotlib figures for the Markdown/HTML reports, returned as PNG data URIs (self-contained)."""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

__all__ = ["group_values", "fig_distribution", "fig_null", "fig_matrix", "fig_backgrounds", "to_data_uri"]

_SEED = 20240521  # fixed: the plotted null is an illustration; the p-values come from the tests


def _plt() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("HTML/Markdown plots need matplotlib: pip install 'ipcausal[report]'") from exc
    return plt


def to_data_uri(fig: Any) -> str:
    """Render ``fig`` as a base64 PNG data URI and close it."""
    plt = _plt()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def group_values(report: Any, frame: Any) -> list[tuple[Any, np.ndarray]]:
    """(group result, values) per group: oriented Δ for interval outcomes, similarities otherwise."""
    out = []
    model_col = frame["model"].fillna("(model not given)").astype(str) if "model" in frame else None
    for g in report.groups:
        m = (model_col == g.model) if model_col is not None else np.ones(len(frame), bool)
        fwd = m & (frame["background_i"] == g.background_a) & (frame["background_j"] == g.background_b)
        bwd = m & (frame["background_i"] == g.background_b) & (frame["background_j"] == g.background_a)
        if report.outcome == "interval":
            d = frame["score_j"].to_numpy(float) - frame["score_i"].to_numpy(float)
            vals = np.concatenate([d[fwd.to_numpy()], -d[bwd.to_numpy()]])
        else:
            vals = frame["similarity"].to_numpy(float)[(fwd | bwd).to_numpy()]
        out.append((g, vals))
    return out


def _grid(n: int) -> tuple[Any, Any, list[Any]]:
    plt = _plt()
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.axis("off")
    return plt, fig, flat[:n]


def fig_distribution(report: Any, groups: list[tuple[Any, np.ndarray]]) -> str:
    """Histogram of Δ (interval) or of the similarity per group."""
    _, fig, axes = _grid(len(groups))
    for ax, (g, vals) in zip(axes, groups):
        if report.outcome == "interval":
            ax.hist(vals, bins=min(30, max(5, len(np.unique(vals)))), color="#4c72b0", edgecolor="white")
            ax.axvline(0, color="black", lw=0.8)
            ax.axvline(vals.mean(), color="#c44e52", lw=1.5, label=f"mean Δ = {vals.mean():.3g}")
            ax.set_xlabel(f"Δ = score({g.background_b}) − score({g.background_a})")
        else:
            ax.hist(vals, bins=np.linspace(0, 1, 21), color="#55a868", edgecolor="white")
            if report.m0 is not None:
                ax.axvline(report.m0, color="black", lw=1, ls="--", label=f"M0 = {report.m0:g}")
            ax.axvline(np.median(vals), color="#c44e52", lw=1.5, label=f"median = {np.median(vals):.3g}")
            ax.set_xlabel("similarity s (1 = same answer)")
        ax.set_title(f"{g.group} ({g.model})" if g.model != "(model not given)" else g.group, fontsize=9)
        ax.set_ylabel("pairs")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return to_data_uri(fig)


def fig_null(report: Any, groups: list[tuple[Any, np.ndarray]]) -> str:
    """The null distribution of the test statistic with the observed value marked."""
    from scipy import stats

    _, fig, axes = _grid(len(groups))
    rng = np.random.default_rng(_SEED)
    for ax, (g, vals) in zip(axes, groups):
        if report.outcome == "interval":
            a = np.abs(vals)
            signs = rng.choice((-1.0, 1.0), size=(4000, a.size))
            null = signs @ a / a.size
            ax.hist(null, bins=40, color="#8c8c8c", edgecolor="white", label="sign-flip null (4,000 draws)")
            ax.axvline(vals.mean(), color="#c44e52", lw=2, label=f"observed {vals.mean():.3g}")
            ax.set_xlabel("mean Δ under H0")
        else:
            n = int(g.detail.n)
            k = np.arange(n + 1)
            ax.bar(k, stats.binom.pmf(k, n, 0.5), color="#8c8c8c", width=1.0, label=f"Binomial({n}, 1/2)")
            obs = int(g.detail.n_below)
            ax.axvline(obs, color="#c44e52", lw=2, label=f"observed n₋ = {obs}")
            ax.set_xlabel(f"n₋ = #{{s < {report.m0:g}}} under H0")
        ax.set_title(f"{g.group}: p = {g.pvalue:.3g}, adj. {g.pvalue_adjusted:.3g}", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return to_data_uri(fig)


def fig_matrix(report: Any) -> str:
    """Background × background matrix of adjusted p-values, one panel per model."""
    models = list(dict.fromkeys(g.model for g in report.groups))
    plt, fig, axes = _grid(len(models))
    for ax, model in zip(axes, models):
        fam = [g for g in report.groups if g.model == model]
        bgs = sorted({g.background_a for g in fam} | {g.background_b for g in fam})
        mat = np.full((len(bgs), len(bgs)), np.nan)
        for g in fam:
            i, j = bgs.index(g.background_a), bgs.index(g.background_b)
            mat[i, j] = mat[j, i] = g.pvalue_adjusted
        im = ax.imshow(mat, vmin=0, vmax=1, cmap="RdYlGn")
        ax.set_xticks(range(len(bgs)), bgs, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(bgs)), bgs, fontsize=8)
        for i in range(len(bgs)):
            for j in range(len(bgs)):
                txt = "—" if np.isnan(mat[i, j]) else f"{mat[i, j]:.3g}"
                ax.text(j, i, txt, ha="center", va="center", fontsize=8)
        ax.set_title(f"adjusted p ({report.correction}) — {model}", fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    return to_data_uri(fig)


def fig_backgrounds(report: Any, frame: Any) -> str:
    """Mean outcome per background with a 95% t interval; PB (with its CI) in the title."""
    from ipcausal.stats.summary import mean_ci

    models = list(dict.fromkeys(g.model for g in report.groups))
    _, fig, axes = _grid(len(models))
    model_col = frame["model"].fillna("(model not given)").astype(str) if "model" in frame else None
    for ax, model in zip(axes, models):
        sub = frame if model_col is None else frame[(model_col == model).to_numpy()]
        vals = np.concatenate([sub["score_i"].to_numpy(float), sub["score_j"].to_numpy(float)])
        labs = np.concatenate([sub["background_i"].to_numpy(object), sub["background_j"].to_numpy(object)])
        bgs = sorted(set(labs))
        means, lo, hi = [], [], []
        for b in bgs:
            v = vals[labs == b]
            if v.size > 1 and np.ptp(v) > 0:
                ci = mean_ci(v)
                m, low, high = ci.statistic, ci.ci_low, ci.ci_high
            else:
                m = low = high = float(v.mean())
            means.append(m)
            lo.append(m - low)
            hi.append(high - m)
        ax.errorbar(range(len(bgs)), means, yerr=[lo, hi], fmt="o", color="#4c72b0", capsize=4)
        ax.set_xticks(range(len(bgs)), bgs, fontsize=8)
        ax.set_ylabel("mean outcome (95% CI)")
        pb = report.pb.get(model)
        t = f"PB = {pb.statistic:.3g} [{pb.ci_low:.3g}, {pb.ci_high:.3g}]" if pb is not None else ""
        ax.set_title(f"{model}: {t}", fontsize=9)
    fig.tight_layout()
    return to_data_uri(fig)
