"""What the Markdown and HTML renderers share: the Section, its tables and its figures."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ipcausal.study.results import Report
from ipcausal.study.text import dz_text, effect_name, format_p, interval_kind, outcome_words, strata_table
from ipcausal.outcomes import is_interval

#: The style of every page (case, test, mitigation); the bench page adds its own.
PAGE_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0;max-width:100%}td,th{border:1px solid #ccc;padding:3px 8px;font-size:.9em}td{overflow-wrap:break-word}td:first-child{overflow-wrap:anywhere;min-width:10em}
th{background:#f0f0f0}.yes{color:#b00;font-weight:bold}.no{color:#444;font-style:italic}img{max-width:100%}
section{border-top:2px solid #ddd;margin-top:2em}figure{margin:1em 0}figcaption{font-size:.85em;color:#555}
nav a{margin-right:1em}.note{background:#fff8e0;border-left:4px solid #e0b000;padding:.5em 1em}
.count-note{font-size:.85em;color:#555;margin:.2em 0}"""

__all__ = ["PAGE_CSS", "esc", "html_table", "Section", "sections_of", "model_label", "group_rows", "pb_rows", "h0", "settings_rows", "figures",
           "equivalence_word"]


def esc(x: Any) -> str:
    """``x`` as HTML text (quotes escaped too: safe in attributes)."""
    import html

    return html.escape(str(x), quote=True)


def html_table(header: list[str], rows: list[list[str]]) -> str:
    """An HTML table of text cells (escaped)."""
    head = "".join(f"<th>{esc(c)}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


@dataclass(frozen=True)
class Section:
    """One case in a Markdown/HTML report.

    Parameters
    ----------
    title : str
        Heading, e.g. ``"Cultural adaptation (US vs UK English)"``.
    report : Report
        What :func:`ipcausal.test` returned (or :meth:`Report.read` gave back).
    counts : mapping, optional
        ``requested``, ``completed``, ``failed``, ``unparseable`` … (shown as given).
    settings : mapping, optional
        Model, generation settings, scorer, test settings (shown as given).
    mitigation : mapping, optional
        The case's ``mitigation.json`` (``ipcausal case --mitigation``), shown as its table.
    """

    title: str
    report: Report
    counts: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    mitigation: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.title, str) or not self.title.strip():
            raise ValueError("`title` must be non-empty text")
        if not isinstance(self.report, Report):
            raise TypeError(f"`report` must be an ipcausal Report, got {type(self.report).__name__}")
        if self.mitigation is not None and not isinstance(self.mitigation, Mapping):
            raise TypeError(f"`mitigation` must be a mapping or None, got {type(self.mitigation).__name__}")
        for name in ("counts", "settings"):
            if not isinstance(getattr(self, name), Mapping):
                raise TypeError(f"`{name}` must be a mapping, got {type(getattr(self, name)).__name__}")


def model_label(s: Section) -> str:
    """The model(s) a section is about: its ``model`` setting, else the models of its groups."""
    model = s.settings.get("model") if isinstance(s.settings, Mapping) else None
    if model:
        return str(model)
    return ", ".join(sorted({str(g.model) for g in s.report.groups}))


def sections_of(sections: Any) -> list[Section]:
    """A Report, a Section or a non-empty list of Sections, as a list of Sections.

    Sections that share a title (two case folders of the same case, run with two models) get
    their model in the title, so that headings and navigation tell them apart.
    """
    if isinstance(sections, Report):
        return [Section("ipcausal report", sections)]
    if isinstance(sections, Section):
        return [sections]
    if isinstance(sections, Sequence) and sections and all(isinstance(s, Section) for s in sections):
        out = list(sections)
        titles = [s.title for s in out]
        for k, s in enumerate(out):
            label = model_label(s)
            if titles.count(s.title) > 1 and label and label not in s.title:
                out[k] = replace(s, title=f"{s.title} ({label})")
        return out
    raise TypeError("`sections` must be a Report, a Section or a non-empty list of Sections")


