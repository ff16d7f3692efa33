"""Calibration and power of the trend test and size of the heterogeneity test (issue 21).

Settings (α = 0.05, every dataset seeded by ``[--seed, setting, dataset]``)
--------------------------------------------------------------------------
1. **Trend test size** (``--datasets`` H0 datasets, default 10,000): k = 3 ordered levels,
   n = 50 prompts, one response per prompt and level, a prompt effect shared by the levels
   (y = u_p + e_pb, corr 0.5); normal and integer (rounded, essay-like) scores; two-sided,
   L = 999.  Passes within ±3 SE of α (integer ties make the permutation test ≤ α).
2. **Trend test power against Bonferroni over the pairwise tests** (``--datasets`` datasets
   per effect): the same data with a monotone effect, level b shifted by δ · (b − 1)
   (δ in noise SDs; δ = 0 is H0 again), and a concave one, shifts (0, δ, 1.25 δ).  "Rejects"
   = the test says some level matters: the trend test's p ≤ α; for Bonferroni, some pairwise
   paired sign-flip test (``permutation_test`` of y_b − y_a, L = 999) has p ≤ α / 3; beside
   them the Westfall–Young omnibus p on the same relabelings.
3. **Heterogeneity test size** (``--datasets`` H0 datasets): k = 2 and k = 4 cues, n = 40
   prompts, Δ per prompt and cue = u_p + e_pc; L = 999; passes within ±3 SE of α.

Usage: ``python benchmarks/calib_trend.py [--datasets 10000] [--seed 20261202]``; writes
``benchmarks/CALIB_trend.txt`` (Markdown table lines).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ALPHA = 0.05
L_CAL = 999


def _scores(rng: np.random.Generator, n: int, k: int, shift: np.ndarray, integer: bool) -> np.ndarray:
    y = rng.normal(size=(n, 1)) + rng.normal(size=(n, k)) + shift[None, :]
    return np.round(3 * y + 30) if integer else y


def _rate(hits: int, total: int) -> tuple[float, float]:
    p = hits / total
    return p, math.sqrt(p * (1 - p) / total)


def _band(rate: float, total: int) -> str:
    se0 = math.sqrt(ALPHA * (1 - ALPHA) / total)
    z = (rate - ALPHA) / se0
    return f"{z:+.2f} SE of α, {'pass' if abs(z) <= 3 else 'FAIL'}"


def trend_size(seed: int, datasets: int, integer: bool) -> tuple[int, float]:
    from ipcausal.stats.ordered import trend_test

    hits = 0
    t0 = time.perf_counter()
    for d in range(datasets):
        rng = np.random.default_rng([seed, 1 + integer, d])
        y = _scores(rng, 50, 3, np.zeros(3), integer)
        hits += trend_test(y, n_resamples=L_CAL, rng=rng).pvalue <= ALPHA
    return hits, time.perf_counter() - t0


def trend_power(seed: int, datasets: int, setting: int, shift: np.ndarray) -> tuple[int, int, int, float]:
    from ipcausal.stats.joint import westfall_young
    from ipcausal.stats.ordered import trend_test
    from ipcausal.stats.permutation import permutation_test

    tr = bonf = wy = 0
    t0 = time.perf_counter()
    for d in range(datasets):
        rng = np.random.default_rng([seed, 10 + setting, d])
        y = _scores(rng, 50, 3, shift, False)
        tr += trend_test(y, n_resamples=L_CAL, rng=rng).pvalue <= ALPHA
        pw = [permutation_test(y[:, b] - y[:, a], n_resamples=L_CAL, rng=rng, method="monte-carlo").pvalue
              for a, b in ((0, 1), (0, 2), (1, 2))]
        bonf += min(pw) <= ALPHA / 3
        wy += westfall_young(y, n_resamples=L_CAL, rng=rng).pvalue <= ALPHA
    return tr, bonf, wy, time.perf_counter() - t0


def het_size(seed: int, datasets: int, k: int) -> tuple[int, float]:
    from ipcausal.stats.ordered import heterogeneity_test

    hits = 0
    t0 = time.perf_counter()
    for d in range(datasets):
        rng = np.random.default_rng([seed, 100 + k, d])
        y = rng.normal(size=(40, 1)) + rng.normal(size=(40, k))
        hits += heterogeneity_test(y, n_resamples=L_CAL, rng=rng).pvalue <= ALPHA
    return hits, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--out", default=str(Path(__file__).with_name("CALIB_trend.txt")))
    args = ap.parse_args(argv)
    N, seed = args.datasets, args.seed
    se0 = math.sqrt(ALPHA * (1 - ALPHA) / N)
    lines = [f"α = {ALPHA}; {N:,} datasets per row, SE = {se0:.4f}, ±3 SE band [{ALPHA - 3 * se0:.4f}, "
             f"{ALPHA + 3 * se0:.4f}]; seed {seed}; L = {L_CAL} relabelings per test.", "",
             "Trend test size, k = 3 ordered levels, n = 50 prompts, two-sided:", "",
             "| scores | rejection rate | vs α | time |", "|---|---|---|---|"]
    for integer in (False, True):
        hits, secs = trend_size(seed, N, integer)
        r, se = _rate(hits, N)
        lines.append(f"| {'integer (rounded)' if integer else 'normal'} | {r:.4f} ± {se:.4f} | {_band(r, N)} | "
                     f"{secs:.0f} s |")
    lines += ["", "Trend test power against Bonferroni over the three pairwise sign-flip tests (and the "
              "Westfall–Young omnibus), k = 3, n = 50, normal scores; P(some level is declared to matter):", "",
              "| level shifts (noise SD) | trend test | Bonferroni, pairwise sign-flip | Westfall–Young omnibus | "
              "time |", "|---|---|---|---|---|"]
    settings = [np.array(s) for s in ((0.0, 0.0, 0.0), (0.0, 0.1, 0.2), (0.0, 0.2, 0.4), (0.0, 0.3, 0.6),
                                      (0.0, 0.2, 0.25))]
    for i, shift in enumerate(settings):
        tr, bonf, wy, secs = trend_power(seed, N, i, shift)
        cells = [f"{h / N:.4f} ± {_rate(h, N)[1]:.4f}" for h in (tr, bonf, wy)]
        lines.append(f"| ({', '.join(f'{s:g}' for s in shift)}) | {' | '.join(cells)} | {secs:.0f} s |")
    lines += ["", "Heterogeneity test size, n = 40 prompts, Δ per prompt and cue:", "",
              "| cues k | rejection rate | vs α | time |", "|---|---|---|---|"]
    for k in (2, 4):
        hits, secs = het_size(seed, N, k)
        r, se = _rate(hits, N)
        lines.append(f"| {k} | {r:.4f} ± {se:.4f} | {_band(r, N)} | {secs:.0f} s |")
    text = "\n".join(lines)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
