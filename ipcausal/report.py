"""Rendering a :class:`~ipcausal.results.Report`: text, Markdown and self-contained HTML.

* :func:`format_text` — the plain-text table behind ``str(report)``.
* :class:`Section` — one case: its Report, the scored pairs it came from, the counts
  (requested / completed / failed / unparseable) and the settings (model, generation,
  scorer, test).  :func:`format_markdown` and :func:`format_html` render one or more sections;
  the HTML embeds matplotlib figures as PNG data URIs (no external file, no network):
  the Δ or similarity distribution, the null distribution with the observed statistic,
  the background × background matrix of adjusted p-values, and (interval outcomes) the
  mean per background with its CI and PB.
* :func:`write_report` picks the format from the file suffix (``.html``, ``.md``, ``.json``, ``.txt``).
"""

from __future__ import annotations

import html as _html
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["format_text", "format_p", "Section", "format_markdown", "format_html", "write_report"]


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
            lines.append(f"  PB = {pb.statistic:.4g} [{pb.ci_low:.4g}, {pb.ci_high:.4g}] (means: {means})")
        lines.append(f"  implicit personalization detected: {'YES' if verdict else 'no'}")
        lines.append("")
    for w in report.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines).rstrip() + "\n"


@dataclass(frozen=True)
class Section:
    """One case in a Markdown/HTML report.

    Parameters
    ----------
    title : str
        Heading, e.g. ``"Cultural adaptation (US vs UK English)"``.
    report : Report
        What :func:`ipcausal.test` returned for the scored pairs.
    pairs : PairSet, optional
        The scored pairs (needed for the distribution and null plots).
    counts : mapping, optional
        ``requested``, ``completed``, ``failed``, ``unparseable`` … (shown as given).
    settings : mapping, optional
        Model, generation settings, scorer, test settings (shown as given).
    """

    title: str
    report: Any
    pairs: Any = None
    counts: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from ipcausal.pairs import PairSet
        from ipcausal.results import Report

        if not isinstance(self.title, str) or not self.title.strip():
            raise ValueError("`title` must be non-empty text")
        if not isinstance(self.report, Report):
            raise TypeError(f"`report` must be an ipcausal Report, got {type(self.report).__name__}")
        if self.pairs is not None and not isinstance(self.pairs, PairSet):
            raise TypeError(f"`pairs` must be a PairSet or None, got {type(self.pairs).__name__}")
        for name in ("counts", "settings"):
            if not isinstance(getattr(self, name), Mapping):
                raise TypeError(f"`{name}` must be a mapping")


def _sections(sections: Any) -> list[Section]:
    from ipcausal.results import Report

    if isinstance(sections, Report):
        return [Section("ipcausal report", sections)]
    if isinstance(sections, Section):
        return [sections]
    if isinstance(sections, Sequence) and sections and all(isinstance(s, Section) for s in sections):
        return list(sections)
    raise TypeError("`sections` must be a Report, a Section or a non-empty list of Sections")


def _group_rows(report: Any) -> tuple[list[str], list[list[str]]]:
    effect = "mean Δ" if report.outcome == "interval" else "median s"
    header = ["model", "pair", "n", "test", "method", effect, "95% CI", "p", "p adj", "reject H0"]
    rows = []
    for g in report.groups:
        rows.append([g.model, g.group, str(g.n), g.test, g.detail.method, f"{g.effect:.4g}",
                     f"[{g.ci_low:.4g}, {g.ci_high:.4g}]", format_p(g.pvalue), format_p(g.pvalue_adjusted),
                     "yes" if g.reject else "no"])
    return header, rows


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    esc = [[str(c).replace("|", "\\|") for c in r] for r in rows]
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in esc]


def _h0(report: Any) -> str:
    text = str(report.null_hypothesis)
    return text if text.startswith("H0") else f"H0: {text}"


def _verdicts(report: Any) -> list[tuple[str, bool]]:
    return list(report.ip_detected_by_model().items())


