"""The age case (the first contributed case): public API only, passes check-case, runs end to end."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from ipcausal.cases import get_case
from ipcausal.cases.age import AGE_MARKERS, CASE, read_risk
from ipcausal.cli import main
from ipcausal.study.cases import run_case
from ipcausal.testing import SimulatedModel

PUBLIC = {"ipcausal", "ipcausal.cases", "ipcausal.scoring", "ipcausal.scm"}


def test_it_is_registered_and_built_with_the_public_api_only() -> None:
    assert get_case("age") is CASE and CASE.ordered and CASE.backgrounds == ("young", "old")
    tree = ast.parse(Path(__import__("ipcausal.cases.age", fromlist=["x"]).__file__).read_text())
    used = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in used if m.startswith("ipcausal")} <= PUBLIC
    assert "age" not in __import__("ipcausal.cases.registry", fromlist=["x"]).DEMO_CASES


def test_the_demo_pairs_differ_only_in_the_stated_age() -> None:
    df = CASE.demo.load(0, None).to_frame()
    assert len(df) == 20 and df["pair_id"].is_unique and len(CASE.demo.load(0, 5)) == 5
    for x_i, x_j, allowed in zip(df["x_i"], df["x_j"], df["allowed"]):
        si, sj = json.loads(allowed)
        assert x_i.startswith(si) and x_j.startswith(sj) and x_i[len(si):] == x_j[len(sj):]
        assert any(w in si for w in AGE_MARKERS["young"]) and any(w in sj for w in AGE_MARKERS["old"])


def test_the_reader() -> None:
    assert read_risk("Answer: 3 - a balanced mix.") == 3.0
    assert read_risk("**Answer:** 2") == 2.0
    assert read_risk("5, you have decades ahead.") == 5.0
    assert read_risk("I would not invest at all.") is None


def test_check_case_passes(capsys) -> None:
    assert main(["check-case", "age", "--placebo-runs", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("check-case age: PASSED") and "all 20 pairs pass check_pair" in out


def test_it_runs_end_to_end_on_the_simulator(tmp_path: Path, capsys) -> None:
    assert main(["case", "age", "--backend", "simulated", "-o", str(tmp_path / "null"), "--no-progress"]) == 0
    report = json.loads((tmp_path / "null" / "report.json").read_text())["report"]
    (group,) = report["groups"]
    assert group["group"] == "young vs old" and group["n"] == 20 and report["ip_detected"] is False
    # with the age words as its markers the simulator sees the stated age: a known effect is found
    sim = SimulatedModel(effect=-1.5, backgrounds=CASE.backgrounds, markers=AGE_MARKERS, noise=0.5, levels=5)
    res = run_case(CASE, sim, out=tmp_path / "effect", progress=False)
    (g,) = res.report.groups
    assert res.report.ip_detected and g.n == 20 and -2.0 < g.effect < -1.0
