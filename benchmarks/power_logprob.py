"""Power of the ``logprob`` scorer against 0/1 correctness on the same pairs (SPEC §10, matched-guise outcomes).

(a) **Simulation, truth known.**  Per dataset: a fresh :class:`~ipcausal.testing.SimulatedModel`
(seed = dataset index, ``noise=0.5``), n = 40 pairs of prompts that differ only in the background
tag, 4 options, the first one correct.  The simulator's probability model raises the first option's
logit by ``effect`` under the second background.  Outcome 1: ``score_logprob`` (P(correct option),
exactly the model's probability).  Outcome 2: 0/1 correctness drawn from the *same* probabilities
(one Bernoulli draw per prompt, seeded by ``[--seed, effect index, dataset]``), i.e. what scoring one
sampled answer gives.  Both go through ``ipcausal.test`` (two-sided, α = 0.05, Monte Carlo with
L = ``--resamples``); power = share of datasets with p ≤ α; effect 0 is the size.

(b) **The local model.**  SmolLM2-135M-Instruct in process on the echo demo set (42 pairs, true vs
false stated belief): responses from ``ipcausal.run`` (greedy, 8 tokens) scored by ``mcq``, and the
``logprob`` scorer on the same pairs (continuations "1".."4", as the prompts ask); both p-values.

Usage: ``python benchmarks/power_logprob.py [--datasets 1000] [--resamples 9999] [--no-local]``;
writes ``benchmarks/POWER_logprob.txt`` (Markdown table lines).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

import ipcausal
from ipcausal.pairs import PairSet
from ipcausal.scoring.logprob import score_logprob
from ipcausal.testing import SimulatedModel

ALPHA = 0.05
EFFECTS = (0.0, 0.1, 0.2, 0.4, 0.8, 1.6)
N_PAIRS, K = 40, 4


def _pairs(d: int) -> PairSet:
    return PairSet.from_records([
        {"pair_id": f"{d}-{i}", "background_i": "american", "background_j": "british",
         "x_i": f"Dataset {d} question {i}? [american]", "x_j": f"Dataset {d} question {i}? [british]",
         "options": [f"choice {c}" for c in "abcd"], "correct_option": 1} for i in range(N_PAIRS)])


def _pvalue(ps: PairSet, resamples: int, rng: int) -> float:
    df = ps.to_frame()
    if np.allclose(df["score_i"].to_numpy(float), df["score_j"].to_numpy(float)):
        return 1.0  # every Δ = 0: nothing to test (counts as not rejected)
    return float(ipcausal.test(ps, design=ipcausal.Design(outcome="interval"), n_resamples=resamples, rng=rng).to_frame()["pvalue"].iat[0])


def simulation(datasets: int, resamples: int, seed: int) -> list[str]:
    rows = ["| effect (logit shift) | mean ΔP(correct) | power, logprob | power, 0/1 correctness | ratio of powers |"
            " datasets | time |", "|---|---|---|---|---|---|---|"]
    for e_idx, effect in enumerate(EFFECTS):
        t0 = time.perf_counter()
        rej_lp = rej_01 = 0
        mean_d = []
        for d in range(datasets):
            sim = SimulatedModel(effect=effect, noise=0.5, seed=d)
            scored = score_logprob(_pairs(d), sim)
            df = scored.to_frame()
            mean_d.append(float((df["score_j"] - df["score_i"]).mean()))
            rng = np.random.default_rng([seed, e_idx, d])
            df01 = df.copy()
            df01["score_i"] = (rng.random(len(df)) < df["score_i"].to_numpy()).astype(float)
            df01["score_j"] = (rng.random(len(df)) < df["score_j"].to_numpy()).astype(float)
            rej_lp += _pvalue(scored, resamples, d) <= ALPHA
            rej_01 += _pvalue(PairSet.from_frame(df01), resamples, d) <= ALPHA
        p_lp, p_01 = rej_lp / datasets, rej_01 / datasets
        se = lambda p: math.sqrt(p * (1 - p) / datasets)  # noqa: E731
        ratio = f"{p_lp / p_01:.2f}" if p_01 > 0 and effect > 0 else "—"
        rows.append(f"| {effect:g} | {np.mean(mean_d):.4f} | {p_lp:.3f} ± {se(p_lp):.3f} | {p_01:.3f} ± {se(p_01):.3f}"
                    f" | {ratio} | {datasets} | {time.perf_counter() - t0:.0f} s |")
        print(rows[-1], flush=True)
    return rows


def local_model(resamples: int) -> list[str]:
    from ipcausal.backends import GenerationConfig
    from ipcausal.backends.local import LocalBackend
    from ipcausal.builders import demo_pairs
    from ipcausal.scoring import score_pairs

    pairs = demo_pairs("echo")
    t0 = time.perf_counter()
    with LocalBackend(n_threads=2) as b:
        answered = ipcausal.run(pairs, b, config=GenerationConfig(max_tokens=8), progress=False)
        mcq = score_pairs(answered, "mcq")
        lp = score_logprob(pairs, b)
    rows = ["| scorer | pairs scored | mean score, true belief | mean score, false belief | mean Δ | 95% CI | p |",
            "|---|---|---|---|---|---|---|"]
    for name, ps in (("mcq (0/1 correctness of the greedy answer)", mcq.pairs), ("logprob (P(correct option))", lp)):
        df = ps.to_frame()
        rep = ipcausal.test(ps, design=ipcausal.Design(outcome="interval"), n_resamples=resamples, rng=0).to_frame().iloc[0]
        rows.append(f"| {name} | {len(df)} of {len(pairs)} | {df['score_i'].mean():.4f} | {df['score_j'].mean():.4f}"
                    f" | {rep['effect']:.4f} | [{rep['ci_low']:.4f}, {rep['ci_high']:.4f}] | {rep['pvalue']:.4g} |")
        print(rows[-1], flush=True)
    rows.append(f"(SmolLM2-135M-Instruct Q4_1, llama.cpp in process, 2 threads; {time.perf_counter() - t0:.0f} s;"
                f" mcq unparseable: {mcq.counts['unparseable']})")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=9999)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--no-local", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).with_name("POWER_logprob.txt")))
    args = ap.parse_args()
    lines = [f"# power_logprob: datasets={args.datasets} resamples={args.resamples} seed={args.seed}", "",
             "(a) simulation, truth known", ""] + simulation(args.datasets, args.resamples, args.seed)
    if not args.no_local:
        lines += ["", "(b) SmolLM2 on the echo demo set", ""] + local_model(args.resamples)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