def _kv(mapping: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for k, v in mapping.items():
        out.append((str(k), v if isinstance(v, str) else json.dumps(v, default=str)))
    return out


def _test_settings(report: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"outcome": report.outcome, "alpha": report.alpha, "correction": report.correction,
                         "method": report.method}
    if report.m0 is not None:
        d["m0"] = report.m0
    if report.paper_compat:
        d["paper_compat"] = True
    return d


def format_markdown(sections: Any, *, title: str = "ipcausal report", plots: bool = False) -> str:
    """One or more :class:`Section` s (or a bare Report) as Markdown.

    ``plots=True`` embeds the figures as PNG data URIs (fine for local viewers; some hosts
    such as GitHub do not show data-URI images).

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records(
    ...     {"pair_id": k, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q",
    ...      "score_i": 1, "score_j": k % 3} for k in range(12))
    >>> md = format_markdown(Section("demo", ipcausal.test(ps), ps))
    >>> md.splitlines()[0]
    '# ipcausal report'
    """
    secs = _sections(sections)
    out = [f"# {title}", ""]
    for s in secs:
        r = s.report
        out += [f"## {s.title}", "", f"{_h0(r)}  ", f"*Direction*: {r.direction}", ""]
        for model, v in _verdicts(r):
            out.append(f"- **{model}**: implicit personalization {'**detected**' if v else 'not detected'}")
        out.append("")
        out += _md_table(*_group_rows(r))
        out.append("")
        if r.pb:
            pb_rows = [[m, f"{p.statistic:.4g}", f"[{p.ci_low:.4g}, {p.ci_high:.4g}]",
                        ", ".join(f"{k}={v:.4g}" for k, v in p.means.items())] for m, p in r.pb.items()]
            out += ["**Personalization bias (PB)**", ""] + _md_table(["model", "PB", "95% CI", "means"], pb_rows) + [""]
        if s.counts:
            out += ["**Counts**", ""] + _md_table([k for k in s.counts], [[str(v) for v in s.counts.values()]]) + [""]
        settings = {**_test_settings(r), **dict(s.settings)}
        out += ["**Settings**", ""] + [f"- {k}: {v}" for k, v in _kv(settings)] + [""]
        for w in r.warnings:
            out.append(f"> warning: {w}")
        if plots:
            for name, uri in _figures(s):
                out += [f"![{name}]({uri})", ""]
    return "\n".join(out).rstrip() + "\n"


def _figures(s: Section) -> list[tuple[str, str]]:
    from ipcausal import _plots

    r = s.report
    figs = []
    if s.pairs is not None:
        frame = s.pairs.to_frame()
        groups = _plots.group_values(r, frame)
        what = "Δ" if r.outcome == "interval" else "similarity"
        figs.append((f"distribution of {what}", _plots.fig_distribution(r, groups)))
        figs.append(("null distribution and observed statistic", _plots.fig_null(r, groups)))
        if r.outcome == "interval":
            figs.append(("mean outcome per background, PB", _plots.fig_backgrounds(r, frame)))
    figs.append(("adjusted p-values, background × background", _plots.fig_matrix(r)))
    return figs


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:.9em}
th{background:#f0f0f0}.yes{color:#b00;font-weight:bold}.no{color:#070}img{max-width:100%}
section{border-top:2px solid #ddd;margin-top:2em}figure{margin:1em 0}figcaption{font-size:.85em;color:#555}
nav a{margin-right:1em}"""


def _h(x: Any) -> str:
    return _html.escape(str(x))


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_h(c)}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{_h(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def format_html(sections: Any, *, title: str = "ipcausal report") -> str:
    """One or more :class:`Section` s (or a bare Report) as one self-contained HTML page.

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records(
    ...     {"pair_id": k, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q",
    ...      "similarity": 0.5 + (k % 2) / 2} for k in range(12))
    >>> page = format_html(Section("demo", ipcausal.test(ps), ps))
    >>> page.startswith("<!DOCTYPE html>"), "data:image/png;base64," in page
    (True, True)
    """
    secs = _sections(sections)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_h(title)}</title>",
             f"<style>{_CSS}</style></head><body><h1>{_h(title)}</h1>"]
    parts.append("<nav>" + "".join(f"<a href='#s{i}'>{_h(s.title)}</a>" for i, s in enumerate(secs)) + "</nav>")
    for i, s in enumerate(secs):
        r = s.report
        parts.append(f"<section id='s{i}'><h2>{_h(s.title)}</h2>")
        parts.append(f"<p>{_h(_h0(r))}<br><b>Direction</b>: {_h(r.direction)}</p><ul>")
        for model, v in _verdicts(r):
            cls, word = ("yes", "detected") if v else ("no", "not detected")
            parts.append(f"<li>{_h(model)}: implicit personalization <span class='{cls} verdict'>{word}</span></li>")
        parts.append("</ul>" + _html_table(*_group_rows(r)))
        if r.pb:
            pb_rows = [[m, f"{p.statistic:.4g}", f"[{p.ci_low:.4g}, {p.ci_high:.4g}]",
                        ", ".join(f"{k}={v:.4g}" for k, v in p.means.items())] for m, p in r.pb.items()]
            parts.append("<h3>Personalization bias (PB)</h3>" + _html_table(["model", "PB", "95% CI", "means"], pb_rows))
        if s.counts:
            parts.append("<h3>Counts</h3>" + _html_table(list(s.counts), [[str(v) for v in s.counts.values()]]))
        settings = {**_test_settings(r), **dict(s.settings)}
        parts.append("<h3>Model and settings</h3>" + _html_table(["setting", "value"], [list(kv) for kv in _kv(settings)]))
        for w in r.warnings:
            parts.append(f"<p class='warning'>warning: {_h(w)}</p>")
        for name, uri in _figures(s):
            parts.append(f"<figure><img alt='{_h(name)}' src='{uri}'><figcaption>{_h(name)}</figcaption></figure>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(sections: Any, path: str | os.PathLike[str], *, title: str = "ipcausal report") -> Path:
    """Write the report in the format named by the suffix: ``.html``, ``.md``, ``.json`` or ``.txt``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError("`path` must be a file path")
    p = Path(path)
    secs = _sections(sections)
    suffix = p.suffix.lower()
    if suffix in (".html", ".htm"):
        text = format_html(secs, title=title)
    elif suffix in (".md", ".markdown"):
        text = format_markdown(secs, title=title)
    elif suffix == ".json":
        from ipcausal.results import _nan_to_none

        payload = [{"title": s.title, "report": s.report.to_dict(), "counts": dict(s.counts),
                    "settings": dict(s.settings)} for s in secs]
        text = json.dumps(_nan_to_none(payload[0] if len(payload) == 1 else payload), indent=2, default=str)
    elif suffix == ".txt":
        text = "\n".join(f"== {s.title} ==\n{format_text(s.report)}" for s in secs)
    else:
        raise ValueError(f"`path` must end in .html, .md, .json or .txt, got {p.name!r}")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p
