"""Matplotlib figures for the Markdown/HTML reports, returned as PNG data URIs (self-contained).

Every figure is drawn from the Report alone (its groups' data and null summaries, its
per-background means): nothing here tests, simulates or reads the pairs again.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import io
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from ipcausal.outcomes import is_interval

__all__ = ["fig_distribution", "fig_null", "fig_matrix", "fig_backgrounds", "fig_eprocess", "to_data_uri", "font_list",
           "missing_glyphs", "FALLBACK_FONTS"]

def _plt() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("HTML/Markdown plots need matplotlib: pip install 'ipcausal[report]'") from exc
    return plt


#: Fonts tried after DejaVu Sans for characters it lacks (CJK, emoji), where installed.
FALLBACK_FONTS: tuple[str, ...] = (
    "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK KR", "Noto Sans SC", "Noto Sans JP", "Source Han Sans SC",
    "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback", "AR PL UMing CN", "Microsoft YaHei",
    "PingFang SC", "Hiragino Sans", "Arial Unicode MS", "Noto Sans Arabic", "Noto Sans Devanagari",
    "Noto Color Emoji", "Noto Emoji", "Symbola", "Segoe UI Emoji", "Apple Color Emoji",
)


@functools.cache
def font_list() -> tuple[str, ...]:
    """DejaVu Sans, then the installed fonts of :data:`FALLBACK_FONTS` (matplotlib falls back along the list)."""
    from matplotlib import font_manager

    have = {f.name for f in font_manager.fontManager.ttflist}
    return ("DejaVu Sans",) + tuple(f for f in FALLBACK_FONTS if f in have)


@contextlib.contextmanager
def _fonts() -> Iterator[None]:
    """Draw with :func:`font_list`; a character no installed font has is drawn as a box, quietly
    (matplotlib's one-warning-per-glyph "missing from font(s)" messages are dropped: the HTML tables
    show the names as written)."""
    plt = _plt()
    with plt.rc_context({"font.family": "sans-serif", "font.sans-serif": list(font_list())}), \
            warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*[Gg]lyph .* missing from (current )?font")
        warnings.filterwarnings("ignore", message=r"(?s).*[Mm]atplotlib currently does not support")
        yield


def missing_glyphs(text: str) -> str:
    """The characters of ``text`` that no font of :func:`font_list` can draw (shown as boxes in figures).

    Examples
    --------
    >>> missing_glyphs("US vs UK")
    ''
    """
    charsets = _charsets(font_list())
    return "".join(dict.fromkeys(c for c in text if not c.isspace() and not any(ord(c) in cs for cs in charsets)))


@functools.cache
def _charsets(names: tuple[str, ...]) -> tuple[frozenset[int], ...]:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    out = []
    for name in names:
        try:
            path = font_manager.findfont(font_manager.FontProperties(family=name), fallback_to_default=False)
            out.append(frozenset(FT2Font(path).get_charmap()))
        except (ValueError, RuntimeError, OSError):
            continue
    return tuple(out)


def _wrap_titles(fig: Any) -> None:
    """Wrap each panel's title to the panel's width, so a long model name never shrinks the figure."""
    import textwrap

    width_in = fig.get_size_inches()[0]
    for ax in fig.axes:
        title = ax.get_title()
        if not title:
            continue
        size = ax.title.get_fontsize()
        chars = max(20, int(ax.get_position().width * width_in * 72 / (0.55 * size)))
        ax.set_title("\n".join(textwrap.fill(line, chars) for line in title.split("\n")), fontsize=size)


def to_data_uri(fig: Any) -> str:
    """Render ``fig`` as a base64 PNG data URI and close it (titles wrapped to their panels)."""
    plt = _plt()
    _wrap_titles(fig)
    fig.tight_layout()
    buf = io.BytesIO()
    with _fonts():
        fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _values(dist: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """(x, weights) of a :class:`~ipcausal.stats.null.Distribution`: a sample has weights None."""
    x = np.asarray(dist.x, dtype=float)
    return (x, None) if dist.kind == "sample" else (x, np.asarray(dist.weights, dtype=float))


def _known(model: str) -> bool:
    from ipcausal.study.results import UNKNOWN_MODEL

    return model != UNKNOWN_MODEL


def _title(g: Any) -> str:
    return f"{g.group} ({g.model})" if _known(g.model) else g.group


#: Figure sizes (inches at :data:`DPI`): one panel spans the page (about 1,000 px of an 1,100 px
#: column); several go two to a row.
DPI = 100
_ONE = (10.0, 4.2)
_EACH = (5.4, 3.9)
_TITLE, _LABEL, _TICK, _LEGEND = 12, 11, 10, 10


def _grid(n: int) -> tuple[Any, Any, list[Any]]:
    plt = _plt()
    cols = 1 if n == 1 else 2
    rows = (n + cols - 1) // cols
    size = _ONE if n == 1 else (_EACH[0] * cols, _EACH[1] * rows)
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.axis("off")
    for ax in flat[:n]:
        ax.tick_params(labelsize=_TICK)
    return plt, fig, flat[:n]


def _legend_below(ax: Any) -> None:
    """The legend under the axes, clear of the data (never on top of a bar or a line)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=min(3, len(handles)),
                  fontsize=_LEGEND, frameon=False)


