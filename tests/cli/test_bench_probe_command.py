"""``ipcausal bench`` with ``[settings] probe = true``: the reading on each printed line, the tables, re-rendering."""

from __future__ import annotations

from ipcausal.cli import main
from ipcausal.study.bench import BenchReport

TOML = """
[settings]
seed = 0
probe = true

[[models]]
name = "knows"
backend = "simulated"
effect = 2.0
probe_accuracy = 1.0

[[models]]
name = "guesses"
backend = "simulated"
seed = 1
probe_accuracy = 0.5

[[cases]]
name = "echo"
limit = 8

[[cases]]
name = "education"
limit = 4
probe = false
"""


def test_the_printout_and_tables_carry_the_reading(tmp_path, capsys):
    (tmp_path / "b.toml").write_text(TOML)
    out = tmp_path / "out"
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(out), "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    knows = next(line for line in lines if line.startswith("knows    echo"))
    assert "| infers and uses (probe accuracy 1.00 vs chance 0.50, p 1.5e-05, n 16)" in knows
    guesses = next(line for line in lines if line.startswith("guesses  echo"))
    assert "| neither shown (probe accuracy" in guesses
    assert not any("|" in line for line in lines if "education" in line)  # that case opted out
    rep = BenchReport.read(out)
    assert rep.cell("knows", "echo").probe.reading == "infers and uses"
    md = (out / "bench.md").read_text()
    assert "## Can it infer the background; does it use it?" in md and "| knows | infers and uses (" in md
    assert main(["report", str(out / "bench.json"), "-o", str(out / "bench.html")]) == 0
    page = (out / "bench.html").read_text()
    assert "<table class='probe'>" in page and "infers and uses" in page
    # a rerun asks nothing, for the cells or their probes, and prints the same
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(out), "--no-progress"]) == 0
    assert capsys.readouterr().out.splitlines() == lines
    assert all(c.sent == 0 and (c.probe is None or c.probe.sent == 0) for c in BenchReport.read(out).cells)


def test_a_bad_probe_key_is_one_line_naming_it(tmp_path, capsys):
    (tmp_path / "b.toml").write_text(TOML.replace("probe_accuracy = 0.5", "probe_accuracy = 2"))
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "ipcausal bench: error: `models[1].probe_accuracy` must be a probability in [0, 1], got 2"
    assert not (tmp_path / "o").exists()
