"""`ipcausal test FILE --trend L1,L2,L3 --strata COLUMN` through the console script (issue 21)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from ipcausal import PairSet

EXE = Path(sys.executable).parent / "ipcausal"
LEVELS = ("sae", "esl_light", "esl_heavy")


def _pairs(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    rows = []
    for p in range(10):
        s = {b: float(rng.integers(1, 6)) for b in LEVELS}
        for a, b in (("sae", "esl_light"), ("sae", "esl_heavy"), ("esl_light", "esl_heavy")):
            rows.append({"pair_id": f"{p}:{a}-{b}", "prompt_id": f"p{p}", "background_i": a, "background_j": b,
                         "x_i": "q", "x_j": "q", "score_i": s[a], "score_j": s[b], "cue": "c" + str(p % 2)})
    return PairSet.from_records(rows).write(tmp_path / "pairs.jsonl")


def test_trend_and_strata_flags(tmp_path: Path) -> None:
    path = _pairs(tmp_path)
    args = [str(EXE), "test", str(path), "--trend", ",".join(LEVELS), "--strata", "cue", "--cluster", "prompt_id",
            "--resamples", "999", "--seed", "1"]
    out = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["trend"][0]["levels"] == list(LEVELS) and len(data["strata"]) == 3
    text = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert "trend across sae < esl_light < esl_heavy" in text.stdout and "pooled, stratified by cue" in text.stdout
    bad = subprocess.run([str(EXE), "test", str(path), "--trend", "sae,esl_mid"], capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode != 0 and "`trend`: unknown level(s) ['esl_mid']" in bad.stderr
