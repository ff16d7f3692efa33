"""The learner case: the education case with an ordered background, tested with the trend row too."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ipcausal.cases import get_case
from ipcausal.cases.learner import CASE, LEVELS
from ipcausal.cli import main
from ipcausal.stats.ordered import trend_test
from ipcausal.study.bench import bench
from ipcausal.study.cases import case_test_options
from ipcausal.study.results import Report


def test_it_is_registered_ordered_with_the_trend_in_its_test_options() -> None:
    assert get_case("learner") is CASE and CASE.ordered and CASE.backgrounds == LEVELS
    assert CASE.tests.design.trend == LEVELS
    assert case_test_options(CASE, CASE.demo.load(0, 2))[0]["design"].trend == tuple(LEVELS)
    assert "learner" not in __import__("ipcausal.cases.registry", fromlist=["x"]).DEMO_CASES


def test_the_demo_levels_are_ordered_by_construction() -> None:
    df = CASE.demo.load(0, 6).to_frame()
    assert set(df["background_i"]) | set(df["background_j"]) == set(LEVELS)
    per_prompt = df.groupby("prompt_id").size()
    assert (per_prompt == 3).all()  # sae-light, sae-heavy, light-heavy for every prompt
    errors = {(p, b): n for p, b, n in zip(df["prompt_id"], df["background_i"], df["n_errors_i"])}
    errors |= {(p, b): n for p, b, n in zip(df["prompt_id"], df["background_j"], df["n_errors_j"])}
    for p in per_prompt.index:
        assert errors[(p, "sae")] == 0 < errors[(p, "esl_light")] < errors[(p, "esl_heavy")]


def test_check_case_passes(capsys) -> None:
    assert main(["check-case", "learner", "--placebo-runs", "5"]) == 0
    assert capsys.readouterr().out.startswith("check-case learner: PASSED")


@pytest.mark.parametrize("effect, detected", [(1.0, True), (0.0, False)])
def test_a_monotone_effect_is_found_by_the_trend_row(tmp_path: Path, effect: float, detected: bool) -> None:
    spec = {"models": [{"name": "sim", "backend": "simulated", "effect": effect, "noise": 0.5}],
            "cases": [{"name": "learner", "limit": 12}]}
    rep = bench(spec, out=tmp_path, progress=False)
    cell = rep.cell("sim", "learner")
    assert cell.status == "ok"
    report = Report.read(tmp_path / cell.report)
    (t,) = report.trend
    assert t.levels == LEVELS and t.n_prompts == 12 and t.n_incomplete == 0
    assert t.reject is detected and (t.slope > 0.5) is detected
    # the row is trend_test on one row per prompt and one column per level, rebuilt from the scored pairs
    scored = [json.loads(line) for line in (tmp_path / cell.folder / "pairs.jsonl").read_text().splitlines()]
    cells = {}
    for r in scored:
        cells.setdefault((r["prompt_id"], r["background_i"]), r["score_i"])
        cells.setdefault((r["prompt_id"], r["background_j"]), r["score_j"])
    prompts = sorted({p for p, _ in cells})
    y = np.array([[cells[(p, b)] for b in LEVELS] for p in prompts])
    ref = trend_test(y, n_resamples=t.n_resamples, rng=0)
    assert t.statistic == pytest.approx(ref.statistic) and t.slope == pytest.approx(ref.slope)
