"""`ipcausal probe PAIRS`: the command end to end with the simulator, its JSON file, its errors."""

from __future__ import annotations

import json

import pytest

import ipcausal.commands.probe as probe_cmd
from ipcausal.cli import build_parser, main
from ipcausal.testing import SimulatedModel


@pytest.fixture
def pairs_file(tmp_path):
    sim = SimulatedModel(probe_accuracy=0.9, seed=1)
    return sim, sim.study(n=25, rng=0).write(tmp_path / "pairs.jsonl")


def test_probe_writes_the_result_and_prints_per_background(pairs_file, tmp_path, monkeypatch, capsys) -> None:
    sim, path = pairs_file
    monkeypatch.setattr(probe_cmd, "_make_backend", lambda args: sim)
    out = tmp_path / "probe.json"
    assert main(["probe", str(path), "-o", str(out), "--seed", "3"]) == 0
    printed = capsys.readouterr()
    d = json.loads(out.read_text())
    assert d["n"] == 50 and d["chance"] == 0.5 and d["seed"] == 3 and d["pvalue"] < 1e-4
    assert set(d["per_background"]) == {"american", "british"}
    assert "right background" in printed.out and "Clopper–Pearson" in printed.out and "american:" in printed.out
    assert "probe result written" in printed.err
    assert main(["probe", str(path), "--json", "--seed", "3"]) == 0
    assert json.loads(capsys.readouterr().out) == d


def test_probe_options_reach_the_function(pairs_file, monkeypatch, capsys) -> None:
    sim, path = pairs_file
    monkeypatch.setattr(probe_cmd, "_make_backend", lambda args: sim)
    assert main(["probe", str(path), "--json", "--backgrounds", "american,british,other",
                 "--alternative", "two-sided", "--confidence-level", "0.9"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["chance"] == pytest.approx(1 / 3) and d["alternative"] == "two-sided" and d["confidence_level"] == 0.9
    assert main(["probe", str(path), "--backgrounds", "american,other"]) == 2
    assert "`backgrounds` lacks ['british']" in capsys.readouterr().err


def test_probe_is_listed_and_validates_flags(capsys) -> None:
    assert "probe" in build_parser().format_help()
    assert main(["probe", "x.jsonl", "--confidence-level", "2"]) == 2
    assert "--confidence-level" in capsys.readouterr().err
