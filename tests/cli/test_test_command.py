"""`ipcausal test FILE` through the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from ipcausal import PairSet

EXE = Path(sys.executable).parent / "ipcausal"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=300)


def make(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    rows = [{"pair_id": k, "background_i": "SAE", "background_j": "ESL", "x_i": "a", "x_j": "b",
             "score_i": float(rng.integers(1, 6)), "score_j": float(rng.integers(1, 6)) - 1} for k in range(60)]
    return PairSet.from_records(rows).write(tmp_path / "pairs.jsonl")


def test_text_and_json(tmp_path: Path) -> None:
    path = make(tmp_path)
    out = run("test", str(path), "--seed", "1")
    assert out.returncode == 0, out.stderr
    assert "SAE vs ESL" in out.stdout and "implicit personalization detected" in out.stdout
    js = run("test", str(path), "--json", "--correction", "holm", "--method", "monte-carlo", "--resamples", "5000", "--seed", "2")
    data = json.loads(js.stdout)
    assert data["correction"] == "holm" and data["groups"][0]["detail"]["n_resamples"] == 5000
    paper = json.loads(run("test", str(path), "--json", "--paper-compat", "--seed", "3").stdout)
    assert paper["paper_compat"] is True and paper["correction"] == "none"


def test_errors_are_one_line(tmp_path: Path) -> None:
    out = run("test", str(tmp_path / "nope.jsonl"))
    assert out.returncode == 2
    assert out.stderr.strip() == f"ipcausal test: error: `path`: {tmp_path / 'nope.jsonl'} does not exist"
    assert "Traceback" not in out.stderr
    bad = run("test", str(make(tmp_path)), "--alpha", "2")
    assert bad.returncode == 2 and bad.stderr.strip() == (
        "ipcausal test: error: argument --alpha: must lie in (0, 1), got 2 (see ipcausal test --help)")
    for flag, value, message in (("--m0", "5", "must lie in (0, 1] (a median similarity), got 5"),
                                 ("--m0", "-1", "must lie in (0, 1]"), ("--seed", "-1", "must be a non-negative"),
                                 ("--resamples", "0", "must be a positive integer")):
        bad = run("test", str(make(tmp_path)), flag, value)
        assert bad.returncode == 2 and f"argument {flag}: {message}" in bad.stderr, bad.stderr
    assert run("--version").stdout.startswith("ipcausal ")


def test_debug_variable_shows_the_traceback(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "IPCAUSAL_DEBUG": "1"}
    out = subprocess.run([str(EXE), "test", str(make(tmp_path)), "--outcome", "similarity"], capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode != 0 and "Traceback" in out.stderr and "needs the column `similarity`" in out.stderr


def test_cli_choices_are_the_library_names() -> None:
    """The parser takes its choices from the modules that own them."""
    from ipcausal.study.test import OUTCOMES
    from ipcausal.cli import build_parser
    from ipcausal.stats.multitest import CORRECTIONS
    from ipcausal.stats.permutation import METHODS
    from ipcausal.study.joint import JOINT_CORRECTIONS

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["test"]
    opts = {a.dest: a.choices for a in sub._actions}
    assert tuple(opts["correction"]) == CORRECTIONS + JOINT_CORRECTIONS
    assert tuple(opts["method"]) == METHODS
    assert tuple(opts["outcome"]) == OUTCOMES
