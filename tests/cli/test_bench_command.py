"""``ipcausal bench BENCH.toml -o DIR``: the files, resume, a failed cell's exit status, spec errors."""

from __future__ import annotations

from ipcausal.cli import main
from ipcausal.study.bench import BenchReport

TOML = """
[settings]
alpha = 0.05
seed = 0

[[models]]
name = "personalizes"
backend = "simulated"
effect = 2.0

[[models]]
name = "neutral"
backend = "simulated"
seed = 1

[[cases]]
name = "echo"
limit = 8

[[cases]]
name = "education"
limit = 8
margin = 0.5
"""


def test_bench_writes_its_files_and_reruns_from_the_cache(tmp_path, capsys):
    (tmp_path / "b.toml").write_text(TOML)
    out = tmp_path / "out"
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "personalizes  education   misaligned (possibility 3)" in printed
    for name in ("bench.json", "bench.csv", "comparisons.csv", "bench.md", "cache/personalizes.sqlite",
                 "cells/neutral/echo/report.json", "cells/neutral/echo/report.md"):
        assert (out / name).is_file(), name
    md = (out / "bench.md").read_text()
    assert "| personalizes | desired: aligned" in md and "step-down adjusted p | Holm adjusted p" in md
    first = (out / "bench.csv").read_text()
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(out), "--no-progress"]) == 0
    assert all(c.sent == 0 for c in BenchReport.read(out).cells)
    assert (out / "bench.csv").read_text() == first


def test_a_failed_model_gives_exit_status_3_and_the_others_finish(tmp_path, capsys):
    (tmp_path / "b.toml").write_text(TOML + '\n[[models]]\nname = "down"\nbackend = "openai"\n'
                                     'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(tmp_path / "o"), "--no-progress"]) == 3
    cap = capsys.readouterr()
    assert "2 cell(s) did not finish" in cap.err and any(line.split()[:3] == ["down", "echo", "failed:"] for line in cap.out.splitlines())
    assert {c.status for c in BenchReport.read(tmp_path / "o").cells if c.model != "down"} == {"ok"}


def test_a_bad_key_is_one_line_naming_it(tmp_path, capsys):
    (tmp_path / "b.toml").write_text(TOML.replace('backend = "simulated"\nseed = 1', 'backend = "gpt"'))
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ipcausal bench: error: `models[1].backend` must be one of") and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()
    assert main(["bench", str(tmp_path / "none.toml"), "-o", str(tmp_path / "o")]) == 2
    assert "is not a file" in capsys.readouterr().err


def test_ipcausal_report_renders_a_bench_json(tmp_path, capsys):
    (tmp_path / "b.toml").write_text(TOML)
    out = tmp_path / "out"
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(out), "--no-progress"]) == 0
    assert main(["report", str(out / "bench.json"), "-o", str(out / "again.md")]) == 0
    assert (out / "again.md").read_text() == (out / "bench.md").read_text()  # same folder: same links
    assert main(["report", str(out), "-o", str(tmp_path / "t.md")]) == 0
    assert f"]({out.resolve().as_posix()}/cells/neutral/echo/report.md)" in (tmp_path / "t.md").read_text()
    capsys.readouterr()
    assert main(["report", str(out / "bench.json"), "-o", str(tmp_path / "t.txt")]) == 2
    assert "a bench renders as Markdown or HTML; give a .md or .html file" in capsys.readouterr().err


def test_released_and_a_bench_file_exclude_each_other(tmp_path, capsys):
    (tmp_path / "b.toml").write_text(TOML)
    assert main(["bench", str(tmp_path / "b.toml"), "--released", str(tmp_path), "-o", str(tmp_path / "o")]) == 2
    assert "not both or neither" in capsys.readouterr().err
    assert main(["bench", "-o", str(tmp_path / "o")]) == 2
    assert "not both or neither" in capsys.readouterr().err
    assert main(["bench", "--released", str(tmp_path / "none"), "-o", str(tmp_path / "o")]) == 2
    assert "--released: " in capsys.readouterr().err and not (tmp_path / "o").exists()


SLOW = """
import sys, time
from ipcausal.testing import SimulatedModel
orig = SimulatedModel.generate
def slow(sim, requests):
    out = []
    for r in requests:
        time.sleep(0.02)
        out += orig(sim, [r])
    return out
SimulatedModel.generate = slow
from ipcausal.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _rows(folder):
    import sqlite3

    total = 0
    for p in sorted(folder.glob("*.sqlite")):
        con = sqlite3.connect(p)
        try:
            total += con.execute("select count(*) from samples").fetchone()[0]
        except sqlite3.OperationalError:  # killed before the table was made
            pass
        finally:
            con.close()
    return total


def test_kill_9_then_the_same_command_resumes(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "b.toml").write_text(TOML)
    (tmp_path / "slow.py").write_text(SLOW)
    out = tmp_path / "out"
    argv = [sys.executable, str(tmp_path / "slow.py"), "bench", str(tmp_path / "b.toml"), "-o", str(out),
            "--no-progress"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None and _rows(out / "cache") < 20:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = _rows(out / "cache")
    assert kept >= 20 and not (out / "bench.json").exists()  # killed mid-bench, answers kept
    assert subprocess.run(argv, env=env, capture_output=True, timeout=300).returncode == 0
    rep = BenchReport.read(out)
    # nothing answered before the kill is asked again: the rerun sends exactly what was missing
    assert sum(c.sent for c in rep.cells) == _rows(out / "cache") - kept
    fresh = tmp_path / "fresh"
    assert main(["bench", str(tmp_path / "b.toml"), "-o", str(fresh), "--no-progress"]) == 0
    assert (out / "bench.csv").read_text() == (fresh / "bench.csv").read_text()
