"""Size of the mitigation-change test, and of the "removed" claim (SPEC §10 "Mitigations").

The test of :func:`ipcausal.study.mitigation.evaluate_mitigation` is
:func:`ipcausal.study.compare.compare` (with, without): per pair D = Δ_with − Δ_without, paired
sign flips.  Here the SCM simulator (:class:`ipcausal.testing.SimulatedModel`) answers the same
n = 16 pairs of marker prompts without and with a mitigation, each dataset a different simulated
model (``seed`` = dataset index + ``--seed``), with the real transforms and the text the run would
send (system message and prompt joined, as the simulator reads them).  α = 0.05; exact p-values
(all 2^16 sign patterns).  Rows 1–2 compute the p of every set by a vectorised numpy enumeration
and check it against the public ``compare(with, without, method="exact")`` on the first 200 sets
(the row says on how many they agree); row 3 calls ``ipcausal.test(with, margin=ε)`` on every set
(``--claim-datasets``, default 1,000: the TOST costs more).

1. ``instruct``, a personalizing model (effect 0.5, noise 1): the simulator ignores the
   instruction's meaning, so the mitigation has no effect; H0 of the change test holds.
2. ``markers``, a model with effect 0 (noise 1, ratings 1..5: integer scores): the rewrite makes
   most prompts alike but there is no effect to remove; H0 holds.
3. ``instruct`` on a model whose effect equals the margin (effect = ε = 0.5): P(the result
   says "removed") — the TOST of Δ_with within ±ε — must be ≤ α (the claim's error rate at the
   boundary of "not removed").

Row 1 passes when the rejection rate is within ±3 SE of α; rows 2 (integer D: the exact test is at
most α, below it by the lattice's discreteness) and 3 when it is ≤ α + 3 SE.

Usage: ``python benchmarks/calib_mitigation.py [--datasets 10000] [--claim-datasets 1000] [--seed 0]``; writes
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
N_PAIRS = 16
MARGIN = 0.5
CHECK = 200  # sets on which the public functions are run beside the vectorised route
_SIGNS = 1.0 - 2.0 * ((np.arange(2**N_PAIRS)[:, None] >> np.arange(N_PAIRS)[None, :]) & 1)


def _pairs(prompts: list[tuple[str, str]], scores: list[tuple[float, float]]) -> ipcausal.PairSet:
    return ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "american", "background_j": "british", "x_i": a, "x_j": b,
         "score_i": si, "score_j": sj, "model": "sim"} for k, ((a, b), (si, sj)) in enumerate(zip(prompts, scores)))


def _exact_p(d: np.ndarray) -> np.ndarray:
    """Two-sided exact sign-flip p of each row of ``d`` (all 2^n sign patterns, numpy)."""
    out = np.empty(len(d))
    for lo in range(0, len(d), 250):
        chunk = d[lo:lo + 250]
        t = _SIGNS @ chunk.T
        obs = np.abs(chunk.sum(axis=1))
        out[lo:lo + 250] = (np.abs(t) >= obs[None, :] * (1 - 1e-12) - 1e-12).mean(axis=0)
    return out


def _row(kind: str, effect: float, levels: int | None, datasets: int, seed: int, claim: bool) -> tuple[int, str]:
    base = SimulatedModel(effect=effect, levels=levels, seed=0)
    prompts = [(base.prompt(f"q{k}", "american"), base.prompt(f"q{k}", "british")) for k in range(N_PAIRS)]
    if kind == "markers":
        sent = [(default_markers(a).text, default_markers(b).text) for a, b in prompts]
    else:
        sent = [(f"{DEFAULT_INSTRUCTION}\n{a}", f"{DEFAULT_INSTRUCTION}\n{b}") for a, b in prompts]
    d_all = np.empty((datasets, N_PAIRS))
    hits = agree = 0
    for d in range(datasets):
        sim = SimulatedModel(effect=effect, levels=levels, seed=seed + d)
        y0 = [(sim.answer(a), sim.answer(b)) for a, b in prompts]
        y1 = [(sim.answer(a), sim.answer(b)) for a, b in sent]
        d_all[d] = [(j1 - i1) - (j0 - i0) for (i0, j0), (i1, j1) in zip(y0, y1)]
        if claim:  # the public route throughout: ipcausal.test with the margin
            t = ipcausal.test(_pairs(sent, y1), margin=MARGIN, method="exact", rng=seed + d)
            hits += t.groups[0].equivalence == "equivalent"
        elif d < CHECK:
            r = compare(_pairs(sent, y1), _pairs(prompts, y0), labels=("with", "without"), method="exact",
                        rng=seed + d)
            agree += abs(r.groups[0].pvalue - _exact_p(d_all[d:d + 1])[0]) < 1e-9
    if claim:
        return hits, "ipcausal.test(margin=0.5) on every set"
    hits = int((_exact_p(d_all) <= ALPHA).sum())
    return hits, f"compare() p = numpy enumeration p on {agree}/{min(CHECK, datasets)} sets"


def _rate(hits: int, n: int) -> tuple[float, float, str]:
    p = hits / n
    se = math.sqrt(ALPHA * (1 - ALPHA) / n)
    return p, se, f"{p:.4f} ± {math.sqrt(p * (1 - p) / n):.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=int, default=10_000)
    ap.add_argument("--claim-datasets", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).with_name("CALIB_mitigation.txt")))
    a = ap.parse_args()
    lines = ["| setting | mitigation | model | datasets | rate | α ± 3 SE | pass | route |",
             "|---|---|---|---|---|---|---|---|"]
    rows = [("1. change test, H0", "instruct", 0.5, None), ("2. change test, H0 (ratings)", "markers", 0.0, 5),
            ("3. 'removed' claim at effect = ε", "instruct", MARGIN, None)]
    for label, kind, effect, levels in rows:
        t0 = time.time()
        claim = label.startswith("3")
        n_sets = a.claim_datasets if claim else a.datasets
        hits, route = _row(kind, effect, levels, n_sets, a.seed, claim)
        p, se, shown = _rate(hits, n_sets)
        one_sided = claim or levels is not None
        ok = p <= ALPHA + 3 * se if one_sided else abs(p - ALPHA) <= 3 * se
        model = f"effect {effect:g}" + (f", ratings 1..{levels}" if levels else ", noise 1")
        band = f"≤ {ALPHA + 3 * se:.4f}" if one_sided else f"{ALPHA - 3 * se:.4f}–{ALPHA + 3 * se:.4f}"
        lines.append(f"| {label} | {kind} | {model} | {n_sets:,} | {shown} | {band} | "
                     f"{'pass' if ok else 'FAIL'} | {route} |")
        print(lines[-1], f"({time.time() - t0:.0f} s)", flush=True)
    Path(a.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
