"""IP-Bench, issue 32: comparisons only on one scale, rank sets and tie groups, cells that say what they are,
and one clear line for an unset key variable and for Ctrl-C.

The mixed bench runs the real local model (SmolLM2 through llama.cpp) beside the simulator on the echo
case: the local model is scored by the case's mcq scorer (0/1 correctness), the simulator by its own
number, so the two are not on one scale and their comparison must be refused, with the reason.  Five
pairs per cell: every cell's test cannot reject whatever the data (the smallest attainable p is above
0.05), which the cells must say.  The ranked bench runs three simulated models with known effects on
all of the echo case's pairs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import ipcausal
from ipcausal.cli import main
from ipcausal.study.bench import BenchReport, bench

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BenchReport]:
    pytest.importorskip("llama_cpp", reason="the local model needs llama-cpp-python (pip install 'ipcausal[local]')")
    out = tmp_path_factory.mktemp("mixed")
    spec = {"models": [{"name": "sim", "backend": "simulated", "effect": 1.5},
                       {"name": "sim2", "backend": "simulated", "seed": 1},
                       {"name": "smollm2", "backend": "local"}],
            "cases": [{"name": "echo", "limit": 5, "margin": 0.5}]}
    from ipcausal.report.bench import write_bench_markdown

    rep = bench(spec, out=out, progress=False)
    write_bench_markdown(rep, out)
    return out, rep


def test_a_simulated_and_a_local_model_are_not_compared_on_unlike_scales(mixed: tuple[Path, BenchReport]) -> None:
    out, rep = mixed
    refused = {(x.model_a, x.model_b): x.refused for x in rep.comparisons if x.refused}
    assert set(refused) == {("sim", "smollm2"), ("sim2", "smollm2")}
    assert refused[("sim", "smollm2")] == ("not on one scale: sim is scored by essay rated by SimulatedModel.read, "
                                           "interval outcome, smollm2 by mcq, interval outcome, |Δ| ≤ 1")
    compared = [x for x in rep.comparisons if not x.refused]
    assert [(x.model_a, x.model_b) for x in compared] == [("sim", "sim2")]  # the two simulators share a scale
    csv = pd.read_csv(out / "comparisons.csv")
    assert csv["refused"].notna().sum() == 2 and csv.loc[csv["refused"].notna(), "difference"].isna().all()
    md = (out / "bench.md").read_text(encoding="utf-8")
    assert "refused: not on one scale: sim is scored by essay rated by SimulatedModel.read" in md
    assert rep.rank("smollm2", "echo", "true_belief vs false_belief") is None  # not ranked against the others


def test_every_cell_says_what_it_is(mixed: tuple[Path, BenchReport]) -> None:
    from ipcausal.report.bench import bench_html
    from ipcausal.report.bench_cells import group_text

    out, rep = mixed
    local, sim = rep.cell("smollm2", "echo"), rep.cell("sim", "echo")
    for c in (local, sim):
        (g,) = c.groups
        assert g.direction == "Δ = score(false_belief) − score(true_belief)"
        assert g.cannot_reject is not None and g.cannot_reject.endswith("needs ≥ 6")  # five pairs at most
        assert g.mde == float("inf")  # the Report's MDE: nothing is detectable where it cannot reject
    assert sim.groups[0].cannot_reject == "5 informative pairs; needs ≥ 6"
    assert local.unit == "share answered correctly (mcq, 0/1)" and local.scale == "mcq, interval outcome, |Δ| ≤ 1"
    assert local.margin == 0.5 and local.calls == 10
    text = group_text(sim, sim.groups[0], "bonferroni")
    assert "true_belief vs false_belief: Δ = score(false_belief) − score(true_belief)" in text
    assert "(essay score points (SimulatedModel.read))" in text and "adjusted p (bonferroni)" in text
    assert "IP cannot reject whatever the data (5 informative pairs; needs ≥ 6)" in text
    assert "equivalent within ±0.5: " in text and text.split("equivalent within ±0.5: ")[1][0] in "yn—"
    md = (out / "bench.md").read_text(encoding="utf-8")
    assert "| adjusted p (bonferroni) |" in md and "| equivalent within ±0.5 |" in md
    assert "cannot reject whatever the data (5 informative pairs; needs ≥ 6)" in md
    row = next(r for r in md.splitlines() if r.startswith("| sim | true_belief vs false_belief |"))
    head = next(r for r in md.splitlines() if r.startswith("| model | group | direction |")).split(" | ")
    cells = row.split(" | ")
    assert cells[head.index("IP")] == "cannot reject whatever the data (5 informative pairs; needs ≥ 6)"
    assert cells[head.index("MDE, 80 % power")] == "inf"  # nothing is detectable with 5 pairs
    page = bench_html(rep)
    assert "calls 10" in page and "cost —" not in page  # no price: no cost shown
    assert "Example pairs" in page and "largest |Δ|" in page
    assert sim.examples and sim.examples[0]["rule"] == "largest |Δ|" and sim.examples[0]["prompt_b"]
    csv = pd.read_csv(out / "bench.csv")
    assert list(csv["cannot_reject"].dropna()) and set(csv["direction"]) == {g.direction for g in local.groups}


def test_rank_sets_and_tie_groups_on_known_effects(tmp_path: Path) -> None:
    spec = {"models": [{"name": "big", "backend": "simulated", "effect": 3.0},
                       {"name": "flat", "backend": "simulated", "seed": 1},
                       {"name": "flat2", "backend": "simulated", "seed": 2}],
            "cases": [{"name": "echo"}]}
    from ipcausal.report.bench import write_bench_markdown

    rep = bench(spec, out=tmp_path, progress=False)
    write_bench_markdown(rep, tmp_path)
    (group,) = {r.group for r in rep.ranks}
    sets = {r.model: (r.rank_set, r.tie_group) for r in rep.ranks}
    assert sets["big"] == ("1", "a")  # effect 3 against two models without one
    assert sets["flat"][0] == sets["flat2"][0] == "2–3" and sets["flat"][1] == sets["flat2"][1] == "b"
    csv = pd.read_csv(tmp_path / "bench.csv")
    assert dict(zip(csv["model"], csv["rank_set"])) == {"big": "1", "flat": "2–3", "flat2": "2–3"}
    ranks = pd.read_csv(tmp_path / "ranks.csv")
    assert list(ranks.columns) == ["case", "group", "model", "n", "effect", "rank_low", "rank_high", "rank_set",
                                   "tie_group", "confidence_level"]
    assert BenchReport.read(tmp_path).ranks == rep.ranks
    md = (tmp_path / "bench.md").read_text(encoding="utf-8")
    assert "Rank sets: each model's rank by the size |mean Δ|" in md and f"| {group} | big |" in md


def test_an_unset_key_variable_stops_the_bench_before_any_request(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IPCAUSAL_NOPE_KEY", raising=False)
    toml = tmp_path / "b.toml"
    toml.write_text('[[models]]\nname = "sim"\nbackend = "simulated"\n\n[[models]]\nname = "api"\nbackend = "openai"\n'
                    'model = "m"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "IPCAUSAL_NOPE_KEY"\n\n'
                    '[[cases]]\nname = "echo"\nlimit = 4\n')
    assert main(["bench", str(toml), "-o", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("ipcausal bench: error: `models[1].api_key_env`: $IPCAUSAL_NOPE_KEY is not set (export it before "
                   "the bench; nothing was sent)")
    assert not (tmp_path / "out" / "cache").exists()  # not even the simulated model was asked


def test_ctrl_c_says_how_to_resume(tmp_path: Path) -> None:
    toml = tmp_path / "b.toml"
    toml.write_text('[[models]]\nname = "slow"\nbackend = "simulated"\nlatency = 0.4\n\n'
                    '[[cases]]\nname = "echo"\nlimit = 20\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(ipcausal.__file__).parents[1]),
                                                       os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "ipcausal.cli", "bench", str(toml), "-o", str(out), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while not (out / "cache" / "slow.sqlite").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # some answers in
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == (f"ipcausal bench: interrupted: every answer received is kept in "
                                            f"{out / 'cache'}; run the same command again to resume (only the "
                                            "requests not yet answered are sent)")
    assert main(["bench", str(toml), "-o", str(out), "--no-progress"]) == 0  # the same command finishes it
