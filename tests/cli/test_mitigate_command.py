"""``ipcausal mitigate``: the command writes its files and reports per background pair."""

from __future__ import annotations

import json

import pytest

import ipcausal
from ipcausal.cli import main
from ipcausal.commands import mitigate as cmd
from ipcausal.testing import SimulatedModel


@pytest.fixture()
def pair_file(tmp_path):
    sim = SimulatedModel(effect=1.0, seed=3)
    df = sim.study(n=12, rng=0).to_frame()[["pair_id", "background_i", "background_j", "x_i", "x_j"]]
    path = tmp_path / "pairs.jsonl"
    ipcausal.PairSet.from_frame(df).write(path)
    return sim, path


def test_mitigate_writes_the_result(pair_file, tmp_path, monkeypatch, capsys):
    sim, path = pair_file
    monkeypatch.setattr(cmd, "make_backend", lambda args, prefix="": None if prefix else sim)
    out = tmp_path / "out"
    rc = main(["mitigate", str(path), "--mitigation", "markers", "--scorer", "essay", "--margin", "0.5",
               "-o", str(out), "--no-progress"])
    assert rc == 0
    d = json.loads((out / "mitigation.json").read_text())
    assert d["mitigation"] == "markers" and d["n_pairs"] == 12 and len(d["groups"]) == 1
    assert (out / "checks.csv").read_text().startswith("pair_id,")
    assert len(ipcausal.PairSet.read(out / "pairs_with.jsonl")) == d["n_compared"]
    assert (out / "cache.sqlite").exists()
    assert "Mitigation 'markers'" in capsys.readouterr().out


def test_mitigate_errors(pair_file, tmp_path, capsys):
    _, path = pair_file
    assert main(["mitigate", str(tmp_path / "none.jsonl"), "--mitigation", "strip", "--scorer", "mcq",
                 "-o", str(tmp_path / "o")]) == 2
    assert "PAIRS:" in capsys.readouterr().err
    assert main(["mitigate", str(path), "--mitigation", "strip", "--scorer", "mcq", "--instruction", "Be fair.",
                 "-o", str(tmp_path / "o")]) == 2
    assert "--instruction is an option of --mitigation instruct" in capsys.readouterr().err
    assert main(["mitigate", str(path), "--mitigation", "hide", "--scorer", "mcq", "-o", str(tmp_path / "o")]) == 2


def test_one_shape_of_mitigation_json(pair_file, tmp_path, monkeypatch, capsys):
    """`ipcausal mitigate` and `ipcausal case --mitigation` write mitigation.json through one writer, one shape."""
    from ipcausal.study.mitigation import read_mitigation
    from ipcausal.study.mitigation.results import SCHEMA

    sim, path = pair_file
    monkeypatch.setattr(cmd, "make_backend", lambda args, prefix="": None if prefix else sim)
    assert main(["mitigate", str(path), "--mitigation", "markers", "--scorer", "essay", "-o", str(tmp_path / "a"),
                 "--no-progress"]) == 0
    assert main(["case", "echo", "--backend", "simulated", "--effect", "2", "--limit", "8", "--mitigation", "strip",
                 "-o", str(tmp_path / "b"), "--no-progress"]) == 0
    a = json.loads((tmp_path / "a" / "mitigation.json").read_text())
    b = json.loads((tmp_path / "b" / "mitigation.json").read_text())
    assert list(a) == list(b) and a["schema"] == b["schema"] == SCHEMA
    assert a["case"] is None and b["case"] == "echo" and isinstance(a["sent"], int)
    assert set(a["groups"][0]) == set(b["groups"][0]) and a["groups"][0]["removed"] == "not assessed"
    assert read_mitigation(tmp_path / "a") == a and read_mitigation(tmp_path / "b" / "mitigation.json") == b


def test_a_mitigation_json_of_the_case_command_before_0_2_still_reads(tmp_path):
    from ipcausal.study.mitigation import read_mitigation

    old = {"case": "echo", "title": "Echo", "mitigation": "strip", "instruction": None, "outcome": "interval",
           "margin": 0.5, "m0": None, "alpha": 0.05, "null_hypothesis": "H0", "change_test": "sign flips",
           "removal_rule": "removed = …", "n_pairs": 4, "n_failed_check": 0, "n_not_undone": 0, "n_compared": 4,
           "sent": 4, "groups": [{"group": "a vs b", "removed": "yes"}], "failed_pairs": []}
    (tmp_path / "mitigation.json").write_text(json.dumps(old))
    got = read_mitigation(tmp_path)
    assert got == {"schema": "ipcausal.mitigation/1", **old}
    (tmp_path / "mitigation.json").write_text(json.dumps({**old, "schema": "ipcausal.other/3"}))
    with pytest.raises(ValueError, match="not a mitigation.json of schema 'ipcausal.mitigation/1'"):
        read_mitigation(tmp_path)
def test_mitigate_takes_a_similarity_scorer(pair_file, tmp_path, monkeypatch, capsys):
    """A similarity scorer (issue 29): the change of s per pair, removal judged against m0, no margin needed."""
    from ipcausal.interventions import embedding_model_available

    if not embedding_model_available():
        pytest.skip("the embedding model (ipcausal[embed]) is not installed")
    sim, path = pair_file
    monkeypatch.setattr(cmd, "make_backend", lambda args, prefix="": None if prefix else sim)
    out = tmp_path / "sim"
    assert main(["mitigate", str(path), "--mitigation", "markers", "--scorer", "embedding", "-o", str(out),
                 "--no-progress"]) == 0
    d = json.loads((out / "mitigation.json").read_text())
    assert d["mitigation"] == "markers" and d["groups"][0]["equivalence"] in ("above m0", "not shown above m0")
    assert "similarity" in ipcausal.PairSet.read(out / "pairs_with.jsonl").columns
