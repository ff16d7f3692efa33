"""Size of the mitigation-change test, and of the "removed" claim (SPEC §10 "Mitigations").

The test of :func:`ipcausal.study.mitigation.evaluate_mitigation` is
:func:`ipcausal.study.compare.compare` (with, without): per pair D = Δ_with − Δ_without, paired
sign flips.  Here the SCM simulator (:class:`ipcausal.testing.SimulatedModel`) answers the same
n = 30 pairs of marker prompts without and with a mitigation, each dataset a different simulated
model (``seed`` = dataset index + ``--seed``), with the real transforms and the text the run would
send (system message and prompt joined, as the simulator reads them).  α = 0.05; Monte Carlo
p-values with L = 999 sign flips.

1. ``instruct``, a personalizing model (effect 0.5, noise 1): the simulator ignores the
   instruction's meaning, so the mitigation has no effect; H0 of the change test holds.
2. ``markers``, a model with effect 0 (noise 1, ratings 1..5: integer scores): the rewrite makes most prompts alike but there is no effect to remove; H0 holds.
3. ``instruct`` on a model whose effect equals the margin (effect = ε = 0.5): P(the result
   says "removed") — the TOST of Δ_with within ±ε — must be ≤ α (the claim's error rate at the
   boundary of "not removed").

Each row passes when the rejection rate is within ±3 SE of α (rows 1–2) or ≤ α + 3 SE (row 3).

Usage: ``python benchmarks/calib_mitigation.py [--datasets 10000] [--seed 0]``; writes
``benchmarks/CALIB_mitigation.txt`` (Markdown table lines).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

import ipcausal
from ipcausal.interventions.neutralize import default_markers
from ipcausal.study.compare import compare
from ipcausal.study.mitigation import DEFAULT_INSTRUCTION
from ipcausal.testing import SimulatedModel

ALPHA = 0.05
N_PAIRS = 30
L = 999
MARGIN = 0.5


def _pairs(prompts: list[tuple[str, str]], scores: list[tuple[float, float]]) -> ipcausal.PairSet:
    return ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "american", "background_j": "british", "x_i": a, "x_j": b,
         "score_i": si, "score_j": sj, "model": "sim"} for k, ((a, b), (si, sj)) in enumerate(zip(prompts, scores)))


def _row(kind: str, effect: float, levels: int | None, datasets: int, seed: int, claim: bool) -> tuple[int, int]:
    base = SimulatedModel(effect=effect, levels=levels, seed=0)
    prompts = [(base.prompt(f"q{k}", "american"), base.prompt(f"q{k}", "british")) for k in range(N_PAIRS)]
    if kind == "markers":
        sent = [(default_markers(a).text, default_markers(b).text) for a, b in prompts]
    else:
        sent = [(f"{DEFAULT_INSTRUCTION}\n{a}", f"{DEFAULT_INSTRUCTION}\n{b}") for a, b in prompts]
    change = removed = 0
    for d in range(datasets):
        sim = SimulatedModel(effect=effect, levels=levels, seed=seed + d)
        without = _pairs(prompts, [(sim.answer(a), sim.answer(b)) for a, b in prompts])
        with_ = _pairs(sent, [(sim.answer(a), sim.answer(b)) for a, b in sent])
        if claim:
            t = ipcausal.test(with_, margin=MARGIN, method="monte-carlo", n_resamples=L,
                              rng=np.random.default_rng([seed, d, 1]))
            removed += t.groups[0].equivalence == "equivalent"
            continue
        r = compare(with_, without, labels=("with", "without"), method="monte-carlo", n_resamples=L,
                    rng=np.random.default_rng([seed, d]))
        change += bool(r.groups[0].pvalue <= ALPHA)
    return change, removed


def _rate(hits: int, n: int) -> tuple[float, float, str]:
    p = hits / n
    se = math.sqrt(ALPHA * (1 - ALPHA) / n)
    return p, se, f"{p:.4f} ± {math.sqrt(p * (1 - p) / n):.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).with_name("CALIB_mitigation.txt")))
    a = ap.parse_args()
    lines = ["| setting | mitigation | model | datasets | rate | α ± 3 SE | pass |", "|---|---|---|---|---|---|---|"]
    rows = [("1. change test, H0", "instruct", 0.5, None), ("2. change test, H0 (ratings)", "markers", 0.0, 5),
            ("3. 'removed' claim at effect = ε", "instruct", MARGIN, None)]
    for label, kind, effect, levels in rows:
        t0 = time.time()
        change, removed = _row(kind, effect, levels, a.datasets, a.seed, label.startswith("3"))
        hits = removed if label.startswith("3") else change
        p, se, shown = _rate(hits, a.datasets)
        ok = p <= ALPHA + 3 * se if label.startswith("3") else abs(p - ALPHA) <= 3 * se
        model = f"effect {effect:g}" + (f", ratings 1..{levels}" if levels else ", noise 1")
        band = f"≤ {ALPHA + 3 * se:.4f}" if label.startswith("3") else f"{ALPHA - 3 * se:.4f}–{ALPHA + 3 * se:.4f}"
        lines.append(f"| {label} | {kind} | {model} | {a.datasets:,} | {shown} | {band} | "
                     f"{'pass' if ok else 'FAIL'} |")
        print(lines[-1], f"({time.time() - t0:.0f} s)", flush=True)
    Path(a.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
