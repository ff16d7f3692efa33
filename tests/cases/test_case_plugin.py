"""A third-party case: a tiny distribution publishing a Case under the `ipcausal.cases` entry point.

The package is built and installed for real (``pip install --no-deps --target``, into a temporary
folder put on ``PYTHONPATH`` of subprocesses, so the shared environment is never touched); then
``ipcausal cases`` lists it, ``get_case`` returns it and ``ipcausal case toy`` runs it end to end on
the SCM simulator backend.  The same distribution publishes a broken entry point too: it is
reported by name and skipped, and ``ipcausal --help`` still works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

TOY = '''
"""A toy case: prompts tagged [plain] or [fancy]; the score is the number the simulator answers."""
import re

import ipcausal
from ipcausal.cases import Case, EthicalReading, PairSource, TestDefaults
from ipcausal.scoring import get_scorer


def rate(text):
    m = re.search(r"Answer: (-?[0-9.]+)", text)
    return None if m is None else float(m.group(1))


rate.name = "toy answer reader"


def demo(rng, limit):
    n = limit or 24
    return ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "plain", "background_j": "fancy",
         "x_i": f"[plain] Question t{k}: what would you recommend?",
         "x_j": f"[fancy] Question t{k}: what would you recommend?"} for k in range(n))


CASE = Case(
    name="toy",
    title="Toy: plain vs fancy users",
    application="Recommending something to a user who writes plainly or fancily.",
    backgrounds=("plain", "fancy"),
    scorer=get_scorer("essay", rater=rate, bound=20.0),
    demo=PairSource("toy demo set", max_tokens=16, load=demo),
    full=None,
    tests=TestDefaults(),
    reading=EthicalReading("mixed", "It depends.", "None broken.", "Users are not asked."),
)
'''

PYPROJECT = '''
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "ipcausal-toy-case"
version = "0.1"

[tool.setuptools]
py-modules = ["toycase"]

[project.entry-points."ipcausal.cases"]
toy = "toycase:CASE"
broken = "toycase_missing:CASE"
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("toy-src")
    (src / "toycase.py").write_text(textwrap.dedent(TOY))
    (src / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    target = tmp_path_factory.mktemp("toy-site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "--target", str(target), str(src)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert list(target.glob("ipcausal_toy_case-0.1.dist-info"))
    return target


def _ipcausal(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)])}
    return subprocess.run([sys.executable, "-m", "ipcausal.cli", *args], capture_output=True, text=True,
                          env=env, timeout=600, cwd=cwd)


def test_the_plugin_is_listed_and_the_broken_one_reported(site: Path) -> None:
    got = _ipcausal(site, "cases")
    assert got.returncode == 0, got.stderr
    line = next(x for x in got.stdout.splitlines() if x.startswith("toy "))
    assert "plain, fancy" in line and "interval (essay)" in line and "mixed" in line
    assert line.rstrip().endswith("ipcausal-toy-case")
    assert "case plugin 'broken'" in got.stderr and "toycase_missing" in got.stderr and "skipped" in got.stderr
    assert [x.split()[0] for x in got.stdout.splitlines()[1:4]] == ["culture", "education", "echo"]
    assert _ipcausal(site, "--help").returncode == 0


def test_get_case_returns_it(site: Path) -> None:
    code = ("import warnings; warnings.simplefilter('ignore')\n"
            "from ipcausal.cases import get_case\n"
            "c = get_case('toy'); print(c.name, c.origin, c.outcome.name, c.scorer.bound)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["toy", "ipcausal-toy-case", "interval", "20.0"]


def test_ipcausal_case_runs_it_end_to_end_on_the_simulator(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "toy"
    got = _ipcausal(site, "case", "toy", "--backend", "simulated", "--effect", "2", "-o", str(out), "--no-progress")
    assert got.returncode == 0, got.stderr
    assert "== Toy: plain vs fancy users ==" in got.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["report"]["ip_detected"] is True  # a known effect of 2 on 24 pairs, noise 1
    (group,) = report["report"]["groups"]
    assert group["group"] == "plain vs fancy" and group["n"] == 24
    assert 1.0 < group["effect"] < 3.0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["case"] == "toy" and meta["settings"]["pairs from"] == "toy demo set"
    # --backend simulated scores the simulator's answers by their number (SimulatedModel.read), as the bench does
    assert meta["settings"]["scorer"] == "read" and meta["counts"]["scored"] == 24
    assert (out / "report.html").is_file()
    null = _ipcausal(site, "case", "toy", "--backend", "simulated", "-o", str(tmp_path / "null"), "--no-progress")
    assert null.returncode == 0, null.stderr
    # the same prompts and noise without the effect: every pair's Δ is exactly 2 smaller (the known truth),
    # whatever this one seeded null run's test says (it rejects at level 0.05 in 1 of 20 seeds)
    deltas = [[r["score_j"] - r["score_i"] for r in map(json.loads, (d / "pairs.jsonl").read_text().splitlines())]
              for d in (out, tmp_path / "null")]
    assert [a - b for a, b in zip(*deltas)] == pytest.approx([2.0] * 24)