def _hist(ax: Any, dist: Any, color: str, bins: Any, label: str | None = None, centred: bool = True) -> None:
    x, w = _values(dist)
    if dist.kind == "sample":
        values, counts = np.unique(x, return_counts=True)
        if centred and values.size <= 40:  # few distinct values (ratings, 0/1): one bar centred on each value
            gap = float(np.min(np.diff(values))) if values.size > 1 else 1.0
            ax.bar(values, counts, width=0.8 * gap, color=color, edgecolor="white", label=label)
        else:
            ax.hist(x, bins=bins, color=color, edgecolor="white", label=label)
    elif dist.kind == "histogram":
        ax.stairs(w, x, fill=True, color=color, label=label)
    else:  # pmf
        width = 0.8 * float(np.min(np.diff(x))) if x.size > 1 else 1.0  # gaps: a two-point null is two bars
        ax.bar(x, w, width=width, color=color, label=label)


def fig_distribution(report: Any) -> str:
    """Histogram of Δ (interval) or of the similarity per group, from the Report's data summaries."""
    _, fig, axes = _grid(len(report.groups))
    for ax, g in zip(axes, report.groups):
        x, _ = _values(g.data)
        if is_interval(report.outcome):
            bins = min(30, max(5, len(np.unique(x)))) if g.data.kind == "sample" else None
            _hist(ax, g.data, "#4c72b0", bins)
            ax.axvline(0, color="black", lw=0.8)
            ax.axvline(g.effect, color="#c44e52", lw=1.5, label=f"mean Δ = {g.effect:.3g}")
            ax.set_xlabel(f"Δ = score({g.background_b}) − score({g.background_a})")
        else:
            _hist(ax, g.data, "#55a868", np.linspace(0, 1, 21), centred=False)
            if report.m0 is not None:
                ax.axvline(report.m0, color="black", lw=1, ls="--", label=f"M0 = {report.m0:g}")
            ax.axvline(g.effect, color="#c44e52", lw=1.5, label=f"median = {g.effect:.3g}")
            ax.set_xlabel("similarity s (1 = same answer)")
        ax.set_title(_title(g), fontsize=_TITLE)
        ax.set_ylabel("pairs", fontsize=_LABEL)
        ax.xaxis.label.set_fontsize(_LABEL)
        _legend_below(ax)
    fig.tight_layout()
    return to_data_uri(fig)


def _sign_label(g: Any) -> str:
    """What the sign test counts, in the words of its alternative."""
    d = g.detail
    m0 = f"{getattr(d, 'm0', float('nan')):g}"
    what = {"less": f"pairs with s < {m0}", "greater": f"pairs with s > {m0}"}.get(
        getattr(d, "alternative", ""), f"max(#s < {m0}, #s > {m0})")
    return f"{what}, of n = {d.n} (sign-test count under H0)"


def _null_ylabel(dist: Any) -> str:
    """Draws for a Monte Carlo sample (or its histogram of counts), probability for an exact null."""
    if dist.kind == "pmf" or (dist.kind == "histogram" and abs(sum(dist.weights) - 1.0) < 1e-6):
        return "probability under H0"
    return "Monte Carlo draws"


