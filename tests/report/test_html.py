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
        Section("Essays <&>", ipcausal.test(a, rng=0), {"requested": 180, "completed": 180, "failed": 0,
                                                        "unparseable": 0}, {"model": "m1", "max_tokens": 64}),
        Section("Culture", ipcausal.test(b), {"requested": 50, "completed": 50}),
    ]


def test_html_is_self_contained_and_complete(sections):
    page = format_html(sections, title="demo")
    p = Collect()
    p.feed(page)
    p.close()
    assert page.startswith("<!DOCTYPE html>") and p.stack == []
    assert p.external == []  # no file or network reference
    # interval (3 background pairs): distribution, null, per-background/PB, matrix; similarity (one pair):
    # distribution, null — no matrix for a single pair, its p is in the table
    assert len(p.imgs) == 6 and all(s.startswith("data:image/png;base64,") for s in p.imgs)
    text = " ".join(p.text)
    for needle in ("Essays <&>", "sae vs esl", "Personalization bias", "Counts", "requested", "Model and settings",
                   "max_tokens", "bonferroni", "implicit personalization", "median(similarity) = 0.8",
                   "Example pairs", "largest |Δ|", "lowest similarity"):
        assert needle in text, needle
    assert "<&>" not in page.replace("Essays &lt;&amp;&gt;", "")  # escaped


def test_markdown(sections):
    md = format_markdown(sections)
    assert md.startswith("# ipcausal report") and "## Culture" in md
    assert "| model | pair | n | test | method | mean Δ |" in md and "**Counts**" in md
    assert "data:image" not in md
    assert md.count("data:image/png;base64,") == 0
    with_plots = format_markdown(sections[1], plots=True)
    assert with_plots.count("data:image/png;base64,") == 2


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


def test_report_round_trip_and_render_later(sections, tmp_path):
    from ipcausal.report import read_sections

    for sec in sections:
        path = sec.report.write(tmp_path / "r.json")
        back = ipcausal.Report.read(path)
        assert back.to_dict() == sec.report.to_dict()
        assert back == sec.report or str(back) == str(sec.report)
        assert format_html(Section("x", back)) == format_html(Section("x", sec.report))
    write_report(sections, tmp_path / "both.json")
    again = read_sections(tmp_path / "both.json")
    assert [s.title for s in again] == ["Essays <&>", "Culture"] and again[0].counts["requested"] == 180
    assert [s.report.to_dict() for s in again] == [s.report.to_dict() for s in sections]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "ipcausal.report", "schema_version": 99, "report": {}}))
    with pytest.raises(ValueError, match="schema version 99 is newer"):
        ipcausal.Report.read(bad)
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON report"):
        ipcausal.Report.read(bad)
    with pytest.raises(ValueError, match="is a directory"):
        ipcausal.Report.read(tmp_path)


def test_cli_test_then_report_renders_the_written_numbers(tmp_path, capsys):
    src = interval_pairs().write(tmp_path / "scored.jsonl")
    assert main(["test", str(src), "--method", "monte-carlo", "--resamples", "3000", "--seed", "5",
                 "-o", str(tmp_path / "r.json")]) == 0
    capsys.readouterr()
    written = json.loads((tmp_path / "r.json").read_text())["report"]
    assert main(["report", str(tmp_path / "r.json"), "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    from ipcausal.study.text import format_p

    for g in written["groups"]:
        assert f"<td>{format_p(g['pvalue'])}</td>" in page and f"<td>{format_p(g['pvalue_adjusted'])}</td>" in page
    # rendering did not test again: a report with a changed p renders the changed p
    written["groups"][0]["pvalue"] = 0.123456
    (tmp_path / "r2.json").write_text(json.dumps({"schema": "ipcausal.report", "schema_version": 2,
                                                  "report": written}))
    assert main(["report", str(tmp_path / "r2.json"), "-o", str(tmp_path / "r2.html")]) == 0
    assert "<td>0.1235</td>" in (tmp_path / "r2.html").read_text()


def test_null_summary_is_the_route_that_gave_p():
    from ipcausal.stats import _kernels as K
    from ipcausal.stats.null import null_distribution

    # exact lattice: the pmf is the DP's and its tail is the exact p
    d = np.r_[np.ones(30), -np.ones(12), 2 * np.ones(8), np.zeros(3)]
    res = ipcausal.permutation_test(d, method="exact")
    null = null_distribution(d, res)
    x, w = np.array(null.x), np.array(null.weights)
    assert res.method == "exact-lattice" and null.kind == "pmf" and "lattice DP" in null.label
    assert w.sum() == pytest.approx(1.0)
    assert w[np.abs(x) >= abs(res.statistic) - 1e-12].sum() == pytest.approx(res.pvalue, rel=1e-9)
    # Monte Carlo: the replayed draws are the kernel's own (same count of extreme draws)
    rng = np.random.default_rng(4)
    d = rng.normal(0.1, 1.0, 70)
    res = ipcausal.permutation_test(d, method="monte-carlo", n_resamples=4096, rng=9)
    from ipcausal.stats.null import _replay

    a = np.abs(d) / np.abs(d).max()
    t = _replay(a, res.seed, 4096)
    b = int(np.sum(np.abs(t) >= abs(float(np.sign(d) @ a)) - 1e-9 * a.sum()))
    assert (b + 1) / 4097 == pytest.approx(res.pvalue, abs=1e-15)
    assert null_distribution(d, res).label.startswith("first 4,096 of the 4,096 sign vectors")
    assert K.CHUNK == 2048


def test_plain_words_counts_and_direction_use_the_real_names():
    from ipcausal.report import count_notes, direction_text, plain_lines

    ps = ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": "q", "x_j": "q",
         "similarity": 0.91} for k in range(20))
    r = ipcausal.test(ps)
    (line,) = plain_lines(r)
    assert line.startswith("answers to US- and UK-worded prompts were 91 % similar (median over 20 pairs)")
    assert "no evidence of implicit personalization at α = 0.05" in line and "no IP" not in line
    low = ipcausal.test(ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": "q", "x_j": "q",
         "similarity": 0.2} for k in range(20)))
    assert "evidence of implicit personalization at α = 0.05: the similarity is below the null median 0.8" \
        in plain_lines(low)[0] and "no evidence" not in plain_lines(low)[0]
    r2 = ipcausal.test(interval_pairs())
    assert "background_a" not in direction_text(r2) and "Δ = score(esl) − score(sae)" in direction_text(r2)
    one = [line for line in plain_lines(r2) if line.startswith("m1: responses to aae prompts scored")]
    assert one and all("mean Δ = score(aae) − score(" in x for x in one)
    notes = count_notes({"pairs": 10, "unparseable": 3, "excluded": 3, "failed": 0})
    assert [n.split(":")[0] for n in notes] == ["unparseable 3", "excluded 3"]


