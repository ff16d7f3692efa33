"""A :class:`~ipcausal.study.bench.report.BenchReport` as Markdown or HTML: the models × cases table (issue 20 item 2).

``bench.md`` opens with one row per model and one column per case (the cell's verdict, how many
background pairs rejected "no effect", a link to the cell's own report), then per case the rows of
``bench.csv`` (effect, interval, adjusted p, verdict, n, calls, cost) and the model comparisons
(difference, interval, p, step-down and Holm adjusted p), and ends with each cell's alignment
reason in words and the failed cells with their errors.  A bench that probed its cells
(``[settings] probe = true``) gets, after the first table, a second models × cases table: each
cell's "can infer / does use" reading with the probe's accuracy against chance and its p
(:mod:`ipcausal.study.bench.probe`), and what each reading means.

``bench.html`` (:func:`bench_html`) is one self-contained page: the models × cases table as a heat
map — each cell coloured by its verdict (blue aligned, red misaligned, amber inconclusive, grey
failed; no green: nothing here is an all-clear) or by its effect (blue below zero, red above, the strongest background pair's effect
scaled by the largest in the table) — holding, per background pair, which way Δ runs, the effect
with its unit and interval, the adjusted p (labelled with its correction), the verdict (or why
the test cannot reject whatever the data), the equivalence verdict, n and the rank set, then the
cell's calls and cost where known, and a link to the cell's own ``report.html``; then the probe's
models × cases table (when the bench probed), the rank sets, the model comparisons (refused ones
with the reason), a few example pairs and each cell's reason in words
(:mod:`ipcausal.report.bench_cells` words them).
"""

from __future__ import annotations

import html as _html
import math
import os
from pathlib import Path
from typing import Any

from ipcausal.report.bench_cells import f as _f
from ipcausal.report.bench_cells import (COMPARISON_HEAD, comparison_values, equivalence_text, examples_html,
                                         examples_markdown, group_text, ip_text, ranks_html, ranks_markdown, resources)
from ipcausal.report.examples import EXAMPLES_CSS
from ipcausal.study.bench.report import READING_MEANINGS, BenchReport

__all__ = ["bench_markdown", "write_bench_markdown", "bench_html", "write_bench_html", "COLOR_BY"]

#: What the heat map colours by.
COLOR_BY: tuple[str, ...] = ("verdict", "effect")


def _cell_text(report: BenchReport, model: str, case: str) -> str:
    try:
        c = report.cell(model, case)
    except KeyError:
        return "—"  # the model was not run on this case
    if c.status == "failed":
        return "failed"
    hits = sum(g.reject for g in c.groups)
    link = f" ([report]({c.folder}/report.md))" if c.folder else ""
    tail = " (incomplete)" if c.status == "incomplete" else ""
    return f"{c.alignment}; IP in {hits}/{len(c.groups)}{tail}{link}"


