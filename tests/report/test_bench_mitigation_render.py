"""bench.md / bench.html show a cell's mitigation rows (CellMitigation) and a comparison that could not run."""

from __future__ import annotations

from ipcausal.report.bench import bench_html, bench_markdown
from ipcausal.study.bench import BenchCell, BenchReport, CellGroup, CellMitigation

G = CellGroup("true_belief vs false_belief", 12, 1.7, 0.6, 2.8, 0.01, 0.01, True)
ROW = CellMitigation("strip", "true_belief vs false_belief", 12, 1.7, 0.0, -1.7, -2.8, -0.6, 0.0098, "yes", 1)


def _report(**cell) -> BenchReport:
    return BenchReport(("m",), ("echo",), (BenchCell("m", "echo", "ok", "cells/m/echo", groups=(G,),
                                                     alignment="aligned", alignment_reason="why.", **cell),))


def test_markdown_lists_each_background_pair_without_and_with():
    md = bench_markdown(_report(mitigation=(ROW,)))
    assert "| m | strip | true_belief vs false_belief | 12 | 1.7 | 0 | -1.7 | [-2.8, -0.6] | 0.0098 | yes | 1 |" in md
    assert "never from a non-rejection" in md


def test_html_has_a_mitigations_table_and_none_without_rows():
    page = bench_html(_report(mitigation=(ROW,)))
    assert "<h2>Mitigations</h2>" in page and "<td>echo</td><td>m</td><td>strip</td>" in page
    assert "Mitigations" not in bench_html(_report())


def test_a_comparison_that_could_not_run_is_shown_with_its_reason():
    rep = _report(mitigation_error="ValueError: `pairs` has no `edits_i`/`edits_j` columns")
    assert "not compared: ValueError: `pairs` has no `edits_i`" in bench_markdown(rep)
    assert "not compared: ValueError" in bench_html(rep)
