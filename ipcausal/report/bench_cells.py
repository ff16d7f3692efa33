"""What a bench cell, its rank sets and its comparisons say on the page, in words that say what they are.

Shared by ``bench.md`` and ``bench.html`` (:mod:`ipcausal.report.bench`), from the BenchReport alone:

* per background pair, which way Δ runs (``Δ = score(b) − score(a)``), the effect with its unit,
  the *adjusted* p labelled with its correction, "IP present" / "not shown" or, where the test
  can never reject, "cannot reject whatever the data (n informative pairs; needs ≥ k)", the
  equivalence column as a verdict ("equivalent within ±ε: yes / no / —"), the MDE where the
  cell carries one, and the calls and cost only where they are known;
* per case and background pair, the models' simultaneous rank sets (by the size of their effect)
  and tie groups, and how to read them;
* a comparison refused because the two models' outcomes are not on one scale, with the reason.
"""

from __future__ import annotations

import math
from typing import Any

from ipcausal.report._common import esc
from ipcausal.report.examples import example_cards_html, example_cards_markdown
from ipcausal.study.bench.report import BenchReport

__all__ = ["f", "ip_text", "equivalence_text", "group_text", "resources", "rank_table", "RANK_NOTE", "ranks_markdown",
           "ranks_html", "comparison_values", "examples_markdown", "examples_html", "COMPARISON_HEAD"]

#: How to read the rank sets (bench.md, bench.html, docs/bench.md).
RANK_NOTE = ("Rank sets: each model's rank by the size |mean Δ| of its effect (1 = personalizes most, either way), "
             "all sets holding at once with 95 % confidence (simultaneous intervals of every pairwise difference "
             "and sum of the models' mean effects; ipcausal.stats.ranks). A set of one number is a rank the data "
             "fix; 1–3 means the data cannot tell first from third. Models that share a tie-group letter cannot "
             "be ordered by the data.")

COMPARISON_HEAD = ("case", "group", "a", "b", "n", "difference D = Δ(a) − Δ(b)", "95% CI", "p (the pair's own test)",
                   "step-down adjusted p", "Holm adjusted p")


def f(x: Any, digits: int = 3) -> str:
    """A number for a table (``—`` for none or NaN)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def ip_text(g: Any) -> str:
    """``present``, ``not shown``, or why the test can never reject."""
    if g.reject:
        return "present"
    if getattr(g, "cannot_reject", None):
        return f"cannot reject whatever the data ({g.cannot_reject})"
    return "not shown"


def equivalence_text(cell: Any, g: Any) -> str:
    """``yes`` (shown within ±ε), ``no`` (an effect shown), ``—`` (neither, or no margin)."""
    return {"equivalent": "yes", "reject": "no"}.get(str(g.equivalence), "—")


def _equivalence_head(cell: Any) -> str:
    margin = getattr(cell, "margin", None)
    return f"equivalent within ±{margin:g}" if margin is not None else "equivalent within ±ε"


def group_text(cell: Any, g: Any, correction: str) -> str:
    """One background pair of a cell in words (the heat map's cell lines)."""
    unit = f" ({cell.unit})" if getattr(cell, "unit", None) else ""
    parts = [f"{g.group}: {g.direction or 'Δ'}" if getattr(g, "direction", "") else g.group,
             f"effect {f(g.effect)}{unit} [{f(g.ci_low)}, {f(g.ci_high)}]",
             f"adjusted p ({correction}) {f(g.pvalue_adjusted)}", f"IP {ip_text(g)}"]
    if g.equivalence is not None:
        parts.append(f"{_equivalence_head(cell)}: {equivalence_text(cell, g)}")
    if getattr(g, "d_z", None) is not None:
        parts.append(f"d_z {f(g.d_z, 2)}")
    if getattr(g, "mde", None) is not None:
        parts.append(f"MDE {f(g.mde)} at 80 % power")
    parts.append(f"n {g.n}")
    return "; ".join(parts)


def resources(cell: Any) -> str:
    """``calls 16, cost 0.0021`` — only what is known (a released cell asked no model: nothing)."""
    known = [f"{name} {f(v)}" for name, v in (("calls", cell.calls), ("cost", cell.cost)) if v is not None]
    return ", ".join(known)


def rank_table(report: BenchReport, case: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a case's rank sets: one row per background pair and model, best first."""
    rows = []
    groups = list(dict.fromkeys(r.group for r in report.ranks if r.case == case))
    for group in groups:
        mine = sorted((r for r in report.ranks if r.case == case and r.group == group),
                      key=lambda r: (r.rank_low, r.rank_high, -abs(r.effect)))
        rows += [[group, r.model, f(r.effect), r.rank_set, r.tie_group, str(r.n)] for r in mine]
    return ["group", "model", "mean Δ", "rank set (1 = largest |effect|)", "tie group", "n"], rows


def ranks_markdown(report: BenchReport, case: str) -> list[str]:
    header, rows = rank_table(report, case)
    if not rows:
        return []
    return (["", RANK_NOTE, "", "| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
            + ["| " + " | ".join(r) + " |" for r in rows])


_h = esc


def ranks_html(report: BenchReport) -> list[str]:
    cases = [c for c in report.cases if any(r.case == c for r in report.ranks)]
    if not cases:
        return []
    parts = [f"<h2>Rank sets: which models personalize more?</h2><p>{_h(RANK_NOTE)}</p>"]
    for case in cases:
        header, rows = rank_table(report, case)
        parts.append(f"<h3>{_h(case)}</h3><table class='ranks'><thead><tr>"
                     + "".join(f"<th>{_h(h)}</th>" for h in header) + "</tr></thead><tbody>"
                     + "".join("<tr>" + "".join(f"<td>{_h(v)}</td>" for v in r) + "</tr>" for r in rows)
                     + "</tbody></table>")
    return parts


def comparison_values(x: Any) -> tuple[str, ...]:
    """A comparison row's cells; a refused one says why in place of the numbers."""
    if getattr(x, "refused", None):
        return (x.case, "—", x.model_a, x.model_b, "—", f"refused: {x.refused}", "—", "—", "—", "—")
    return (x.case, x.group, x.model_a, x.model_b, str(x.n), f(x.difference), f"[{f(x.ci_low)}, {f(x.ci_high)}]",
            f(x.pvalue), f(x.pvalue_adjusted), f(x.pvalue_holm))


_EXAMPLE_NOTE = ("Example pairs: per cell, of its background pair with the largest |effect|, the pair with the largest "
                 "|Δ| (similarity: the lowest) and one drawn at random (seed 0); every cell's report has more.")


def examples_markdown(report: BenchReport, case: str) -> list[str]:
    cells = [c for c in report.cells if c.case == case and getattr(c, "examples", ())]
    if not cells:
        return []
    out = ["", _EXAMPLE_NOTE, ""]
    for c in cells:
        out += [f"**{c.model} / {c.case}**", ""] + example_cards_markdown(c.examples)
    return out


def examples_html(report: BenchReport) -> list[str]:
    cells = [c for c in report.cells if getattr(c, "examples", ())]
    if not cells:
        return []
    parts = [f"<h2>Example pairs</h2><p>{_h(_EXAMPLE_NOTE)}</p>"]
    for c in cells:
        parts.append(f"<details><summary><b>{_h(c.model)} / {_h(c.case)}</b></summary>"
                     + example_cards_html(c.examples, heading="h4") + "</details>")
    return parts
