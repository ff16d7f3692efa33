"""Matplotlib figures for the Markdown/HTML reports, returned as PNG data URIs (self-contained).

Every figure is drawn from the Report alone (its groups' data and null summaries, its
per-background means): nothing here tests, simulates or reads the pairs again.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

__all__ = ["fig_distribution", "fig_null", "fig_matrix", "fig_backgrounds", "fig_eprocess", "to_data_uri"]

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


def _values(dist: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """(x, weights) of a :class:`~ipcausal.stats.null.Distribution`: a sample has weights None."""
    x = np.asarray(dist.x, dtype=float)
    return (x, None) if dist.kind == "sample" else (x, np.asarray(dist.weights, dtype=float))


def _title(g: Any) -> str:
    return f"{g.group} ({g.model})" if g.model != "(model not given)" else g.group


def _grid(n: int) -> tuple[Any, Any, list[Any]]:
    plt = _plt()
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.axis("off")
    return plt, fig, flat[:n]


def _hist(ax: Any, dist: Any, color: str, bins: Any, label: str | None = None) -> None:
    x, w = _values(dist)
    if dist.kind == "sample":
        ax.hist(x, bins=bins, color=color, edgecolor="white", label=label)
    elif dist.kind == "histogram":
        ax.stairs(w, x, fill=True, color=color, label=label)
    else:  # pmf
        width = float(np.min(np.diff(x))) if x.size > 1 else 1.0
        ax.bar(x, w, width=width, color=color, label=label)


def fig_distribution(report: Any) -> str:
    """Histogram of Δ (interval) or of the similarity per group, from the Report's data summaries."""
    _, fig, axes = _grid(len(report.groups))
    for ax, g in zip(axes, report.groups):
        x, _ = _values(g.data)
        if report.outcome == "interval":
            bins = min(30, max(5, len(np.unique(x)))) if g.data.kind == "sample" else None
            _hist(ax, g.data, "#4c72b0", bins)
            ax.axvline(0, color="black", lw=0.8)
            ax.axvline(g.effect, color="#c44e52", lw=1.5, label=f"mean Δ = {g.effect:.3g}")
            ax.set_xlabel(f"Δ = score({g.background_b}) − score({g.background_a})")
        else:
            _hist(ax, g.data, "#55a868", np.linspace(0, 1, 21))
            if report.m0 is not None:
                ax.axvline(report.m0, color="black", lw=1, ls="--", label=f"M0 = {report.m0:g}")
            ax.axvline(g.effect, color="#c44e52", lw=1.5, label=f"median = {g.effect:.3g}")
            ax.set_xlabel("similarity s (1 = same answer)")
        ax.set_title(_title(g), fontsize=9)
        ax.set_ylabel("pairs")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return to_data_uri(fig)


def fig_null(report: Any) -> str:
    """The null distribution of the route that produced each p (from the Report), observed value marked."""
    _, fig, axes = _grid(len(report.groups))
    for ax, g in zip(axes, report.groups):
        _hist(ax, g.null, "#8c8c8c", 40, label=g.null.label)
        ax.axvline(g.observed, color="#c44e52", lw=2, label=f"observed {g.observed:.3g}")
        ax.set_xlabel("mean Δ under H0" if g.test == "permutation" else "sign-test count under H0")
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
        # two colours split at alpha: a cell is red only when that pair is rejected
        from matplotlib.colors import BoundaryNorm, ListedColormap

        cmap = ListedColormap(["#e06666", "#dfe7ef"]).with_extremes(bad="white")
        ax.imshow(np.ma.masked_invalid(mat), cmap=cmap, norm=BoundaryNorm([0.0, report.alpha, 1.0 + 1e-12], 2))
        ax.set_xticks(range(len(bgs)), bgs, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(bgs)), bgs, fontsize=8)
        for i in range(len(bgs)):
            for j in range(len(bgs)):
                if np.isnan(mat[i, j]):
                    txt = "—"
                else:
                    txt = f"{mat[i, j]:.3g}" + (" *" if mat[i, j] <= report.alpha else "")
                ax.text(j, i, txt, ha="center", va="center", fontsize=8)
        ax.set_title(f"adjusted p ({report.correction}) — {model}\nred, *: rejected at α = {report.alpha:g}",
                     fontsize=9)
    fig.tight_layout()
    return to_data_uri(fig)


def fig_backgrounds(report: Any) -> str:
    """Mean outcome per background with a 95% t interval (the Report's ``backgrounds``); PB in the title."""
    models = [m for m in dict.fromkeys(g.model for g in report.groups) if m in report.backgrounds]
    _, fig, axes = _grid(max(1, len(models)))
    for ax, model in zip(axes, models):
        per = report.backgrounds[model]
        bgs = list(per)
        means = [per[b]["mean"] for b in bgs]
        lo = [per[b]["mean"] - per[b]["ci_low"] for b in bgs]
        hi = [per[b]["ci_high"] - per[b]["mean"] for b in bgs]
        ax.errorbar(range(len(bgs)), means, yerr=[lo, hi], fmt="o", color="#4c72b0", capsize=4)
        ax.set_xticks(range(len(bgs)), bgs, fontsize=8)
        ax.set_ylabel("mean outcome (95% CI)")
        pb = report.pb.get(model)
        t = f"PB = {pb.statistic:.3g} [{pb.ci_low:.3g}, {pb.ci_high:.3g}]" if pb is not None else ""
        ax.set_title(f"{model}: {t}", fontsize=9)
    fig.tight_layout()
    return to_data_uri(fig)


def fig_eprocess(report: Any) -> str:
    """Each group's e-process over the pairs sent (log scale), with the 1/α line and, under e-Holm or
    e-Bonferroni, the m/α line (e-Bonferroni's threshold; e-Holm rejects between the two)."""
    models = list(dict.fromkeys(g.model for g in report.groups))
    _, fig, axes = _grid(len(models))
    level = 1.0 / report.alpha
    for ax, model in zip(axes, models):
        fam = [g for g in report.groups if g.model == model and len(g.path_n)]
        for g in fam:
            ax.step(g.path_n, np.maximum(np.asarray(g.path_e, dtype=float), 1e-300), where="post",
                    label=f"{g.group}: {g.stop_reason}")
        ax.set_yscale("log")
        ax.axhline(level, color="#c44e52", lw=1.2, ls="--", label=f"1/α = {level:g}")
        m = len(fam)
        if report.correction in ("e-holm", "e-bonferroni") and m > 1:
            ax.axhline(m * level, color="#8c8c8c", lw=1.0, ls=":", label=f"m/α = {m * level:g}")
        ax.axhline(1.0, color="black", lw=0.6)
        ax.set_xlabel("pairs sent")
        ax.set_ylabel("e-value (log scale)")
        ax.set_title("e-process per background pair" + (f" — {model}" if len(model) <= 40 else ""), fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return to_data_uri(fig)
