"""``ipcausal case NAME --backend simulated --effect X``: every built-in case, against a known truth.

The simulator is told each prompt's declared background (the case's own pairs) and its answers are
scored by their number, so for every pair Δ(effect) − Δ(0) is exactly ``effect · (k_j − k_i)`` (k: the
background's place in the case's backgrounds): the same prompts, the same noise, only the shift moves —
except where a rating scale (``levels``) clips a score at its end.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ipcausal.cases import get_case
from ipcausal.cases.registry import BUILTIN_CASES
from ipcausal.cli import main
from ipcausal.pairs import PairSet
from ipcausal.study.results import Report


def _run(name, tmp_path, effect):
    out = tmp_path / f"e{effect}"
    assert main(["case", name, "--backend", "simulated", "--effect", str(effect), "-o", str(out),
                 "--no-progress"]) == 0
    return out, PairSet.read(out / "pairs.jsonl").to_frame()


@pytest.mark.parametrize("name", sorted(BUILTIN_CASES))
def test_every_built_in_case_runs_on_the_simulator_with_its_known_effect(name, tmp_path, capsys):
    case = get_case(name)
    out1, with_effect = _run(name, tmp_path, 1.0)
    _, without = _run(name, tmp_path, 0.0)
    report = Report.read(out1 / "report.json")
    assert len(report.groups) == len(case.backgrounds) * (len(case.backgrounds) - 1) // 2
    rank = {b: k for k, b in enumerate(case.backgrounds)}
    for df in (with_effect, without):  # told: every answer names the prompt's declared background
        for s in ("i", "j"):
            assert all(f"background inferred: {b})" in y for y, b in zip(df[f"y_{s}"], df[f"background_{s}"]))
    d1 = (with_effect["score_j"] - with_effect["score_i"]).to_numpy()
    d0 = (without["score_j"] - without["score_i"]).to_numpy()
    want = [rank[b] - rank[a] for a, b in zip(with_effect["background_i"], with_effect["background_j"])]
    assert list(with_effect["pair_id"]) == list(without["pair_id"]) and len(d1) >= 2
    levels = re.search(r"levels=(\w+)", report.groups[0].model).group(1)
    if levels == "None":
        assert d1 - d0 == pytest.approx(want)
    else:  # a rating scale 1..levels (the case's reader): a shift past either end is clipped there
        k = int(levels)
        scores = [df[f"score_{s}"].to_numpy() for df in (with_effect, without) for s in ("i", "j")]
        inside = np.all([(v > 1) & (v < k) for v in scores[2:]], axis=0)  # unshifted scores off the ends
        assert inside.sum() >= len(d1) // 3
        assert (d1 - d0)[inside] == pytest.approx(np.asarray(want, dtype=float)[inside])
        assert np.all(np.abs(d1 - d0) <= np.abs(want))  # clipped pairs move less, never more
    assert "== " in capsys.readouterr().out


def test_simulated_takes_no_model_or_url_and_effect_needs_it(tmp_path, capsys):
    assert main(["case", "echo", "--backend", "simulated", "--model", "x", "-o", str(tmp_path)]) == 2
    assert "--model/--base-url do not apply to --backend simulated" in capsys.readouterr().err
    assert main(["case", "echo", "--backend", "local", "--effect", "1", "-o", str(tmp_path)]) == 2
    assert "--effect is an option of --backend simulated" in capsys.readouterr().err
