"""`ipcausal new-case` → `pip install` → `ipcausal check-case` passes; a broken card fails naming its check.

The scaffold is installed for real (``pip install --no-deps --no-build-isolation --target``, into a
temporary folder put on the subprocesses' ``PYTHONPATH``, as tests/cases/test_case_plugin.py does),
so the shared environment is never touched and the entry point is read from the installed metadata.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ipcausal.cases.scaffold import SCAFFOLD_FILES
from ipcausal.cli import main

REPO = Path(__file__).resolve().parents[2]


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)])}


def _install(src: Path, target: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "--target", str(target), str(src)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr


def _ipcausal(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ipcausal.cli", *args], capture_output=True, text=True,
                          env=_env(site), timeout=600)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> tuple[Path, Path]:
    src = tmp_path_factory.mktemp("scaffold") / "bike"
    assert main(["new-case", "bike", "-o", str(src)]) == 0
    site = tmp_path_factory.mktemp("site")
    _install(src, site)
    return src, site


def test_the_scaffold_has_every_file(fresh: tuple[Path, Path]) -> None:
    src, _ = fresh
    for rel in SCAFFOLD_FILES:
        assert (src / rel.format(module="ipcausal_case_bike")).is_file(), rel
    toml = (src / "pyproject.toml").read_text()
    assert '[project.entry-points."ipcausal.cases"]' in toml and 'bike = "ipcausal_case_bike.case:CASE"' in toml
    card = (src / "CASE.md").read_text()
    for heading in ("## Application", "## Background B and its proxies", "## Generator, and how it keeps S",
                    "## Outcome and scorer", "## Stance", "## Data licence"):
        assert heading in card, heading
    assert all(w in card for w in ("Consequences:", "Duties:", "Agreement:"))
    pairs = [json.loads(x) for x in (src / "ipcausal_case_bike" / "pairs.jsonl").read_text().splitlines()]
    assert len(pairs) == 12 and {p["background_j"] for p in pairs} == {"village"}


def test_installed_scaffold_is_listed_and_passes_check_case(fresh: tuple[Path, Path]) -> None:
    _, site = fresh
    listed = _ipcausal(site, "cases")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("bike "))
    assert line.rstrip().endswith("ipcausal-case-bike")
    # the reads step sends 3 pairs to the local model (SmolLM2): the scaffold's reader must read its replies
    got = _ipcausal(site, "check-case", "bike", "--placebo-runs", "5", "--read-pairs", "3", "--format", "json")
    assert got.returncode == 0, got.stdout + got.stderr
    res = json.loads(got.stdout)
    assert res["passed"] is True and res["n"] == 12
    assert [c["name"] for c in res["checks"]] == ["card", "pairs", "generator", "placebo", "power", "fluency",
                                                  "reads"]
    assert all(c["passed"] for c in res["checks"]) and not res["checks"][-1]["skipped"]
    assert "replies read) on 3 pairs sent to the local model" in res["checks"][-1]["reason"]
    assert res["pairs_needed"] == 34  # d_z = 0.5, power 0.8, alpha 0.05: ipcausal.power(0.5, power=0.8).n


def test_the_scaffold_runs_its_own_tests(fresh: tuple[Path, Path]) -> None:
    src, site = fresh
    got = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(src / "tests")],
                         capture_output=True, text=True, env=_env(site), timeout=600, cwd=src)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "3 passed" in got.stdout


def test_a_broken_card_fails_check_case_naming_the_check(fresh: tuple[Path, Path], tmp_path: Path) -> None:
    src = tmp_path / "broken"
    assert main(["new-case", "broken", "-o", str(src)]) == 0
    case_py = src / "ipcausal_case_broken" / "case.py"
    text = case_py.read_text()
    assert 'licence="CC0-1.0; the pairs were written for this case",' in text
    case_py.write_text(text.replace('licence="CC0-1.0; the pairs were written for this case",', ""))
    site = tmp_path / "site"
    _install(src, site)
    got = _ipcausal(site, "check-case", "broken", "--placebo-runs", "2", "--backend", "none")
    assert got.returncode == 1, got.stdout + got.stderr
    assert got.stdout.startswith("check-case broken: FAILED (card)")
    assert "FAIL  card" in got.stdout and "the card lacks `demo.licence`" in got.stdout


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 12 local-model requests: about a minute alone, much longer on a crowded machine
def test_the_fresh_scaffold_runs_end_to_end_on_the_local_model(fresh: tuple[Path, Path], tmp_path: Path) -> None:
    """`ipcausal case bike` on SmolLM2 (the default backend): at least 80 % of the pairs are scored.

    6 of the 12 pairs, 12 tokens per answer (the yes or no comes first), to keep the suite's time down;
    benchmarks/PARSE_RATES.txt has all 12 at the scaffold's own budget.
    """
    pytest.importorskip("llama_cpp")
    _, site = fresh
    out = tmp_path / "out"
    got = subprocess.run([sys.executable, "-m", "ipcausal.cli", "case", "bike", "-o", str(out), "--no-progress",
                          "--limit", "6", "--max-tokens", "12"], capture_output=True, text=True, env=_env(site),
                         timeout=1700)
    assert got.returncode == 0, got.stdout + got.stderr
    payload = json.loads((out / "report.json").read_text())
    assert payload["counts"]["pairs"] == 6 and payload["counts"]["scored"] >= 0.8 * 6, payload["counts"]
    (group,) = payload["report"]["groups"]
    assert group["group"] == "city vs village" and group["n"] == payload["counts"]["scored"]


def test_new_case_refuses_a_folder_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x.txt").write_text("mine")
    assert main(["new-case", "bike", "-o", str(tmp_path / "taken")]) == 2
    assert "`out` must be a new or empty folder" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["x.txt"]
