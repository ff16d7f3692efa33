"""Issue 24 item 7: demo names only, and `ipcausal score --scorer NAME` for a registered scorer of your own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ipcausal.cli import main

PLUGIN = '''
from ipcausal.scoring.registry import REGISTRY, Scored, Scorer, register


def apologises(frame, y_i, y_j, options):
    def one(texts):
        return [None if t is None else float("sorry" in t.lower()) for t in texts]

    vi, vj = one(y_i), one(y_j)
    return Scored("mentions sorry", values_i=vi, values_j=vj,
                  status_i=["ok" if v is not None else "missing" for v in vi],
                  status_j=["ok" if v is not None else "missing" for v in vj])


if "apologises_test" not in REGISTRY:
    register(Scorer("apologises_test", "interval", (), False, apologises))
'''


def test_build_demo_lists_only_the_demo_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["build", "demo", "culturee", "-o", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("ipcausal build: error: `name` must be one of the demo sets 'culture', 'education', 'echo', "
                   "got 'culturee'; did you mean 'culture'?")
    assert "farm" not in err and "ambrqa" not in err


def test_score_takes_a_scorer_a_plugin_registers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plugin = tmp_path / "my_scorers.py"
    plugin.write_text(PLUGIN)
    answered = tmp_path / "answered.jsonl"
    with answered.open("w") as fh:
        for k in range(4):
            fh.write(json.dumps({"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q",
                                 "y_i": "Sure.", "y_j": "Sorry, no." if k % 2 else "Fine."}) + "\n")
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(answered), "--plugin", str(plugin), "--scorer", "apologises_test", "-o", str(out)]) == 0
    assert "scored 4 of 4 pairs with mentions sorry" in capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["score_j"] for r in rows] == [0.0, 1.0, 0.0, 1.0] and {r["score_i"] for r in rows} == {0.0}


def test_an_unregistered_scorer_lists_the_registered_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(tmp_path / "a.jsonl"), "--scorer", "nope", "-o", str(tmp_path / "s.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ipcausal score: error: --scorer 'nope' is not a registered scorer; registered: choice, "
                          "scale, embedding, judge, essay, mcq")
    assert err.endswith("(register your own with ipcausal.scoring.registry.register(Scorer(...)) in a module and "
                        "pass --plugin MODULE_OR_FILE)")
    assert main(["score", "a.jsonl", "--plugin", str(tmp_path / "none.py"), "--scorer", "mcq", "-o", "s.jsonl"]) == 2
    assert f"--plugin: {tmp_path / 'none.py'} does not exist" in capsys.readouterr().err
