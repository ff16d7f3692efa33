"""Joint coverage and width of the simultaneous rank sets (``ipcausal.stats.ranks.rank_sets``, issue 32).

Each dataset is one bench case × background pair: the effects Δ of m models on the same n pairs,
with known mean effects θ_c.  A dataset's rank sets *cover* when every model's true rank lies in
its set at once — both the smallest and the largest rank a model can have when some |θ| tie —
the promise of ``rank_sets`` at confidence level 0.95.  A setting passes when the coverage is
at least 0.95 − 3 SE.  Beside it, the width (mean over models of rank_high − rank_low) and the
share of models whose rank is known exactly, for ``rank_sets`` (max-|t| over the pairwise
differences and sums, the Rademacher multiplier on the pairs) and for the construction it is
chosen over, Klein, Wright & Wieczorek (2020): simultaneous intervals for each θ_c alone
(max-|t| over the m means, the same multiplier), |θ_c| ranked apart only where the intervals'
images do not overlap.  Both are measured on the same datasets.

Settings (every dataset seeded by ``[--seed, setting, dataset]``):

1. **bench-8**: m = 4 models on n = 8 pairs (the docs' ``limit = 8``), rating-like integer Δ
   (Δ = round(θ_c + u_p + e_pc), u the pair's shared effect, e ~ N(0, 1)), θ = (0, 0, 1.5, −2).
2. **ties-100**: m = 5, n = 100, normal Δ (the same shared u), θ = (0, 0, 0.8, −0.8, 1.6): ties in |θ|.
3. **spread-40**: m = 5, n = 40, θ = (0, 0.5, 0.5, 2, −2) with noise SD 3, 3, 0.3, 0.3, 0.3
   (the unequal spreads that break the exchangeability of the Westfall–Young step-down).
4. **binary-200**: m = 3, n = 200, Δ = y_j − y_i of 0/1 correctness (Δ ∈ {−1, 0, 1}), with
   P(y = 1) = 0.6 on side i and 0.6 + θ_c on side j, θ = (0, −0.15, −0.3).
5. **clusters-30**: m = 4, 30 clusters of 2 pairs sharing a cluster effect per model,
   θ = (0, 0.5, 1, 1.5), ``clusters=`` given.
6. **null-8**: m = 8, n = 100, every θ = 0 (every model ties: no separation is allowed at all);
   also ranked by the signed effect (``by="signed"``, where a false separation needs one
   difference's interval only: the sharpest test of the critical value), bench-8 signed, and
   bench-6 signed (6 pairs: the fewest at which a set can separate anything at 0.95).

Usage: ``python benchmarks/calib_ranks.py [--datasets 1000] [--seed 20261204]``; writes
``benchmarks/CALIB_ranks.txt`` (Markdown table lines) and prints them.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from ipcausal.stats.ranks import rank_sets, simultaneous_intervals

LEVEL = 0.95


def _normal(theta, n, sd, rng):
    m = len(theta)
    return rng.normal(size=(n, 1)) + np.asarray(sd)[None, :] * rng.normal(size=(n, m)) + np.asarray(theta)[None, :]


def _bench8(rng):
    theta = np.array([0.0, 0.0, 1.5, -2.0])
    raw = theta[None, :] + rng.normal(size=(8, 1)) + rng.normal(size=(8, 4))
    return np.round(raw), None


def _binary(rng):
    n, p = 200, 0.6
    theta = np.array([0.0, -0.15, -0.3])
    yi = rng.random((n, 3)) < p
    yj = rng.random((n, 3)) < p + theta[None, :]
    return yj.astype(float) - yi.astype(float), None


def _clusters(rng):
    theta = np.array([0.0, 0.5, 1.0, 1.5])
    v = np.repeat(rng.normal(size=(30, 4)), 2, axis=0)
    d = theta[None, :] + rng.normal(size=(60, 1)) + v + 0.5 * rng.normal(size=(60, 4))
    return d, np.repeat(np.arange(30), 2)


SETTINGS = {  # name: (θ, make(rng) -> (delta, clusters), by, description)
    "bench-8": (np.array([0.0, 0.0, 1.5, -2.0]), _bench8, "magnitude",
                "m = 4, n = 8 pairs, integer Δ, θ = (0, 0, 1.5, −2)"),
    "ties-100": (np.array([0.0, 0.0, 0.8, -0.8, 1.6]),
                 lambda r: (_normal([0, 0, 0.8, -0.8, 1.6], 100, [1] * 5, r), None), "magnitude",
                 "m = 5, n = 100, normal Δ, θ = (0, 0, 0.8, −0.8, 1.6): ties in |θ|"),
    "spread-40": (np.array([0.0, 0.5, 0.5, 2.0, -2.0]),
                  lambda r: (_normal([0, 0.5, 0.5, 2.0, -2.0], 40, [3, 3, 0.3, 0.3, 0.3], r), None), "magnitude",
                  "m = 5, n = 40, θ = (0, 0.5, 0.5, 2, −2), SD (3, 3, 0.3, 0.3, 0.3)"),
    "binary-200": (np.array([0.0, -0.15, -0.3]), _binary, "magnitude",
                   "m = 3, n = 200, 0/1 correctness, θ = (0, −0.15, −0.3)"),
    "clusters-30": (np.array([0.0, 0.5, 1.0, 1.5]), _clusters, "magnitude",
                    "m = 4, 30 clusters × 2 pairs, θ = (0, 0.5, 1, 1.5)"),
    "null-8": (np.zeros(8), lambda r: (_normal([0.0] * 8, 100, [1] * 8, r), None), "magnitude",
               "m = 8, n = 100, every θ = 0"),
    "null-8 signed": (np.zeros(8), lambda r: (_normal([0.0] * 8, 100, [1] * 8, r), None), "signed",
                      "m = 8, n = 100, every θ = 0, by = signed"),
    "bench-8 signed": (np.array([0.0, 0.0, 1.5, -2.0]), _bench8, "signed",
                       "m = 4, n = 8 pairs, integer Δ, θ = (0, 0, 1.5, −2), by = signed"),
    "bench-6 signed": (np.array([0.0, 0.0, 1.5, -2.0]), lambda r: (np.round(np.array([0.0, 0.0, 1.5, -2.0])[None, :]
                                                                          + r.normal(size=(6, 1))
                                                                          + r.normal(size=(6, 4))), None),
                       "signed", "m = 4, n = 6 pairs (the fewest that can separate at 0.95), integer Δ, by = signed"),
}


def _true_ranks(theta, by):
    a = np.abs(theta) if by == "magnitude" else theta
    low = np.array([1 + int((a > x).sum()) for x in a])
    high = np.array([len(a) - int((a < x).sum()) for x in a])
    return low, high


def _per_model_sets(delta, clusters, by, rng):
    """Klein–Wright–Wieczorek: simultaneous intervals of each θ_c (max-|t| over the m means), images of |θ|."""
    if clusters is not None:
        k = int(clusters.max()) + 1
        v = np.zeros((k, delta.shape[1]))
        np.add.at(v, clusters, delta)
        w = np.bincount(clusters).astype(float)
    else:
        v, w = delta, np.ones(delta.shape[0])
    m = delta.shape[1]
    _, lo, hi, *_ = simultaneous_intervals(v, w, np.eye(m), level=LEVEL, n_resamples=10_000, rng=rng)
    if by == "magnitude":
        amin = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
        amax = np.maximum(np.abs(lo), np.abs(hi))
    else:
        amin, amax = lo, hi
    above = np.array([[amin[a] > amax[b] for b in range(m)] for a in range(m)])
    return 1 + above.sum(0), m - above.sum(1)


def run(datasets: int, seed: int, only: list[str] | None = None) -> list[str]:
    lines = ["| setting | datasets | joint coverage | vs 0.95 | width: rank_sets | exact ranks: rank_sets | "
             "width: per-model (KWW) | exact ranks: per-model | coverage: per-model | time |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s_idx, (name, (theta, make, by, text)) in enumerate(SETTINGS.items()):
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        want_lo, want_hi = _true_ranks(theta, by)
        cover = cover_kww = 0
        width, exact, width_kww, exact_kww = [], [], [], []
        for d in range(datasets):
            rng = np.random.default_rng([seed, s_idx, d])
            delta, clusters = make(rng)
            res = rank_sets(delta, clusters=clusters, by=by, rng=rng)
            lo, hi = np.array(res.rank_low), np.array(res.rank_high)
            cover += bool(np.all(lo <= want_lo) and np.all(hi >= want_hi))
            width.append(float(np.mean(hi - lo)))
            exact.append(float(np.mean(hi == lo)))
            klo, khi = _per_model_sets(delta, clusters, by, rng)
            cover_kww += bool(np.all(klo <= want_lo) and np.all(khi >= want_hi))
            width_kww.append(float(np.mean(khi - klo)))
            exact_kww.append(float(np.mean(khi == klo)))
        p = cover / datasets
        se = math.sqrt(max(p * (1 - p), LEVEL * (1 - LEVEL)) / datasets)
        verdict = "pass" if p >= LEVEL - 3 * se else "FAIL"
        pk = cover_kww / datasets
        lines.append(f"| {name}: {text} | {datasets:,} | {p:.4f} ± {se:.4f} | {(p - LEVEL) / se:+.2f} SE, {verdict} | "
                     f"{np.mean(width):.2f} | {np.mean(exact):.3f} | {np.mean(width_kww):.2f} | "
                     f"{np.mean(exact_kww):.3f} | {pk:.4f} | {time.perf_counter() - t0:.0f} s |")
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261204)
    ap.add_argument("--out", default=str(Path(__file__).with_name("CALIB_ranks.txt")))
    ap.add_argument("--only", action="append", help="run only this setting (repeatable)")
    args = ap.parse_args()
    lines = run(args.datasets, args.seed, args.only)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
