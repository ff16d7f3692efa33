"""Errors that name the real problem, and runs of two models in one file (issue 24 items 4 and 5).

Each test runs the command the issue quotes and asserts the exact new message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ipcausal import PairSet
from ipcausal.cli import main


def _rows(n: int, model: str | None = None, **over: object) -> list[dict[str, object]]:
    out = []
    for k in range(n):
        row: dict[str, object] = {"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": f"q{k}",
                                  "x_j": f"q{k}.", "score_i": k % 3, "score_j": (k * 7) % 4}
        if model:
            row["model"] = model
        out.append(row)
    return out


def _write(path: Path, rows: list[dict[str, object]], blank_after: int | None = None) -> Path:
    with path.open("w") as fh:
        for k, r in enumerate(rows):
            fh.write(json.dumps(r) + "\n")
            if k == blank_after:
                fh.write("\n")  # a blank line: file lines and record numbers part ways
    return path


# -- item 4 -------------------------------------------------------------------------------------
def test_report_of_a_missing_file_says_it_does_not_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "nope.json"), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert f"ipcausal report: error: {tmp_path / 'nope.json'} does not exist (expected a Report file .json" in err
    assert "unknown file type" not in err and not (tmp_path / "r.html").exists()


def test_missing_scores_are_named_per_column_with_file_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows(8)
    rows[1]["score_j"] = None  # a null score_j
    del rows[4]["score_i"]  # an absent score_i
    rows[6]["score_j"] = None
    f = _write(tmp_path / "scored.jsonl", rows, blank_after=2)  # records 4.. sit one line lower
    assert main(["test", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert ("column `score_i` must be finite (no NaN, inf or missing values); bad at line(s) 6 of scored.jsonl; "
            "column `score_j` must be finite (no NaN, inf or missing values); bad at line(s) 2, 8 of scored.jsonl "
            "(to leave out the pairs without an outcome: PairSet.read(path, on_missing='drop'), or "
            "`ipcausal test --on-missing drop`)") in err
    with pytest.raises(ValueError, match=r"`score_i` .* bad at line\(s\) 6 of scored\.jsonl; column `score_j` .* "
                                         r"bad at line\(s\) 2, 8 of scored\.jsonl"):
        PairSet.read(f)


def test_on_missing_drop_counts_what_it_drops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows(8)
    rows[1]["score_j"] = None
    del rows[4]["score_i"]
    f = _write(tmp_path / "scored.jsonl", rows)
    out = tmp_path / "report.json"
    assert main(["test", str(f), "--on-missing", "drop", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{f}: dropped 2 pairs without an outcome (lines 2, 5)" in err
    payload = json.loads(out.read_text())
    assert payload["counts"] == {"pairs read": 8, "dropped (missing outcome)": 2, "tested": 6}
    assert payload["report"]["groups"][0]["n"] == 6
    html = tmp_path / "r.html"
    assert main(["report", str(out), "-o", str(html)]) == 0
    assert "dropped (missing outcome)" in html.read_text()


def test_csv_errors_name_the_file_line_not_the_row_index(tmp_path: Path) -> None:
    f = tmp_path / "p.csv"
    f.write_text("pair_id,background_i,background_j,x_i,x_j\n1,US,UK,a,b\n2,US,US,\"two\nlines\",d\n3,US,US,e,f\n")
    with pytest.raises(ValueError, match=r"must differ within a pair; equal at line\(s\) 3, 5 of p\.csv$"):
        PairSet.read(f)
    bad = tmp_path / "malformed.jsonl"
    bad.write_text('{"pair_id": 1, "background_i": "US", "background_j": "UK", "x_i": "a", "x_j": "b"}\n{oops\n')
    with pytest.raises(ValueError, match=r"malformed\.jsonl:2: not valid JSON"):
        PairSet.read(bad)
    dup = _write(tmp_path / "dup.jsonl", _rows(2) + _rows(1))
    with pytest.raises(ValueError, match=r"duplicate values \['0'\] at line\(s\) 1, 3 of dup\.jsonl with no `model` "
                                         r"column \(a pair's key is \(`model`, `pair_id`\)\)"):
        PairSet.read(dup)


def test_a_404_without_v1_suggests_the_v1_url(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              request: pytest.FixtureRequest) -> None:
    """A real llama.cpp server (it answers under /v1 only), given a --base-url without /v1."""
    pytest.importorskip("openai")
    v1 = request.getfixturevalue("llama_server")  # the session's server
    pairs = _write(tmp_path / "p.jsonl", _rows(1))
    url = v1.removesuffix("/v1")  # what the user typed: http://127.0.0.1:PORT
    rc = main(["run", str(pairs), "--backend", "openai", "--base-url", url, "-o", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert (f"ipcausal run: error: the server at {url} answered HTTP 404 (not found: the URL lacks /v1; "
            f"OpenAI-compatible servers answer under /v1, try {url}/v1)") in err


# -- item 5 -------------------------------------------------------------------------------------
def test_two_models_may_share_pair_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path / "a.jsonl", _rows(6, "model-a"))
    b = _write(tmp_path / "b.jsonl", _rows(6, "model-b"))
    both = tmp_path / "both.jsonl"
    both.write_text(a.read_text() + b.read_text())  # cat A/pairs.jsonl B/pairs.jsonl > both.jsonl
    ps = PairSet.read(both)
    assert len(ps) == 12 and len(PairSet.concat([PairSet.read(a), PairSet.read(b)])) == 12
    assert main(["test", str(both), "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main(["test", str(a), str(b), "--json"]) == 0  # ipcausal test A B
    two = json.loads(capsys.readouterr().out)
    assert [g["model"] for g in one["groups"]] == ["model-a", "model-b"] == [g["model"] for g in two["groups"]]
    assert [g["pvalue"] for g in one["groups"]] == [g["pvalue"] for g in two["groups"]]


def test_the_same_model_still_may_not_repeat_an_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path / "a.jsonl", _rows(3, "m"))
    assert main(["test", str(a), str(a)]) == 2
    err = capsys.readouterr().err
    assert ("column `pair_id` has duplicate values ['0', '1', '2'] at row(s) 0, 1, 2, 3, 4 and 1 more with the same "
            "`model` (a pair's key is (`model`, `pair_id`)); give each run a `model` column") in err


def test_two_case_folders_rendered_together_name_their_models(tmp_path: Path) -> None:
    import ipcausal

    outs = []
    for model in ("smollm2", "gpt-4o-mini"):
        folder = tmp_path / model
        report = ipcausal.test(PairSet.from_records(_rows(6, model)))
        report.write(folder / "report.json", title="Echo chamber", settings={"model": model})
        outs.append(str(folder))
    html, md = tmp_path / "both.html", tmp_path / "both.md"
    assert main(["report", *outs, "-o", str(html)]) == 0
    assert main(["report", *outs, "-o", str(md)]) == 0
    page = html.read_text()
    assert "<a href='#s0'>Echo chamber (smollm2)</a><a href='#s1'>Echo chamber (gpt-4o-mini)</a>" in page
    assert "<h2>Echo chamber (smollm2)</h2>" in page and "<h2>Echo chamber (gpt-4o-mini)</h2>" in page
    assert "## Echo chamber (smollm2)" in md.read_text() and "## Echo chamber (gpt-4o-mini)" in md.read_text()
