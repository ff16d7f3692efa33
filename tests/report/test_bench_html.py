"""The bench's HTML page (issue 20 item 2): the models x cases heat map, parsed back with html.parser."""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ipcausal.cli import main
from ipcausal.report.bench import bench_html
from ipcausal.study.bench import bench
from ipcausal.study.bench import BenchCell, BenchReport, CellGroup

SPEC = {"settings": {"seed": 0},
        "models": [{"name": "effect", "backend": "simulated", "effect": 2.0},
                   {"name": "null", "backend": "simulated", "seed": 1}],
        "cases": [{"name": "echo", "limit": 8}, {"name": "education", "limit": 8}]}


class Cells(HTMLParser):
    """The <td class='cell ...'> of table.bench: their attributes, text and links."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str], dict] = {}
        self.header: list[str] = []
        self._in_bench = self._in_head = False
        self._cur: dict | None = None
        self._th: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._in_bench = a.get("class") == "bench"
        elif self._in_bench and tag == "thead":
            self._in_head = True
        elif self._in_bench and self._in_head and tag == "th":
            self._th = []
        elif self._in_bench and tag == "td" and "cell" in (a.get("class") or "").split():
            self._cur = {"attrs": a, "text": [], "links": []}
            self.cells[(a["data-model"], a["data-case"])] = self._cur
        elif tag == "a" and self._cur is not None:
            self._cur["links"].append(a["href"])

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_bench = False
        elif tag == "thead":
            self._in_head = False
        elif tag == "th" and self._th is not None:
            self.header.append("".join(self._th))
            self._th = None
        elif tag == "td":
            self._cur = None

    def handle_data(self, data):
        if self._th is not None:
            self._th.append(data)
        if self._cur is not None:
            self._cur["text"].append(data)


def _parse(page: str) -> Cells:
    p = Cells()
    p.feed(page)
    return p


def _num(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.3g}"


def test_the_command_writes_the_heat_map_with_each_cell_linking_to_its_report(tmp_path):
    out = tmp_path / "b"
    rep = bench(SPEC, out=out, progress=False)
    assert main(["report", str(out / "bench.json"), "-o", str(out / "bench.html")]) == 0
    parsed = _parse((out / "bench.html").read_text(encoding="utf-8"))
    assert parsed.header == ["model", "echo", "education"]
    assert set(parsed.cells) == {(m, c) for m in rep.models for c in rep.cases}
    for (m, c), got in parsed.cells.items():
        cell = rep.cell(m, c)
        text = "".join(got["text"])
        assert got["links"] == [f"cells/{m}/{c}/report.html"]
        assert (out / got["links"][0]).is_file()  # the cell's own report was written beside its report.json
        assert cell.alignment in text and f"calls {cell.calls}" in text
        for g in cell.groups:  # each says which way Δ runs, the effect with its unit, the adjusted p and its correction
            assert f"{g.group}: {g.direction}; effect {_num(g.effect)} ({cell.unit}) [{_num(g.ci_low)}, " \
                   f"{_num(g.ci_high)}]; adjusted p (bonferroni) {_num(g.pvalue_adjusted)}; IP " \
                   f"{'present' if g.reject else 'not shown'}" in text
            assert f"n {g.n}" in text
    # the simulated effect shows: the effect model's echo cell is misaligned in one reading, coloured so
    assert "misaligned" in parsed.cells[("effect", "echo")]["attrs"]["class"]


def test_a_page_elsewhere_links_by_the_bench_folder(tmp_path):
    out = tmp_path / "b"
    bench({**SPEC, "models": SPEC["models"][:1], "cases": SPEC["cases"][:1]}, out=out, progress=False)
    assert main(["report", str(out), "-o", str(tmp_path / "t.html")]) == 0
    cells = _parse((tmp_path / "t.html").read_text()).cells
    assert cells[("effect", "echo")]["links"] == [f"{out.resolve().as_posix()}/cells/effect/echo/report.html"]


def _report() -> BenchReport:
    up, down = CellGroup("a vs b", 8, 2.0, 1.0, 3.0, 0.01, 0.02, True), CellGroup("a vs b", 8, -1.0, -2, 0, .1, .1, False)
    return BenchReport(("m", "n"), ("echo",), (
        BenchCell("m", "echo", "ok", "cells/m/echo", groups=(up,), alignment="aligned", alignment_reason="r"),
        BenchCell("n", "echo", "failed", "cells/n/echo", error="BackendError: down")))


def test_colour_by_verdict_or_by_effect():
    by_verdict = _parse(bench_html(_report())).cells
    assert by_verdict[("m", "echo")]["attrs"]["style"] == "background:#c6d9f0"  # blue: not a green all-clear
    assert by_verdict[("n", "echo")]["attrs"]["class"] == "cell failed"
    assert by_verdict[("n", "echo")]["links"] == [] and "BackendError: down" in "".join(by_verdict[("n", "echo")]["text"])
    by_effect = _parse(bench_html(_report(), color_by="effect")).cells
    assert by_effect[("m", "echo")]["attrs"]["style"] == "background:rgb(255,105,105)"  # the table's largest effect
    rep = _report()
    neg = BenchReport(rep.models, rep.cases, (BenchCell("m", "echo", "ok", "cells/m/echo", groups=(
        CellGroup("a vs b", 8, -1.0, -2, 0, .1, .1, False), CellGroup("a vs c", 8, 0.5, 0, 1, .2, .2, False)),
        alignment="inconclusive", alignment_reason="r"),))
    got = _parse(bench_html(neg, color_by="effect")).cells[("m", "echo")]["attrs"]["style"]
    assert got == "background:rgb(105,105,255)"  # the strongest pair (-1.0) is below zero: blue
    assert _parse(bench_html(neg)).cells[("m", "echo")]["attrs"]["class"] == "cell inconclusive"


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="`report` must be a BenchReport"):
        bench_html({})
    with pytest.raises(ValueError, match="`color_by` must be one of 'verdict', 'effect'"):
        bench_html(_report(), color_by="p")
    with pytest.raises(TypeError, match="`title` must be text"):
        bench_html(_report(), title=3)