def test_html_explains_itself(tmp_path):
    from ipcausal.report import DEMO_NOTE

    r = ipcausal.test(interval_pairs())
    sec = Section("edu", r, {"pairs": 90, "unparseable": 6, "excluded": 6}, {})
    page = format_html(sec, title="demo", notes=(DEMO_NOTE,))
    c = Collect()
    c.feed(page)
    text = " ".join(c.text)
    assert "plumbing" in DEMO_NOTE.lower() or "pipeline works" in DEMO_NOTE
    assert DEMO_NOTE in text and "In plain words" in text
    assert "unparseable 6: answers the scorer could not read" in text and "excluded 6: pairs left out" in text
    assert "background_a" not in text and "background_b" not in text
    assert "((model not given))" not in text
    md = format_markdown(sec, notes=(DEMO_NOTE,))
    assert f"> {DEMO_NOTE}" in md and "- m1: responses to" in md
    with pytest.raises(TypeError, match="`notes`"):
        format_html(sec, notes="one string")


def test_non_latin_names_draw_quietly():
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ipcausal.report import plots

    names = ("日本語", "한국어 🙂")
    ps = ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": names[0], "background_j": names[1], "x_i": "q", "x_j": "q",
         "score_i": 1.0, "score_j": float(k % 3)} for k in range(12))
    r = ipcausal.test(ps)
    gaps = plots.missing_glyphs("".join(names))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        page = format_html(Section("glyphs", r))
    assert not [w for w in seen if "missing from" in str(w.message)]
    assert names[0] in page  # the tables keep the names as written
    if gaps:  # no installed font has them: the page says so once (the figures show boxes)
        assert page.count("no installed font") == 1
        # the control: drawing the same label without ipcausal's font handling does warn
        with warnings.catch_warnings(record=True) as raw:
            warnings.simplefilter("always")
            fig, ax = plt.subplots()
            ax.set_title(names[0])
            fig.canvas.draw()
            plt.close(fig)
        assert [w for w in raw if "missing from" in str(w.message)]
    else:
        assert "no installed font" not in page


def test_text_tables_align_with_wide_names():
    from ipcausal.study.text import display_width

    ps = ipcausal.PairSet.from_records(
        [{"pair_id": k, "background_i": "日本語", "background_j": "US", "x_i": "q", "x_j": "q",
          "score_i": 1.0, "score_j": float(k % 3)} for k in range(12)]
        + [{"pair_id": 100 + k, "background_i": "UK", "background_j": "US", "x_i": "q", "x_j": "q",
            "score_i": 1.0, "score_j": float(k % 2)} for k in range(12)])
    import re

    rows = [x for x in format_text(ipcausal.test(ps)).splitlines()
            if x.startswith("  ") and " vs " in x and "minimal detectable effect" not in x]  # table rows
    assert len(rows) == 2
    # where the n column starts, in terminal columns: the same on both rows
    starts = {display_width(re.match(r"^\s*\S+ vs \S+\s+", x).group(0)) for x in rows}
    assert len(starts) == 1


def test_null_plot_labels_name_the_route():
    from ipcausal.report.plots import _null_ylabel, _sign_label

    sim = ipcausal.test(similarity_pairs())
    (g,) = sim.groups
    assert g.null.kind == "pmf" and _null_ylabel(g.null) == "probability under H0"
    assert _sign_label(g) == f"pairs with s < 0.8, of n = {g.detail.n} (sign-test count under H0)"
    mc = ipcausal.test(interval_pairs(), method="monte-carlo", n_resamples=2000, rng=0)
    assert {_null_ylabel(x.null) for x in mc.groups} == {"Monte Carlo draws"}
    exact = ipcausal.test(interval_pairs(), method="exact")
    assert {_null_ylabel(x.null) for x in exact.groups} == {"probability under H0"}
    assert all("4,000" not in x.null.label for x in exact.groups)
