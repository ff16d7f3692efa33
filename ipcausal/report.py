"""Rendering a :class:`~ipcausal.results.Report`: a readable text table (and JSON via the Report)."""

from __future__ import annotations

from typing import Any

__all__ = ["format_text", "format_p"]


def format_p(p: float) -> str:
    """A p-value for people: 4 significant digits, scientific below 1e-4."""
    if p != p:  # NaN
        return "nan"
    if p == 0:
        return "0"
    return f"{p:.3e}" if p < 1e-4 else f"{p:.4f}"


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return out


def format_text(report: Any) -> str:
    """The report as a plain-text table that states H0, the direction and the verdict."""
    lines: list[str] = []
    mode = " (paper-compatibility mode: the study's released code, not the method as stated)" if report.paper_compat else ""
    lines.append(f"ipcausal report — {report.outcome} outcome{mode}")
    lines.append(report.null_hypothesis)
    lines.append(report.direction)
    corr = "no correction" if report.correction == "none" else f"{report.correction} correction"
    lines.append(f"alpha = {report.alpha:g}, {corr} within each model")
    lines.append("")
    for model, verdict in report.ip_detected_by_model().items():
        fam = [g for g in report.groups if g.model == model]
        lines.append(f"model: {model}")
        rows = []
        for g in fam:
            d = g.detail
            ci = f"[{g.ci_low:.4g}, {g.ci_high:.4g}]"
            rows.append(
                [
                    g.group,
                    str(g.n),
                    d.method,
                    f"{g.effect:.4g}",
                    ci,
                    format_p(g.pvalue),
                    format_p(g.pvalue_adjusted),
                    "yes" if g.reject else "no",
                ]
            )
        effect = "mean Δ" if report.outcome == "interval" else "median s"
        lines += ["  " + s for s in _table(rows, ["pair", "n", "method", effect, "95% CI", "p", "p adj", "reject"])]
        pb = report.pb.get(model)
        if pb is not None:
            means = ", ".join(f"{k}={v:.4g}" for k, v in pb.means.items())
            lines.append(f"  PB = {pb.value:.4g} [{pb.ci_low:.4g}, {pb.ci_high:.4g}] (means: {means})")
        lines.append(f"  implicit personalization detected: {'YES' if verdict else 'no'}")
        lines.append("")
    for w in report.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines).rstrip() + "\n"