def bench_markdown(report: BenchReport, *, title: str = "IP-Bench") -> str:
    """The Markdown page of a bench.

    Examples
    --------
    >>> from ipcausal.study.bench.report import BenchCell, BenchReport, CellGroup
    >>> g = CellGroup("a vs b", 8, 1.5, 0.5, 2.5, 0.01, 0.01, True)
    >>> rep = BenchReport(("m",), ("echo",), (BenchCell("m", "echo", "ok", "cells/m/echo", groups=(g,),
    ...                   alignment="aligned", alignment_reason="why."),))
    >>> print(bench_markdown(rep).splitlines()[4])
    | m | aligned; IP in 1/1 ([report](cells/m/echo/report.md)) |
    """
    if not isinstance(report, BenchReport):
        raise TypeError(f"`report` must be a BenchReport, got {type(report).__name__}")
    s = report.settings
    lines = [f"# {title}", "",
             "| model | " + " | ".join(report.cases) + " |",
             "|---|" + "---|" * len(report.cases)]
    for m in report.models:
        lines.append(f"| {m} | " + " | ".join(_cell_text(report, m, c) for c in report.cases) + " |")
    lines += ["", f"alpha {s.get('alpha', '—')}, correction {s.get('correction', '—')}, seed {s.get('seed', '—')}. "
              "IP in k/n: background pairs whose test rejected \"no effect\" after the correction.", ""]
    lines += _probe_markdown(report)
    correction = s.get("correction", "—")
    for case in report.cases:
        mine = [c for c in report.cells if c.case == case]
        eps = next((c.margin for c in mine if getattr(c, "margin", None) is not None), None)
        units = {c.unit for c in mine if getattr(c, "unit", None)}
        unit = next(iter(units)) if len(units) == 1 else None  # one unit: in the header; several: per row
        eq_head = f"equivalent within ±{eps:g}" if eps is not None else "equivalent within ±ε"
        lines += [f"## {case}", "", f"| model | group | direction | n | effect{' (' + unit + ')' if unit else ''} | "
                  f"d_z | 95% CI | p | adjusted p ({correction}) | IP | MDE, 80 % power | {eq_head} | rank set | "
                  "tie group | calls | cost |", "|---" * 16 + "|"]
        for c in mine:
            for g in c.groups:
                r = report.rank(c.model, case, g.group)
                own = f" ({c.unit})" if unit is None and getattr(c, "unit", None) else ""
                lines.append(f"| {c.model} | {g.group} | {g.direction or '—'} | {g.n} | {_f(g.effect)}{own} | "
                             f"{_f(g.d_z, 2)} | [{_f(g.ci_low)}, {_f(g.ci_high)}] | {_f(g.pvalue)} | "
                             f"{_f(g.pvalue_adjusted)} | {ip_text(g)} | {_f(g.mde)} | {equivalence_text(c, g)} | "
                             f"{r.rank_set if r else '—'} | {r.tie_group if r else '—'} | {_f(c.calls)} | {_f(c.cost)} |")
            if not c.groups:
                lines.append(f"| {c.model} | {c.status} |" + " — |" * 14)
        lines += ranks_markdown(report, case)
        comps = [x for x in report.comparisons if x.case == case]
        if comps:
            lines += ["", "Model comparisons (D = Δ(a) − Δ(b) on the pairs every model answered; models on "
                      "different scales are not compared):", "",
                      "| " + " | ".join(COMPARISON_HEAD[1:]) + " |", "|---" * (len(COMPARISON_HEAD) - 1) + "|"]
            for x in comps:
                lines.append("| " + " | ".join(comparison_values(x)[1:]) + " |")
        lines += examples_markdown(report, case)
        lines += _mitigation_markdown(report, case)
        lines.append("")
    lines += ["## Why each cell got its verdict", ""]
    for c in report.cells:
        if c.status == "failed":
            lines.append(f"- **{c.model} / {c.case}**: failed: {c.error}")
        else:
            lines.append(f"- **{c.model} / {c.case}** ({c.stance}): {c.alignment_reason}")
    for note in report.notes:
        lines.append(f"- {note}")
    return "\n".join(lines) + "\n"


def _probes(report: BenchReport) -> bool:
    return any(c.probe is not None for c in report.cells)


def _probe_cell(report: BenchReport, model: str, case: str) -> tuple[str, str]:
    """(reading, "accuracy a vs chance c, p, n") of a cell's probe; "—" where it has none."""
    try:
        p = report.cell(model, case).probe
    except KeyError:
        return "—", ""
    if p is None:
        return "not probed", ""
    if p.error:
        return "probe failed", p.error
    failed = (f", {p.failed} failed" if p.failed else "") + (f", {p.unparseable} unparseable" if p.unparseable else "")
    detail = f"accuracy {_f(p.accuracy, 2)} vs chance {_f(p.chance, 2)}, p {_f(p.pvalue, 2)}, n {p.n}{failed}"
    return p.reading or "no probe answer", detail


def _probe_markdown(report: BenchReport) -> list[str]:
    """The "can infer / does use" table of a probed bench (nothing for one without a probe)."""
    if not _probes(report):
        return []
    alpha = report.settings.get("alpha", "—")
    lines = ["## Can it infer the background; does it use it?", "",
             "| model | " + " | ".join(report.cases) + " |", "|---|" + "---|" * len(report.cases)]
    for m in report.models:
        cells = [_probe_cell(report, m, c) for c in report.cases]
        lines.append(f"| {m} | " + " | ".join(f"{r} ({d})" if d else r for r, d in cells) + " |")
    lines += ["", f"Can infer: the background probe names each prompt's background better than chance (exact "
              f"binomial test, unit: the prompt, at alpha {alpha}). Does use: at least one background pair "
              "rejected \"no effect\" (adjusted p, same alpha). A test that does not reject shows nothing:", ""]
    lines += [f"- **{k}**: {v}." for k, v in READING_MEANINGS.items()]
    return lines + [""]


_MIT_HEAD = ("model", "mitigation", "group", "n", "effect without", "effect with", "change", "95% CI",
             "p of the change (adjusted over the background pairs)", "removed", "dropped by the rewrite check")
