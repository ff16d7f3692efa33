"""The probe's "can infer / does use" table in bench.md and bench.html (issue 21 item 1)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from ipcausal.report.bench import bench_html, bench_markdown
from ipcausal.study.bench import READING_MEANINGS, CellProbe
from ipcausal.study.bench import BenchCell, BenchReport, CellGroup

UP = CellGroup("a vs b", 20, 1.5, 0.5, 2.5, 0.001, 0.002, True)
FLAT = CellGroup("a vs b", 20, 0.1, -0.4, 0.6, 0.7, 0.7, False)


def _probe(correct: int, use: bool) -> CellProbe:
    from ipcausal.stats.binomial import binomial_test

    r = binomial_test(correct, 20, 0.5, alternative="greater")
    can = r.pvalue <= 0.05
    reading = {(True, True): "infers and uses", (True, False): "infers; use not shown",
               (False, True): "use shown; inference not shown", (False, False): "neither shown"}[(can, use)]
    return CellProbe(correct, 20, 0, 0, correct / 20, 0.5, r.pvalue, r.ci_low, r.ci_high, can_infer=can,
                     does_use=use, reading=reading, calls=20, sent=20)


def _report() -> BenchReport:
    cells = (BenchCell("m1", "echo", "ok", "cells/m1/echo", groups=(UP,), alignment="x", probe=_probe(20, True)),
             BenchCell("m1", "age", "ok", "cells/m1/age", groups=(FLAT,), alignment="x", probe=_probe(19, False)),
             BenchCell("m2", "echo", "ok", "cells/m2/echo", groups=(UP,), alignment="x", probe=_probe(10, True)),
             BenchCell("m2", "age", "ok", "cells/m2/age", groups=(FLAT,), alignment="x"))
    return BenchReport(("m1", "m2"), ("echo", "age"), cells, settings={"alpha": 0.05})


def test_markdown_has_the_models_by_cases_reading_table():
    md = bench_markdown(_report())
    lines = md.splitlines()
    k = lines.index("## Can it infer the background; does it use it?")
    assert lines[k + 2] == "| model | echo | age |"
    assert lines[k + 4].startswith("| m1 | infers and uses (accuracy 1 vs chance 0.5, p 9.5e-07, n 20) | "
                                   "infers; use not shown (accuracy 0.95")
    assert lines[k + 5].startswith("| m2 | use shown; inference not shown (accuracy 0.5 vs chance 0.5, p 0.59")
    assert lines[k + 5].endswith("| not probed |")
    assert all(f"- **{r}**: {m}." in md for r, m in READING_MEANINGS.items())


def test_no_probe_no_table():
    rep = BenchReport(("m",), ("echo",), (BenchCell("m", "echo", "ok", "cells/m/echo", groups=(UP,)),))
    assert "Can it infer" not in bench_markdown(rep) and "class='probe'" not in bench_html(rep)


class Readings(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str], list[str]] = {}
        self._cur: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and a.get("class") == "reading":
            self._cur = self.cells.setdefault((a["data-model"], a["data-case"]), [])

    def handle_endtag(self, tag):
        if tag == "td":
            self._cur = None

    def handle_data(self, data):
        if self._cur is not None:
            self._cur.append(data)


def test_html_has_the_reading_table():
    p = Readings()
    p.feed(bench_html(_report()))
    assert p.cells[("m1", "echo")][0] == "infers and uses"
    assert p.cells[("m2", "echo")][0] == "use shown; inference not shown"
    assert p.cells[("m2", "age")] == ["not probed"]
    assert "accuracy 0.95 vs chance 0.5" in p.cells[("m1", "age")][1]


def test_a_failed_probe_is_shown_as_failed():
    import math

    nan = math.nan
    bad = CellProbe(0, 0, 0, 0, nan, nan, nan, nan, nan, error="BackendError: down")
    rep = BenchReport(("m",), ("echo",), (BenchCell("m", "echo", "ok", "cells/m/echo", groups=(UP,), probe=bad),))
    assert "| m | probe failed (BackendError: down) |" in bench_markdown(rep)
    assert BenchReport.from_dict(rep.to_dict()).cells[0].probe.error == "BackendError: down"


@pytest.mark.parametrize("render", [bench_markdown, bench_html])
def test_the_renderers_still_check_their_input(render):
    with pytest.raises(TypeError, match="`report` must be a BenchReport"):
        render({"cells": []})
