"""A :class:`~ipcausal.study.benchreport.BenchReport` as Markdown: the models × cases table (issue 20 item 2).

``bench.md`` opens with one row per model and one column per case (the cell's verdict, how many
background pairs rejected "no effect", a link to the cell's own report), then per case the rows of
``bench.csv`` (effect, interval, adjusted p, verdict, n, calls, cost) and the model comparisons
(difference, interval, p, step-down and Holm adjusted p), and ends with each cell's alignment
reason in words and the failed cells with their errors.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from ipcausal.study.benchreport import BenchReport

__all__ = ["bench_markdown", "write_bench_markdown"]


def _f(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


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
    >>> from ipcausal.study.benchreport import BenchCell, BenchReport, CellGroup
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
    for case in report.cases:
        lines += [f"## {case}", "", "| model | group | n | effect | 95% CI | p | adjusted p | IP | equivalence | "
                  "calls | cost |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for c in report.cells:
            if c.case != case:
                continue
            for g in c.groups:
                lines.append(f"| {c.model} | {g.group} | {g.n} | {_f(g.effect)} | [{_f(g.ci_low)}, {_f(g.ci_high)}] "
                             f"| {_f(g.pvalue)} | {_f(g.pvalue_adjusted)} | {'present' if g.reject else 'not shown'} "
                             f"| {g.equivalence or '—'} | {_f(c.calls)} | {_f(c.cost)} |")
            if not c.groups:
                lines.append(f"| {c.model} | {c.status} | — | — | — | — | — | — | — | — | — |")
        comps = [x for x in report.comparisons if x.case == case]
        if comps:
            lines += ["", "Model comparisons (D = Δ(a) − Δ(b) on the pairs every model answered):", "",
                      "| group | a | b | n | difference | 95% CI | p | step-down p | Holm p |",
                      "|---|---|---|---|---|---|---|---|---|"]
            for x in comps:
                lines.append(f"| {x.group} | {x.model_a} | {x.model_b} | {x.n} | {_f(x.difference)} | "
                             f"[{_f(x.ci_low)}, {_f(x.ci_high)}] | {_f(x.pvalue)} | {_f(x.pvalue_adjusted)} | "
                             f"{_f(x.pvalue_holm)} |")
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


def write_bench_markdown(report: BenchReport, folder: str | os.PathLike[str], *, title: str = "IP-Bench") -> Path:
    """Write ``folder/bench.md`` and, beside each finished cell's ``report.json``, its ``report.md``; returns bench.md."""
    from ipcausal.report import read_sections, write_report

    root = Path(folder)
    for c in report.cells:
        if c.report and (root / c.report).is_file():
            write_report(read_sections(root / c.report), root / c.folder / "report.md",
                         title=f"ipcausal — {c.model} / {c.case}")
    path = root / "bench.md"
    path.write_text(bench_markdown(report, title=title), encoding="utf-8")
    return path
