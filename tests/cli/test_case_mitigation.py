"""`ipcausal case NAME --mitigation M` end to end with the SCM simulator (it reads a [background] tag)."""

from __future__ import annotations

import json

import pytest

from ipcausal.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _case(*extra: str, out) -> list[str]:
    return ["case", "echo", "--backend", "simulated", "--effect", "2", "--limit", "12", "-o", str(out),
            "--no-progress", *extra]


def test_strip_removes_the_simulated_effect_and_a_rerun_sends_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_case("--mitigation", "strip", "--margin", "0.5", out=out)) == 0
    text = capsys.readouterr().out
    assert "Mitigation 'strip' on case 'echo': 12 of 12 pairs compared" in text
    assert "removed = the TOST shows the mean effect with the mitigation within ±0.5" in text
    doc = json.loads((out / "mitigation.json").read_text())
    g = doc["groups"][0]
    assert g["effect_without"] > 1 and g["effect_with"] == 0 and g["change_reject"] and g["removed"] == "yes"
    assert doc["sent"] == 12  # the without-arm came from the case run's cache; the stripped sides are one text
    for name in ("report.json", "pairs.jsonl", "checks.csv", "mitigation.txt", "pairs_with.jsonl"):
        assert (out / name).is_file()
    assert main(_case("--mitigation", "strip", "--margin", "0.5", out=out)) == 0
    assert "(sent 0 new requests)" in capsys.readouterr().out


def test_markers_leaves_the_tag_and_without_a_margin_removal_is_not_assessed(tmp_path, capsys):
    assert main(_case("--mitigation", "markers", out=tmp_path / "m")) == 0
    text = capsys.readouterr().out
    assert "removal not assessed" in text
    g = json.loads((tmp_path / "m" / "mitigation.json").read_text())["groups"][0]
    assert g["change"] == 0 and g["effect_with"] > 1 and g["removed"] == "not assessed"


def test_instruct_takes_its_instruction(tmp_path, capsys):
    assert main(_case("--mitigation", "instruct", "--instruction", "Answer everyone alike.", out=tmp_path / "i")) == 0
    doc = json.loads((tmp_path / "i" / "mitigation.json").read_text())
    assert doc["instruction"] == "Answer everyone alike." and doc["mitigation"] == "instruct"


@pytest.mark.parametrize("extra, message", [
    (["--mitigation", "strip", "--sequential"], "--mitigation and --sequential do not combine"),
    (["--instruction", "Be fair."], "--instruction is an option of --mitigation instruct"),
    (["--mitigation", "strip", "--instruction", "Be fair."], "--instruction is an option of --mitigation instruct"),
    (["--mitigation", "strip", "--samples", "2"], "--mitigation takes one answer per prompt"),
    (["--mitigation", "strip", "--max-pairs", "4"], "--max-pairs is an option of --sequential"),
    (["--margin", "0.5"], "options of --sequential"),
])
def test_bad_combinations_are_refused(tmp_path, capsys, extra, message):
    assert main(_case(*extra, out=tmp_path / "x")) == 2
    assert message in capsys.readouterr().err


def test_an_unknown_mitigation_is_refused(tmp_path, capsys):
    assert main(_case("--mitigation", "hide", out=tmp_path / "x")) == 2
    assert "--mitigation" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_the_rewrite_mitigation_needs_its_rewriter(tmp_path, capsys) -> None:
    from ipcausal.cli import main as cli_main

    assert cli_main(["case", "echo", "--backend", "simulated", "--mitigation", "rewrite", "--limit", "4",
                     "-o", str(tmp_path / "out"), "--no-progress"]) == 2
    assert "--mitigation rewrite needs --rewriter-backend" in capsys.readouterr().err
    assert cli_main(["case", "echo", "--backend", "simulated", "--mitigation", "strip", "--rewriter-backend",
                     "local", "--limit", "4", "-o", str(tmp_path / "out"), "--no-progress"]) == 2
    assert "--rewriter-backend applies to it only" in capsys.readouterr().err


def test_the_mitigation_renders_alone_and_inside_the_case_report(tmp_path, capsys):
    # `ipcausal report DIR/mitigation.json` (it failed with "unknown file type '.json'"), as HTML and Markdown,
    # and the case's own report.html/report.md carry the same table (no browser needed: the page test adds one)
    out = tmp_path / "run"
    assert main(_case("--mitigation", "strip", "--margin", "0.5", out=out)) == 0
    capsys.readouterr()
    doc = json.loads((out / "mitigation.json").read_text())
    g = doc["groups"][0]
    assert main(["report", str(out / "mitigation.json"), "-o", str(tmp_path / "m.html")]) == 0
    assert main(["report", str(out / "mitigation.json"), "-o", str(tmp_path / "m.md")]) == 0
    page, md = (tmp_path / "m.html").read_text(), (tmp_path / "m.md").read_text()
    assert page.startswith("<!DOCTYPE html>") and "Mitigation 'strip'" in page
    for text in (page, md):
        assert "p of the change (adjusted over the background pairs)" in text
        assert g["group"] in text and f"{g['effect_without']:.4g}" in text
    assert main(["report", str(out), "-o", str(tmp_path / "again.html")]) == 0
    for name in ("report.html", "report.md"):
        assert "Mitigation 'strip'" in (out / name).read_text()
    assert "Mitigation 'strip'" in (tmp_path / "again.html").read_text()
    assert main(["report", str(tmp_path / "nothing.json"), "-o", str(tmp_path / "x.html")]) == 2
