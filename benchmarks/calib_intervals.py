"""Calibration of the inverted intervals and of the equivalence test (seeded simulations).

Settings (``--reps`` H0 datasets each, 10,000 by default; dataset i uses seed i):

* **TOST size at the margin** (true mean = ε, the boundary of H0: |mean| ≥ ε): the share of
  datasets declared equivalent must be ≤ α + 3 SE.  Continuous: Δ ~ N(ε, 1), n = 14 (exact
  enumeration) and n = 60 (Monte Carlo, L = 2,000); lattice: Δ ∈ {−1, 0, 1, 2} with probabilities (.2, .3, .3, .2), symmetric
  about ε = 0.5, n = 100 (exact lattice law).
* **Coverage of the inverted 95 % interval** (≥ nominal − 3 SE), with the Student t
  interval's coverage on the same datasets beside it: continuous skewed Δ = Exp(1) − 1 + 0.3
  at n = 100 and n = 400, and symmetric Laplace at n = 100, Monte Carlo route with L = 2,000
  sign vectors (small to keep the run to minutes); lattice skewed Δ ∈ {−1, 0, 1, 2, 3} with
  probabilities (.1, .3, .3, .2, .1), n = 100, exact lattice route.  The sign-flip test
  assumes Δ symmetric about its mean; skewed data show what that assumption costs.
* **Power** (``--power-reps`` datasets per true mean, 2,000 by default): TOST by sign flips
  (inverted-interval form, Monte Carlo L = 2,000 for continuous data, exact for lattice data)
  next to statsmodels' t-based ``ttost_paired``, same datasets.

Run ``python benchmarks/calib_intervals.py``; the table goes to ``benchmarks/CALIB_intervals.txt``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402

from ipcausal import permutation_test  # noqa: E402
from ipcausal.stats import equivalence_test

ALPHA = 0.05


def _se(p: float, reps: int) -> float:
    return math.sqrt(p * (1 - p) / reps)


def tost_size(reps: int, kind: str) -> tuple[float, str]:
    hits = 0
    method = ""
    for i in range(reps):
        rng = np.random.default_rng(i)
        if kind == "continuous":
            d, eps = rng.normal(0.5, 1.0, 14), 0.5
        elif kind == "monte-carlo":
            d, eps = rng.normal(0.5, 1.0, 60), 0.5
            res = equivalence_test(d, margin=eps, alpha=ALPHA, n_resamples=2000, rng=i, ci_method="shift")
            hits += res.equivalent
            method = res.method
            continue
        else:
            d, eps = rng.choice([-1.0, 0.0, 1.0, 2.0], 100, p=[0.2, 0.3, 0.3, 0.2]), 0.5
        res = equivalence_test(d, margin=eps, alpha=ALPHA, rng=i, ci_method="shift")
        hits += res.equivalent
        method = res.method
    return hits / reps, method


def coverage(reps: int, kind: str, n: int = 100) -> tuple[float, float, str]:
    """Coverage of the inverted 95 % interval, and of the Student t interval on the same datasets."""
    from ipcausal.stats import mean_ci

    hits = hits_t = 0
    ci_method = ""
    for i in range(reps):
        rng = np.random.default_rng(10_000_000 + i)
        if kind == "skewed":
            d, mu = rng.exponential(1.0, n) - 1.0 + 0.3, 0.3
            res = permutation_test(d, method="monte-carlo", n_resamples=2000, rng=i)
        elif kind == "symmetric":
            d, mu = rng.laplace(0.3, 1.0, n), 0.3
            res = permutation_test(d, method="monte-carlo", n_resamples=2000, rng=i)
        else:
            p = np.array([0.1, 0.3, 0.3, 0.2, 0.1])
            vals = np.array([-1.0, 0.0, 1.0, 2.0, 3.0])
            d, mu = rng.choice(vals, n, p=p), float(vals @ p)
            res = permutation_test(d, method="exact")
        t = mean_ci(d)
        hits += res.ci_low <= mu <= res.ci_high
        hits_t += t.ci_low <= mu <= t.ci_high
        ci_method = res.ci_method
    return hits / reps, hits_t / reps, ci_method


def power(reps: int, kind: str) -> list[tuple[float, float, float]]:
    from statsmodels.stats.weightstats import ttost_paired

    out = []
    if kind == "continuous":
        means, eps, n = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5), 0.5, 40
    else:
        means, eps, n = (0.0, 0.05, 0.1, 0.15), 0.15, 150
    for mu in means:
        ours = theirs = 0
        for i in range(reps):
            rng = np.random.default_rng(20_000_000 + i)
            if kind == "continuous":
                d = rng.normal(mu, 1.0, n)
                res = equivalence_test(d, margin=eps, alpha=ALPHA, n_resamples=2000, rng=i, ci_method="shift")
            else:
                d = rng.choice([-1.0, 0.0, 1.0], n, p=[0.3 - mu / 2, 0.4, 0.3 + mu / 2])
                res = equivalence_test(d, margin=eps, alpha=ALPHA, ci_method="shift")
            ours += res.equivalent
            theirs += ttost_paired(d, np.zeros_like(d), -eps, eps)[0] <= ALPHA
        out.append((mu, ours / reps, theirs / reps))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10_000)
    ap.add_argument("--power-reps", type=int, default=2_000)
    args = ap.parse_args()
    reps = args.reps
    t0 = time.perf_counter()
    rows = ["| setting | route | datasets | measured | bound | within |", "|---|---|---|---|---|---|"]
    se = _se(ALPHA, reps)
    for kind, text in (("continuous", "N(ε, 1), n = 14, ε = 0.5"), ("monte-carlo", "N(ε, 1), n = 60, ε = 0.5, L = 2,000"),
                       ("lattice", "{−1,0,1,2} sym. about ε = 0.5, n = 100")):
        size, method = tost_size(reps, kind)
        rows.append(f"| TOST size at the margin, {text}, α = {ALPHA} | {method} | {reps:,} | {size:.4f} |"
                    f" ≤ {ALPHA + 3 * se:.4f} (α + 3 SE) | {'yes' if size <= ALPHA + 3 * se else 'NO'} |")
        print(rows[-1], flush=True)
    se95 = _se(0.95, reps)
    rows += ["", "| coverage of the 95 % interval | route | datasets | inverted interval | Student t interval, same datasets | bound | within |",
             "|---|---|---|---|---|---|---|"]
    for kind, n, text in (("skewed", 100, "Exp(1) − 0.7 (skewness 2), n = 100, L = 2,000"),
                          ("skewed", 400, "Exp(1) − 0.7 (skewness 2), n = 400, L = 2,000"),
                          ("symmetric", 100, "Laplace(0.3, 1), n = 100, L = 2,000"),
                          ("lattice", 100, "{−1..3} skewed, n = 100")):
        cov, cov_t, ci_method = coverage(reps, kind, n)
        ok = cov >= 0.95 - 3 * se95
        rows.append(f"| {text} | {ci_method} | {reps:,} | {cov:.4f} | {cov_t:.4f} | ≥ {0.95 - 3 * se95:.4f} "
                    f"(nominal − 3 SE) | {'yes' if ok else 'NO'} |")
        print(rows[-1], flush=True)
    prow = ["", "| power: P(equivalent) | true mean | sign-flip TOST (inverted interval) | t-based TOST (statsmodels `ttost_paired`) |",
            "|---|---|---|---|"]
    for kind, text in (("continuous", f"N(μ, 1), n = 40, ε = 0.5, L = 2,000, {args.power_reps:,} datasets"),
                       ("lattice", f"{{−1,0,1}}, n = 150, ε = 0.15, exact, {args.power_reps:,} datasets")):
        for mu, ours, theirs in power(args.power_reps, kind):
            prow.append(f"| {text} | {mu:g} | {ours:.3f} | {theirs:.3f} |")
            print(prow[-1], flush=True)
    info = machine()
    head = [f"Seeded simulations, {time.perf_counter() - t0:.0f} s on {info.get('Model name', '?')} "
            f"({info.get('CPU(s)', '?')} CPUs, load {info.get('load average (1, 5, 15 min)', '?')}); "
            f"{info.get('versions')}; {info.get('date')}", ""]
    text = "\n".join(head + rows + prow) + "\n"
    print(text)
    (Path(__file__).resolve().parent / "CALIB_intervals.txt").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
