"""``ipcausal build``: sub-commands, outputs, manifests, and one-line errors (exit 2)."""

from __future__ import annotations

import json

import pytest

from ipcausal.cli import main
from ipcausal.pairs import PairSet


def _run(capsys, *argv):
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_build_farm(tmp_path, shared_data, capsys):
    out = tmp_path / "farm.jsonl"
    rc, _, err = _run(capsys, "build", "farm", "--source",
                      str(shared_data / "sirnyls-AutoPersonalizationBench/case3_farm_with_statements"),
                      "--limit", "10", "-o", str(out))
    assert rc == 0, err
    assert len(PairSet.read(out)) == 80
    man = json.loads((tmp_path / "farm.manifest.json").read_text())
    assert man["counts"]["pairs"] == 80 and man["settings"]["limit"] == 10
    assert "wrote 80 pairs" in err


def test_build_ambrqa(tmp_path, shared_data, capsys):
    out = tmp_path / "ambrqa.csv"
    man = tmp_path / "m.json"
    rc, _, err = _run(capsys, "build", "ambrqa", "--global-opinions",
                      str(shared_data / "jiarui-liu-IP/case_1/subjective/source.csv"), "--limit", "25",
                      "--seed", "3", "-o", str(out), "--manifest", str(man))
    assert rc == 0, err
    ps = PairSet.read(out)
    assert len(ps) == 25 and set(ps["background_j"]) == {"uk"}
    assert json.loads(man.read_text())["settings"]["rng"] == 3


def test_build_essays_with_rules(tmp_path, capsys):
    prompts = tmp_path / "p.txt"
    prompts.write_text("Should museums be free for everyone? Explain your reasons with examples from your city.\n"
                       "Many people believe that the government should fund the arts. Do you agree?\n", encoding="utf-8")
    out = tmp_path / "essays.jsonl"
    rc, _, err = _run(capsys, "build", "essays", "--prompts", str(prompts), "--styles", "esl", "--esl-rules",
                      "--seed", "2", "-o", str(out))
    assert rc == 0, err
    ps = PairSet.read(out)
    assert len(ps) == 2 and set(ps["style_j"]) == {"esl"}


@pytest.mark.parametrize("name,n", [("culture", 65), ("echo", 42), ("education", 96)])
def test_build_demo(tmp_path, capsys, name, n):
    out = tmp_path / f"{name}.jsonl"
    rc, _, err = _run(capsys, "build", "demo", name, "-o", str(out))
    assert rc == 0, err
    assert len(PairSet.read(out)) == n
    import json

    checks = json.loads(out.with_name(f"{name}.manifest.json").read_text())["checks"]
    assert f"pair checks: clean {checks['clean']}" in err and checks["clean"] == n


@pytest.mark.parametrize(
    "argv,message",
    [
        (["build", "farm", "--source", "/no/such/dir", "-o", "x.jsonl"], "/no/such/dir: no such directory"),
        (["build", "ambrqa", "--global-opinions", "/no/such.csv", "-o", "x.jsonl"], "/no/such.csv: no such file"),
        (["build", "ambrqa", "-o", "x.jsonl"], "give --global-opinions"),
        (["build", "essays", "--prompts", "/no/p.txt", "-o", "x.jsonl"], "/no/p.txt: no such file"),
        (["build", "demo", "nope", "-o", "x.jsonl"], "`name` must be one of"),
        (["build"], "choose a dataset"),
        (["build", "farm", "--source", ".", "--max-tokens", "0", "-o", "x.jsonl"], "argument --max-tokens: must be a positive integer, got 0"),
    ],
)
def test_errors_are_one_line(tmp_path, capsys, argv, message):
    rc, _, err = _run(capsys, *argv)
    assert rc == 2
    assert message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_malformed_sources_are_one_line(tmp_path, shared_data, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("a;b\n1;2\n", encoding="utf-8")
    rc, _, err = _run(capsys, "build", "ambrqa", "--global-opinions", str(bad), "-o", str(tmp_path / "o.jsonl"))
    assert rc == 2 and "expected a GlobalOpinionQA CSV" in err and str(bad) in err
    rc, _, err = _run(capsys, "build", "farm", "--source", str(shared_data / "farm-llms-believe-the-earth-is-flat"),
                      "--limit", "1", "-o", str(tmp_path / "o.jsonl"))
    assert rc == 2 and "need --backend" in err and len(err.strip().splitlines()) == 1
    prompts = tmp_path / "p.txt"
    prompts.write_text("Is it good?\n", encoding="utf-8")
    rc, _, err = _run(capsys, "build", "essays", "--prompts", str(prompts), "-o", str(tmp_path / "o.jsonl"))
    assert rc == 2 and "need --backend" in err
    rc, _, err = _run(capsys, "build", "farm", "--source", str(tmp_path), "--limit", "0", "-o", "o.jsonl")
    assert rc == 2 and "argument --limit: must be a positive integer, got 0" in err


def test_build_ambrqa_stylish(tmp_path, shared_data, capsys):
    out = tmp_path / "factual.jsonl"
    rc, _, err = _run(capsys, "build", "ambrqa", "--stylish",
                      str(shared_data / "jiarui-liu-IP/case_1/stylish_question_by_domain"), "-o", str(out))
    assert rc == 0, err
    assert len(PairSet.read(out)) == 731 and "94 skipped" in err  # 701 and 124 before the sense check (issue 29)


def test_no_output_written_on_error(tmp_path, capsys):
    out = tmp_path / "never.jsonl"
    _run(capsys, "build", "farm", "--source", str(tmp_path / "missing"), "-o", str(out))
    assert not out.exists()
