"""Calibrate and check the fluency threshold (ipcausal.interventions.fluency) on our labelled pairs.

For each pair of benchmarks/data/fluency_pairs.jsonl (made by make_fluency_pairs.py) the local
SmolLM2 model scores source and twin; drop = mean log p(source) - mean log p(twin), nats per token.
Per family (markers, aae, esl) the threshold is the 95th percentile of the drops of the *good*
twins of the calibration half (even ids), rounded up to 0.1: at most about 5 % of good twins flagged.
The held-out half (odd ids) then gives the rates reported: good twins flagged, bad twins flagged
(recall) per kind of corruption, and the precision of a flag.

Run: PYTHONPATH=. nice python benchmarks/fluency_calibration.py   (writes benchmarks/FLUENCY.txt)
     ... fluency_calibration.py --reuse   (the drops recorded by the last run, benchmarks/data/fluency_scores.json:
     the rates at the thresholds now shipped, without scoring again)
"""

from __future__ import annotations

import json
import math
import platform
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from ipcausal.interventions.fluency import FLUENCY_THRESHOLDS, fluency_available, mean_logprob

HERE = Path(__file__).resolve().parent


def main() -> None:
    if not fluency_available():
        raise SystemExit("the local model is not installed: nothing to calibrate")
    rows = [json.loads(line) for line in (HERE / "data" / "fluency_pairs.jsonl").read_text().splitlines()]
    reuse = "--reuse" in sys.argv[1:]
    t0 = time.perf_counter()
    if reuse:
        recorded = json.loads((HERE / "data" / "fluency_scores.json").read_text())
        for r in rows:
            r["drop"] = recorded[r["id"]]
    else:
        for r in rows:
            r["drop"] = mean_logprob(r["source"]) - mean_logprob(r["twin"])
    secs = time.perf_counter() - t0
    how = "drops read from data/fluency_scores.json (recorded by the last scoring run)" if reuse else \
        f"scored in {secs:.0f} s on {platform.processor() or platform.machine()}"
    lines = [f"fluency calibration: {len(rows)} labelled pairs {how} (SmolLM2-135M-Instruct Q4_1, llama.cpp)",
             "drop = mean log p(source) - mean log p(twin), nats/token; threshold = 95th percentile of the good drops "
             "of the calibration half (even ids), rounded up to 0.1; rates on the held-out half (odd ids)", ""]
    chosen = {}
    for fam in ("markers", "aae", "esl"):
        cal = [r for r in rows if r["family"] == fam and int(r["id"][1:]) % 2 == 0]
        test = [r for r in rows if r["family"] == fam and int(r["id"][1:]) % 2 == 1]
        good = np.array([r["drop"] for r in cal if r["label"] == "good"])
        thr = math.ceil(float(np.quantile(good, 0.95)) * 10) / 10
        chosen[fam] = thr
        shipped = FLUENCY_THRESHOLDS[fam]
        lines.append(f"[{fam}] calibrated threshold {thr:.1f} (shipped: {shipped:g}); good drops median "
                     f"{np.median(good):.2f}, bad drops median {np.median([r['drop'] for r in cal if r['label'] == 'bad']):.2f}")
        for name, t in (("held-out", test), ("all", cal + test)):
            g = [r for r in t if r["label"] == "good"]
            b = [r for r in t if r["label"] == "bad"]
            fg = sum(r["drop"] > shipped for r in g)
            fb = sum(r["drop"] > shipped for r in b)
            prec = fb / (fb + fg) if fb + fg else float("nan")
            lines.append(f"  {name:8s} at {shipped:g}: good flagged {fg}/{len(g)} ({fg / max(len(g), 1):.1%}); bad flagged "
                         f"{fb}/{len(b)} (recall {fb / max(len(b), 1):.1%}); precision of a flag {prec:.1%}")
        per = defaultdict(lambda: [0, 0])
        for r in test:
            if r["label"] == "bad":
                per[r["kind"]][0] += r["drop"] > shipped
                per[r["kind"]][1] += 1
        lines.append("  held-out recall by corruption: " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(per.items())))
    lines.append("")
    lines.append("calibrated: " + ", ".join(f"{k} {v:.1f}" for k, v in chosen.items()))
    text = "\n".join(lines) + "\n"
    (HERE / "FLUENCY.txt").write_text(text)
    if not reuse:
        (HERE / "data" / "fluency_scores.json").write_text(json.dumps({r["id"]: round(r["drop"], 4) for r in rows}))
    print(text)


if __name__ == "__main__":
    main()