def group_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-group table."""
    effect = effect_name(report)
    kinds = {interval_kind(getattr(g, "ci_method", ""))[0] for g in report.groups}
    header = ["model", "pair", "n", "test", "method", effect, f"95% {kinds.pop() if len(kinds) == 1 else 'CI'}",
              "p", "p adj", "reject H0"]
    interval = is_interval(report.outcome)
    mde = any(g.mde is not None for g in report.groups)
    if interval:
        header.insert(6, "d_z")
    if report.margin is not None:
        header.append(f"equivalent within ±{report.margin:g}")
    if mde:  # how blind each non-rejection was
        header.append("MDE, 80 % power" if interval else "MDE (share below m0), 80 % power")
    rows = []
    for g in report.groups:
        n = str(g.n) if g.n_clusters is None else f"{g.n} ({g.n_clusters} clusters)"
        rows.append([g.model, g.group, n, g.test, g.detail.method, f"{g.effect:.4g}",
                     f"[{g.ci_low:.4g}, {g.ci_high:.4g}]", format_p(g.pvalue), format_p(g.pvalue_adjusted),
                     "yes" if g.reject else "no"])
        if interval:
            rows[-1].insert(6, dz_text(g))
        if report.margin is not None:
            rows[-1].append(equivalence_word(g.equivalence.verdict if g.equivalence is not None else None))
        if mde:
            rows[-1].append(_mde_cell(g))
    if report.method == "sequential":  # an audit: pairs sent of those available, why it stopped, the e-value
        header += ["pairs sent", "stopped", "e-value"]
        for row, g in zip(rows, report.groups):
            q = g.sequential
            row += ([f"{q.n_sent}/{q.n_available}", q.stop_reason, f"{q.e_value:.4g}"] if q is not None
                    else ["", "", ""])
    return header, rows


def _mde_cell(g: Any) -> str:
    """The MDE of a non-rejection (its value, and d_z from the observed spread); "" beside a rejection."""
    m = g.mde
    if m is None or g.reject:
        return ""
    if m.effect != m.effect:
        return "n/a (no spread)"
    if m.effect == float("inf"):
        return f"none at n = {m.n}"
    return f"{m.effect:.3g}" + (f" (d_z {m.d_z:.2f}, observed sd)" if m.d_z is not None else "")


def equivalence_word(verdict: str | None) -> str:
    """The equivalence column as a verdict: ``"yes"`` (shown within ±ε), ``"no"`` (an effect shown:
    the test of no effect rejected), ``"—"`` (neither shown, or not assessed)."""
    return {"equivalent": "yes", "reject": "no"}.get(str(verdict), "—")


def pb_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the PB table (empty rows when there is no PB)."""
    rows = [[m, f"{p.statistic:.4g}", f"[{p.ci_low:.4g}, {p.ci_high:.4g}]",
             ", ".join(f"{k}={v:.4g}" for k, v in p.means.items())] for m, p in report.pb.items()]
    return ["model", "PB", "95% CI", "means"], rows


def trend_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the trend table: one row per model (empty rows without ``Design(trend=…)``)."""
    rows = [[t.model, " < ".join(t.levels),
             str(t.n_prompts) + (f" ({t.n_incomplete} incomplete left out)" if getattr(t, "n_incomplete", 0) else ""),
             t.method, f"{t.slope:.4g}",
             ", ".join(f"{lv}={m:.4g}" for lv, m in zip(t.levels, t.level_means)), format_p(t.pvalue),
             "yes" if t.reject else "no"] for t in getattr(report, "trend", ())]
    return ["model", "levels", "prompts", "method", "slope per level", "means", "p", "reject H0"], rows


def cue_tables(report: Report) -> list[tuple[str, list[str], list[list[str]], list[str]]]:
    """(model, header, rows, notes) of each group's per-cue table: effect per cue, pooled, heterogeneity p."""
    out = []
    for s in getattr(report, "strata", ()):
        rows, header, notes = strata_table(s)
        out.append((s.model, header, rows, notes))
    return out


def h0(report: Report) -> str:
    """The null hypothesis, starting with "H0"."""
    text = str(report.null_hypothesis)
    return text if text.startswith("H0") else f"H0: {text}"


def settings_rows(s: Section) -> list[tuple[str, str]]:
    """The test settings of the Report followed by the section's own settings, as text pairs."""
    r = s.report
    d: dict[str, Any] = {"outcome": f"{outcome_words(r.outcome)} ({r.outcome})", "alpha": r.alpha,
                         "correction": r.correction, "method": r.method}
    if r.m0 is not None:
        d["m0"] = r.m0
    if r.paper_compat:
        d["paper_compat"] = True
    d.update(dict(s.settings))
    return [(str(k), v if isinstance(v, str) else json.dumps(v, default=str, ensure_ascii=False))
            for k, v in d.items()]


def figures(s: Section) -> list[tuple[str, str]]:
    """(caption, PNG data URI) of every figure of the section, drawn from its Report alone."""
    from ipcausal.report import plots

    with plots._fonts():  # glyph fallback for non-Latin names, quietly
        return _figures(s, plots)


def _figures(s: Section, plots: Any) -> list[tuple[str, str]]:
    r = s.report
    figs = []
    if r.groups and all(g.data is not None and g.null is not None for g in r.groups):
        what = "Δ" if is_interval(r.outcome) else "similarity"
        figs.append((f"distribution of {what}", plots.fig_distribution(r)))
        figs.append(("null distribution of each test and the observed statistic", plots.fig_null(r)))
    if is_interval(r.outcome) and r.backgrounds:
        figs.append(("mean rating / score per background (exact binomial interval for 0/1 scores, a bootstrap "
                     "inside the range otherwise), PB", plots.fig_backgrounds(r)))
    per_model = [sum(g.model == m for g in r.groups) for m in dict.fromkeys(g.model for g in r.groups)]
    if per_model and max(per_model) > 1:  # one pair has no matrix to draw: its p is in the table
        figs.append(("adjusted p-values, background × background", plots.fig_matrix(r)))
    if any(g.sequential is not None and len(g.sequential.path_n) for g in r.groups):
        figs.append(("e-process of each background pair over the pairs sent (log scale), with 1/α",
                     plots.fig_eprocess(r)))
    return figs
