"""Markdown and self-contained HTML reports (parsed with html.parser)."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import numpy as np
import pytest

import ipcausal
from ipcausal.cli import main
from ipcausal.report import Section, format_html, format_markdown, format_text, write_report


class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.imgs: list[str] = []
        self.external: list[str] = []
        self.text: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag not in ("img", "meta", "br"):
            self.stack.append(tag)
        if tag == "img":
            self.imgs.append(a.get("src", ""))
        for key in ("src", "href"):
            v = a.get(key)
            if v and not (v.startswith("data:") or v.startswith("#")):
                self.external.append(v)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"unbalanced </{tag}>, open: {self.stack[-3:]}"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def interval_pairs(n=30, seed=1):
    rng = np.random.default_rng(seed)
    recs = []
    for k in range(n):
        for a, b, shift in (("sae", "esl", 0.0), ("sae", "aae", -1.0), ("esl", "aae", -1.0)):
            s = float(rng.integers(2, 6))
            recs.append({"pair_id": f"{k}{a}{b}", "background_i": a, "background_j": b, "x_i": "p", "x_j": "p'",
                         "score_i": s, "score_j": s + shift + float(rng.integers(-1, 2)), "model": "m1"})
    return ipcausal.PairSet.from_records(recs)


def similarity_pairs(n=25):
    return ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q",
         "similarity": [0.5, 0.7, 0.9, 1.0][k % 4]} for k in range(n))


@pytest.fixture(scope="module")
def sections():
    a, b = interval_pairs(), similarity_pairs()
    return [
        Section("Essays <&>", ipcausal.test(a, rng=0), a, {"requested": 180, "completed": 180, "failed": 0,
                                                           "unparseable": 0}, {"model": "m1", "max_tokens": 64}),
        Section("Culture", ipcausal.test(b), b, {"requested": 50, "completed": 50}),
    ]


def test_html_is_self_contained_and_complete(sections):
    page = format_html(sections, title="demo")
    p = Collect()
    p.feed(page)
    p.close()
    assert page.startswith("<!DOCTYPE html>") and p.stack == []
    assert p.external == []  # no file or network reference
    # interval: distribution, null, per-background/PB, matrix; similarity: distribution, null, matrix
    assert len(p.imgs) == 7 and all(s.startswith("data:image/png;base64,") for s in p.imgs)
    text = " ".join(p.text)
    for needle in ("Essays <&>", "sae vs esl", "Personalization bias", "Counts", "requested", "Model and settings",
                   "max_tokens", "bonferroni", "implicit personalization", "median(similarity) = 0.8"):
        assert needle in text, needle
    assert "<&>" not in page.replace("Essays &lt;&amp;&gt;", "")  # escaped


def test_markdown(sections):
    md = format_markdown(sections)
    assert md.startswith("# ipcausal report") and "## Culture" in md
    assert "| model | pair | n | test | method | mean Δ |" in md and "**Counts**" in md
    assert "data:image" not in md
    assert md.count("data:image/png;base64,") == 0
    with_plots = format_markdown(sections[1], plots=True)
    assert with_plots.count("data:image/png;base64,") == 3


def test_bare_report_and_text_kept():
    rep = ipcausal.test(similarity_pairs())
    assert "<table>" in format_html(rep)
    assert format_text(rep) == str(rep)


def test_write_report_formats(sections, tmp_path):
    for suffix in ("html", "md", "json", "txt"):
        p = write_report(sections, tmp_path / f"r.{suffix}")
        assert p.stat().st_size > 100
    payload = json.loads((tmp_path / "r.json").read_text())
    assert payload[0]["counts"]["requested"] == 180 and payload[0]["report"]["ip_detected"] is True
    with pytest.raises(ValueError, match="`path` must end in"):
        write_report(sections, tmp_path / "r.pdf")
    with pytest.raises(TypeError, match="`sections` must be"):
        write_report([], tmp_path / "r.html")
    with pytest.raises(TypeError, match="`report` must be an ipcausal Report"):
        Section("x", {"not": "a report"})
    with pytest.raises(ValueError, match="`title` must be non-empty"):
        Section(" ", sections[0].report)


def test_cli_score_then_report(tmp_path):
    ps = ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q",
         "options": json.dumps(["Agree", "Disagree"]), "y_i": "Agree", "y_j": ["Agree", "Option 2", "??"][k % 3]}
        for k in range(12))
    src = ps.write(tmp_path / "answered.jsonl")
    assert main(["score", str(src), "--scorer", "choice", "-o", str(tmp_path / "scored.jsonl")]) == 0
    meta = json.loads((tmp_path / "scored.meta.json").read_text())
    assert meta["counts"]["unparseable"] == 4 and (tmp_path / "scored.dropped.jsonl").is_file()
    assert main(["report", str(tmp_path / "scored.jsonl"), "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "unparseable" in page and "data:image/png" in page
    assert main(["report", str(tmp_path / "nothing"), "-o", str(tmp_path / "r.html")]) == 2