def fig_null(report: Any) -> str:
    """The null distribution of the route that produced each p (from the Report), observed value marked."""
    _, fig, axes = _grid(len(report.groups))
    for ax, g in zip(axes, report.groups):
        _hist(ax, g.null, "#8c8c8c", 40, label=g.null.label)
        ax.axvline(g.observed, color="#c44e52", lw=2, label=f"observed {g.observed:.3g}")
        ax.set_xlabel("mean Δ under H0" if g.test == "permutation" else _sign_label(g), fontsize=_LABEL)
        ax.set_ylabel(_null_ylabel(g.null), fontsize=_LABEL)
        ax.set_title(f"{_title(g)}: p = {g.pvalue:.3g}, adjusted p = {g.pvalue_adjusted:.3g}", fontsize=_TITLE)
        _legend_below(ax)
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
        rejected = np.full((len(bgs), len(bgs)), np.nan)  # 0 = rejected (red), 1 = not (grey-blue)
        for g in fam:
            i, j = bgs.index(g.background_a), bgs.index(g.background_b)
            mat[i, j] = mat[j, i] = g.pvalue_adjusted
            rejected[i, j] = rejected[j, i] = 0.0 if g.reject else 1.0
        # two colours, from the Report's own decision (p adj <= alpha): a cell is red only when rejected
        from matplotlib.colors import BoundaryNorm, ListedColormap

        cmap = ListedColormap(["#e06666", "#dfe7ef"]).with_extremes(bad="white")
        ax.imshow(np.ma.masked_invalid(rejected), cmap=cmap, norm=BoundaryNorm([-0.5, 0.5, 1.5], 2))
        ax.set_xticks(range(len(bgs)), bgs, rotation=30, ha="right", fontsize=_TICK)
        ax.set_yticks(range(len(bgs)), bgs, fontsize=_TICK)
        for i in range(len(bgs)):
            for j in range(len(bgs)):
                if np.isnan(mat[i, j]):
                    txt = "—"
                else:
                    txt = f"{mat[i, j]:.3g}" + (" *" if rejected[i, j] == 0.0 else "")
                ax.text(j, i, txt, ha="center", va="center", fontsize=_TICK)
        who = f" — {model}" if _known(model) else ""
        ax.set_title(f"adjusted p ({report.correction}){who}\nred, *: rejected at α = {report.alpha:g}",
                     fontsize=_TITLE)
    fig.tight_layout()
    return to_data_uri(fig)


def fig_backgrounds(report: Any) -> str:
    """Mean score per background with its 95% interval (the Report's ``backgrounds``: exact binomial for 0/1
    scores, a bootstrap inside the range otherwise); PB in the title."""
    models = [m for m in dict.fromkeys(g.model for g in report.groups) if m in report.backgrounds]
    _, fig, axes = _grid(max(1, len(models)))
    for ax, model in zip(axes, models):
        per = report.backgrounds[model]
        bgs = list(per)
        means = [per[b]["mean"] for b in bgs]
        lo = [per[b]["mean"] - per[b]["ci_low"] for b in bgs]
        hi = [per[b]["ci_high"] - per[b]["mean"] for b in bgs]
        ax.errorbar(range(len(bgs)), means, yerr=[lo, hi], fmt="o", color="#4c72b0", capsize=4)
        ax.set_xticks(range(len(bgs)), bgs, fontsize=_TICK)
        ax.set_xlim(-0.6, len(bgs) - 0.4)
        ax.set_ylabel("mean rating / score (95% CI)", fontsize=_LABEL)
        pb = report.pb.get(model)
        t = f"PB = {pb.statistic:.3g} [{pb.ci_low:.3g}, {pb.ci_high:.3g}]" if pb is not None else ""
        ax.set_title(f"{model}: {t}" if _known(model) else t, fontsize=_TITLE)
    fig.tight_layout()
    return to_data_uri(fig)


def fig_eprocess(report: Any) -> str:
    """Each group's e-process over the pairs sent (log scale), with the 1/α line and, under e-Holm or
    e-Bonferroni, the m/α line (e-Bonferroni's threshold; e-Holm rejects between the two)."""
    models = list(dict.fromkeys(g.model for g in report.groups))
    _, fig, axes = _grid(len(models))
    level = 1.0 / report.alpha
    for ax, model in zip(axes, models):
        fam = [g for g in report.groups if g.model == model and g.sequential is not None and len(g.sequential.path_n)]
        for g in fam:
            q = g.sequential
            ax.step(q.path_n, np.maximum(np.asarray(q.path_e, dtype=float), 1e-300), where="post",
                    label=f"{g.group}: {q.stop_reason}")
        ax.set_yscale("log")
        ax.axhline(level, color="#c44e52", lw=1.2, ls="--", label=f"1/α = {level:g}")
        m = len(fam)
        if report.correction in ("e-holm", "e-bonferroni") and m > 1:
            ax.axhline(m * level, color="#8c8c8c", lw=1.0, ls=":", label=f"m/α = {m * level:g}")
        ax.axhline(1.0, color="black", lw=0.6)
        ax.set_xlabel("pairs sent", fontsize=_LABEL)
        ax.set_ylabel("e-value (log scale)", fontsize=_LABEL)
        ax.set_title("e-process per background pair" + (f" — {model}" if len(model) <= 40 else ""), fontsize=_TITLE)
        _legend_below(ax)
    fig.tight_layout()
    return to_data_uri(fig)
