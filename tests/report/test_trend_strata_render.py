"""The trend row and the per-cue table in str(report), Markdown and HTML (issue 21)."""

from __future__ import annotations

import numpy as np
import pytest

import ipcausal
from ipcausal.report import Section, format_html, format_markdown
from ipcausal.study.text import format_p

LEVELS = ["sae", "esl_light", "esl_heavy"]


def _report() -> ipcausal.Report:
    rng = np.random.default_rng(5)
    recs = []
    for p in range(16):
        s = {b: float(rng.integers(1, 6)) + k for k, b in enumerate(LEVELS)}
        for a, b in (("sae", "esl_light"), ("sae", "esl_heavy"), ("esl_light", "esl_heavy")):
            recs.append({"pair_id": f"{p}:{a}-{b}", "prompt_id": f"p{p}", "background_i": a, "background_j": b,
                         "x_i": "q", "x_j": "q", "score_i": s[a], "score_j": s[b],
                         "cue": "spelling" if p % 2 else "vocabulary"})
    return ipcausal.test(ipcausal.PairSet.from_records(recs), design=ipcausal.Design(trend=LEVELS, strata="cue"), rng=0,
                         n_resamples=999,
                         cluster="prompt_id")


@pytest.fixture(scope="module")
def report() -> ipcausal.Report:
    return _report()


def test_text_shows_the_trend_row_and_the_cue_table(report) -> None:
    text = str(report)
    t = report.trend[0]
    assert f"trend across sae < esl_light < esl_heavy" in text and f"p = {format_p(t.pvalue)}" in text
    assert "pooled, stratified by cue" in text and "sae vs esl_light by cue" in text
    assert "heterogeneity test not run: not every prompt carries every cue" in text


def test_html_and_markdown_show_the_rows(report) -> None:
    page = format_html(Section("ordered", report))
    assert "<th>esl_light vs esl_heavy by cue</th>" in page and "sae &lt; esl_light &lt; esl_heavy" in page
    md = format_markdown(Section("ordered", report))
    for out in (page, md):
        assert "Trend across the ordered levels" in out
        assert "Per cue" in out and "pooled, stratified by cue" in out and "esl_light vs esl_heavy by cue" in out
        assert format_p(report.trend[0].pvalue) in out and "heterogeneity" in out


def test_without_the_parts_no_rows() -> None:
    ps = ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q", "score_i": 1,
         "score_j": k % 3} for k in range(12))
    r = ipcausal.test(ps)
    assert "Trend across" not in format_html(r) and "Per cue" not in format_markdown(r) and "trend" not in str(r)