_MIT_NOTE = ("Each cell also run with the case's mitigation on the same pairs: change = mean(Δ_with − Δ_without) "
             "(similarity: s_with − s_without), its paired sign-flip p; removed only where the effect with it is "
             "shown equivalent to zero (similarity: median shown above m0) — never from a non-rejection.")


def _mitigation_cells(report: BenchReport, case: str | None = None) -> list[tuple[Any, tuple[Any, ...]]]:
    """(cell, the values of one mitigation row) for the cells run with a mitigation (an error: one row)."""
    out = []
    for c in report.cells:
        if case is not None and c.case != case:
            continue
        for r in getattr(c, "mitigation", ()):
            out.append((c, (c.model, r.mitigation, r.group, r.n, _f(r.effect_without), _f(r.effect_with),
                            _f(r.change), f"[{_f(r.change_ci_low)}, {_f(r.change_ci_high)}]", _f(r.change_pvalue),
                            r.removed, r.dropped)))
        if getattr(c, "mitigation_error", None):
            out.append((c, (c.model, "—", f"not compared: {c.mitigation_error}", *("—",) * 8)))
    return out


def _mitigation_markdown(report: BenchReport, case: str) -> list[str]:
    rows = _mitigation_cells(report, case)
    if not rows:
        return []
    lines = ["", "Mitigation: " + _MIT_NOTE, "", "| " + " | ".join(_MIT_HEAD) + " |", "|---" * len(_MIT_HEAD) + "|"]
    return lines + ["| " + " | ".join(str(v) for v in vals) + " |" for _, vals in rows]


def _mitigation_html(report: BenchReport) -> list[str]:
    rows = _mitigation_cells(report)
    if not rows:
        return []
    head = "".join(f"<th>{h}</th>" for h in ("case", *_MIT_HEAD))
    body = ["<tr data-mitigation='" + _h(vals[1]) + "'>" + "".join(f"<td>{_h(v)}</td>" for v in (c.case, *vals))
            + "</tr>" for c, vals in rows]
    return [f"<h2>Mitigations</h2><p>{_h(_MIT_NOTE)}</p><table class='mitigations'><thead><tr>{head}</tr></thead>"
            "<tbody>", *body, "</tbody></table>"]


def _write_cell_reports(report: BenchReport, root: Path, name: str) -> None:
    """Beside each finished cell's ``report.json``, its report rendered as ``name`` (.md or .html)."""
    from ipcausal.report import read_sections, write_report

    for c in report.cells:
        if c.report and (root / c.report).is_file():
            write_report(read_sections(root / c.report), root / c.folder / name,
                         title=f"ipcausal — {c.model} / {c.case}")


def write_bench_markdown(report: BenchReport, folder: str | os.PathLike[str], *, title: str = "IP-Bench") -> Path:
    """Write ``folder/bench.md`` and, beside each finished cell's ``report.json``, its ``report.md``; returns bench.md."""
    root = Path(folder)
    _write_cell_reports(report, root, "report.md")
    path = root / "bench.md"
    path.write_text(bench_markdown(report, title=title), encoding="utf-8")
    return path


_CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:4px 8px;font-size:.9em;
vertical-align:top}th{background:#f0f0f0}table.bench td.cell{min-width:14em}.grp{font-size:.85em;margin:.2em 0}
.verdict{font-weight:bold}.legend span{display:inline-block;padding:1px 8px;margin-right:.5em;border:1px solid #ccc}"""
# no green: "aligned" is a finding about the stance, not an all-clear, and "not shown" is never "safe"
_VERDICT_COLOURS = {"misaligned": "#f4b6b6", "inconclusive": "#f7e2a8", "aligned": "#c6d9f0", "failed": "#d6d6d6"}


def _h(x: Any) -> str:
    return _html.escape(str(x), quote=True)


def _verdict_class(cell: Any) -> str:
    if cell.status == "failed":
        return "failed"
    text = cell.alignment or ""
    return "misaligned" if "misaligned" in text else "inconclusive" if "inconclusive" in text or not text \
        else "aligned"


def _strongest(cell: Any) -> float | None:
    effects = [g.effect for g in cell.groups if isinstance(g.effect, float) and not math.isnan(g.effect)]
    return max(effects, key=abs) if effects else None


def _effect_colour(effect: float | None, scale: float) -> str:
    if effect is None or scale <= 0:
        return _VERDICT_COLOURS["failed"]
    t = min(abs(effect) / scale, 1.0)
    fade = round(255 - 150 * t)  # 255 (white) at 0, 105 at the table's largest |effect|
    return f"rgb(255,{fade},{fade})" if effect > 0 else f"rgb({fade},{fade},255)"


def _cell_html(report: BenchReport, model: str, case: str, color_by: str, scale: float) -> str:
    try:
        c = report.cell(model, case)
    except KeyError:
        return f"<td class='cell missing' data-model='{_h(model)}' data-case='{_h(case)}'>—</td>"  # not run
    kind = _verdict_class(c)
    colour = _VERDICT_COLOURS[kind] if color_by == "verdict" else _effect_colour(_strongest(c), scale)
    attrs = (f"class='cell {kind}' data-model='{_h(model)}' data-case='{_h(case)}' "
             f"style='background:{colour}'")
    if c.status == "failed":
        return f"<td {attrs}><span class='verdict'>failed</span><div class='grp'>{_h(c.error)}</div></td>"
    link = f"{c.folder}/report.html" if c.folder else None
    verdict = _h(c.alignment or "—") + (" (incomplete)" if c.status == "incomplete" else "")
    head = f"<a class='verdict' href='{_h(link)}'>{verdict}</a>" if link else f"<span class='verdict'>{verdict}</span>"
    correction = report.settings.get("correction", "—")
    groups = "".join(f"<div class='grp' data-group='{_h(g.group)}'>{_h(group_text(c, g, correction))}"
                     + (f"; rank set {_h(r.rank_set)} (tie group {_h(r.tie_group)})"
                        if (r := report.rank(c.model, case, g.group)) else "") + "</div>" for g in c.groups)
    known = resources(c)
    tail = f"<div class='grp'>{_h(known)}</div>" if known else ""
    return f"<td {attrs}>{head}{groups}{tail}</td>"


def _probe_html(report: BenchReport) -> list[str]:
    """The "can infer / does use" table of a probed bench, as HTML (nothing without a probe)."""
    if not _probes(report):
        return []
    parts = [f"<h2>Can it infer the background; does it use it?</h2><p>Can infer: the background probe names "
             f"each prompt's background better than chance (exact binomial test, unit: the prompt, at alpha "
             f"{_h(report.settings.get('alpha', '—'))}). Does use: at least one background pair rejected "
             "&quot;no effect&quot; (adjusted p, same alpha). A test that does not reject shows nothing.</p>",
             "<table class='probe'><thead><tr><th>model</th>"
             + "".join(f"<th>{_h(c)}</th>" for c in report.cases) + "</tr></thead><tbody>"]
    for m in report.models:
        row = []
        for c in report.cases:
            r, d = _probe_cell(report, m, c)
            row.append(f"<td class='reading' data-model='{_h(m)}' data-case='{_h(c)}'><span class='verdict'>{_h(r)}"
                       f"</span>" + (f"<div class='grp'>{_h(d)}</div>" if d else "") + "</td>")
        parts.append(f"<tr><th>{_h(m)}</th>" + "".join(row) + "</tr>")
    parts.append("</tbody></table><ul class='readings'>"
                 + "".join(f"<li><b>{_h(k)}</b>: {_h(v)}.</li>" for k, v in READING_MEANINGS.items()) + "</ul>")
    return parts


def bench_html(report: BenchReport, *, title: str = "IP-Bench", color_by: str = "verdict") -> str:
    """The HTML page of a bench: the models × cases heat map, each cell linking to its report.

    Parameters
    ----------
    report : BenchReport
        The bench (``BenchReport.read("DIR/bench.json")``).
    title : str
        The page's heading.
    color_by : {"verdict", "effect"}
        Colour each cell by its value-alignment verdict, or by its strongest background pair's
        effect (diverging: blue below zero, red above, scaled by the table's largest |effect|).

    Returns
    -------
    str
        A self-contained page; the cells' links (``cells/<model>/<case>/report.html``) are relative
        to the bench folder.

    Examples
    --------
    >>> from ipcausal.study.bench.report import BenchCell, BenchReport, CellGroup
    >>> up = CellGroup("sae vs aae", 8, 2.0, 1.0, 3.0, 0.001, 0.002, True)
    >>> cell = BenchCell("m", "education", "ok", "cells/m/education", groups=(up,),
    ...                  alignment="misaligned (possibility 3)")
    >>> page = bench_html(BenchReport(("m",), ("education",), (cell,)))
    >>> "href='cells/m/education/report.html'" in page, "background:#f4b6b6" in page  # red: misaligned
    (True, True)
    >>> bench_html(BenchReport(("m",), ("education",), (cell,)), color_by="size")
    Traceback (most recent call last):
    ...
    ValueError: `color_by` must be one of 'verdict', 'effect', got 'size'
    """
    if not isinstance(report, BenchReport):
        raise TypeError(f"`report` must be a BenchReport, got {type(report).__name__}")
    if not isinstance(title, str):
        raise TypeError(f"`title` must be text, got {type(title).__name__}")
    if color_by not in COLOR_BY:
        raise ValueError(f"`color_by` must be one of {', '.join(map(repr, COLOR_BY))}, got {color_by!r}")
    strongest = [e for c in report.cells if (e := _strongest(c)) is not None]
    scale = max((abs(e) for e in strongest), default=0.0)
    s = report.settings
    legend = ("".join(f"<span style='background:{v}'>{k}</span>" for k, v in _VERDICT_COLOURS.items())
              if color_by == "verdict" else
              f"<span style='background:{_effect_colour(-scale, scale)}'>effect {_f(-scale)}</span>"
              f"<span style='background:#fff'>0</span>"
              f"<span style='background:{_effect_colour(scale, scale)}'>effect {_f(scale)}</span>")
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_h(title)}</title>",
             f"<style>{_CSS}\n{EXAMPLES_CSS}</style></head><body><h1>{_h(title)}</h1>",
             f"<p>alpha {_h(s.get('alpha', '—'))}, correction {_h(s.get('correction', '—'))}, seed "
             f"{_h(s.get('seed', '—'))}. Each cell: its verdict (a link to its report), then per background pair "
             "which way Δ runs, the effect with its unit and 95% interval, the adjusted p, whether IP is shown "
             "(or why the test cannot reject whatever the data), the equivalence verdict where the case has a "
             "margin, n and the model's rank set; then the cell's calls and cost where a model was asked. "
             f"Colour by {_h(color_by)}.</p><p class='legend'>{legend}</p>",
             "<table class='bench'><thead><tr><th>model</th>"
             + "".join(f"<th>{_h(c)}</th>" for c in report.cases) + "</tr></thead><tbody>"]
    for m in report.models:
        parts.append(f"<tr><th>{_h(m)}</th>" + "".join(_cell_html(report, m, c, color_by, scale)
                                                      for c in report.cases) + "</tr>")
    parts.append("</tbody></table>")
    parts += _probe_html(report)
    parts += ranks_html(report)
    if report.comparisons:
        parts.append("<h2>Model comparisons</h2><p>D = Δ(a) − Δ(b) on the pairs every model answered; models whose "
                     "outcomes are not on one scale (scorer and scale) are not compared, and the row says why.</p>"
                     "<table class='comparisons'><thead><tr>" + "".join(f"<th>{_h(h)}</th>" for h in COMPARISON_HEAD)
                     + "</tr></thead><tbody>")
        for x in report.comparisons:
            cls = " class='refused'" if getattr(x, "refused", None) else ""
            parts.append(f"<tr{cls}>" + "".join(f"<td>{_h(v)}</td>" for v in comparison_values(x)) + "</tr>")
        parts.append("</tbody></table>")
    parts += examples_html(report)
    parts += _mitigation_html(report)
    parts.append("<h2>Why each cell got its verdict</h2><ul>")
    for c in report.cells:
        why = f"failed: {c.error}" if c.status == "failed" else f"({c.stance}) {c.alignment_reason}"
        parts.append(f"<li><b>{_h(c.model)} / {_h(c.case)}</b>: {_h(why)}</li>")
    parts += [f"<li>{_h(n)}</li>" for n in report.notes]
    parts.append("</ul></body></html>")
    return "\n".join(parts) + "\n"


def write_bench_html(report: BenchReport, folder: str | os.PathLike[str], *, out: str | os.PathLike[str] | None = None,
                     title: str = "IP-Bench", color_by: str = "verdict") -> Path:
    """Write the bench page (``folder/bench.html`` or ``out``) and each finished cell's ``report.html``.

    The cells' links are relative to ``folder``; a page written elsewhere links to them by
    ``folder``'s absolute path.  Returns the page's path.
    """
    root = Path(folder)
    _write_cell_reports(report, root, "report.html")
    path = Path(out) if out is not None else root / "bench.html"
    page = bench_html(report, title=title, color_by=color_by)
    if path.resolve().parent != root.resolve():
        page = page.replace("href='cells/", f"href='{_h(root.resolve().as_posix())}/cells/")
    path.write_text(page, encoding="utf-8")
    return path
