"""Calibration of the interval for the mean of bounded Δ and of its equivalence test (issue 28).

For nine bounded distributions of Δ (symmetric, skewed both ways, sparse lattices, 0/1 with
unequal discordance, Likert, clustered) and n ∈ {10, 20, 50, 300} units, ``--reps`` seeded data
sets each (10,000 by default; set i of a row uses seed i):

* **coverage** of the true mean by the 95 % interval: the betting interval
  (:func:`ipcausal.stats.bounded_mean_test`, ``bound`` = the distribution's c) beside the
  inverted sign-flip interval of :func:`ipcausal.permutation_test` (the *shift* interval);
* **size at the margin** of the equivalence test at α = 0.05 with the margin ε equal to the true
  mean (the boundary of H0: |mean| ≥ ε): ``equivalence_test(..., bound=c)`` (betting) beside
  ``ci_method="shift"`` (the former default: sign flips of Δ ∓ ε).

The sign-flip routes are the ones ``auto`` picks (exact for n ≤ 16 and on lattices; Monte Carlo
with L = 2,000 for continuous data beyond, to keep the run to minutes).  Clustered: 4 pairs per
cluster, the unit is the cluster's mean Δ (n counts clusters).  ``--power`` adds the power of
the two equivalence tests at true mean 0 (the price of validity), and ``--compare`` the widths
of the betting interval against Hoeffding, Hoeffding's KL (Chernoff) bound, Bentkus and
Anderson's DKW bound on the same data sets.

Run ``nice -n 10 python benchmarks/calib_meanci.py``; the tables go to ``benchmarks/CALIB_meanci.txt``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402

from ipcausal import permutation_test  # noqa: E402
from ipcausal.stats import bounded_mean_test, equivalence_test  # noqa: E402

ALPHA = 0.05
NS = (10, 20, 50, 300)
_B05 = 0.5 / 5.5  # mean of Beta(0.5, 5)


def _lattice(values: list[float], probs: list[float]) -> Callable[[np.random.Generator, int], np.ndarray]:
    v, p = np.array(values, dtype=float), np.array(probs, dtype=float)
    return lambda g, n: g.choice(v, size=n, p=p / p.sum())


def _clustered(g: np.random.Generator, n: int) -> np.ndarray:
    """Cluster means of 4 pairs: a fifth of the clusters lean (Δ = 1 w.p. 0.6), the rest are noise."""
    lean = g.random(n) < 0.2
    d = np.where(lean[:, None], (g.random((n, 4)) < 0.6).astype(float),
                 g.choice([-1.0, 0.0, 1.0], size=(n, 4), p=[0.05, 0.9, 0.05]))
    return d.mean(axis=1)


LIKERT_P = [0.01, 0.02, 0.04, 0.15, 0.45, 0.2, 0.08, 0.03, 0.02]  # Δ = −4..4 of two 1–5 ratings
#: name -> (sampler(gen, n), bound c, true mean, what it is)
DISTS: dict[str, tuple[Callable[[np.random.Generator, int], np.ndarray], float, float, str]] = {
    "symmetric": (lambda g, n: 0.1 + 0.9 * (2 * g.beta(2, 2, n) - 1), 1.0, 0.1, "0.1 + 0.9(2 Beta(2,2) − 1)"),
    "skewed-right": (lambda g, n: 0.1 + 0.9 * (g.beta(0.5, 5, n) - _B05), 1.0, 0.1, "0.1 + 0.9(Beta(.5,5) − mean)"),
    "skewed-left": (lambda g, n: 0.1 - 0.9 * (g.beta(0.5, 5, n) - _B05), 1.0, 0.1, "0.1 − 0.9(Beta(.5,5) − mean)"),
    "trunc-exp": (lambda g, n: 0.5 * (np.minimum(g.exponential(1.0, n), 4.0) - (1 - math.exp(-4))) + 0.1,
                  2.0, 0.1, "0.1 + (min(Exp(1), 4) − mean)/2"),
    "sparse {-1,0,1}": (_lattice([-1, 0, 1], [0.01, 0.96, 0.03]), 1.0, 0.02, "P = (.01, .96, .03)"),
    "0/1 discordant": (_lattice([-1, 0, 1], [0.05, 0.8, 0.15]), 1.0, 0.1, "P = (.05, .80, .15)"),
    "Bernoulli": (_lattice([0, 1], [0.9, 0.1]), 1.0, 0.1, "Δ ∈ {0, 1}, P(1) = 0.1"),
    "Likert": (_lattice(list(range(-4, 5)), LIKERT_P), 4.0, float(np.dot(range(-4, 5), LIKERT_P)), "Δ ∈ −4..4"),
    "clustered": (_clustered, 1.0, 0.2 * 0.6, "mean of 4 pairs, 20 % of clusters lean"),
}


def _se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / reps)


def _shift_pvalue_routes(d: np.ndarray) -> dict[str, object]:
    return dict(n_resamples=2000) if d.size > 16 and not np.allclose(d * 4, np.rint(d * 4)) else {}


def calibrate(reps: int) -> list[dict[str, object]]:
    rows = []
    for name, (draw, c, mu, _) in DISTS.items():
        for n in NS:
            t0 = time.perf_counter()
            cov_new = cov_old = size_new = size_old = 0
            for i in range(reps):
                g = np.random.default_rng(i)
                d = draw(g, n)
                cov_new += bounded_mean_test(d, bound=c, m0=mu).pvalue > ALPHA
                size_new += equivalence_test(d, margin=mu, bound=c, alpha=ALPHA).equivalent
                kw = _shift_pvalue_routes(d)
                old = permutation_test(d, rng=i, **kw)
                cov_old += old.ci_low <= mu <= old.ci_high
                size_old += equivalence_test(d, margin=mu, alpha=ALPHA, ci_method="shift", rng=i, **kw).equivalent
            rows.append(dict(dist=name, n=n, cov_new=cov_new / reps, cov_old=cov_old / reps, size_new=size_new / reps,
                             size_old=size_old / reps, route=old.method, secs=time.perf_counter() - t0))
            print(rows[-1], flush=True)
    return rows


POWER_DISTS = {
    "symmetric {-1,0,1}": (_lattice([-1, 0, 1], [0.2, 0.6, 0.2]), 1.0, 0.1),
    "0/1 discordant, mean 0": (_lattice([-1, 0, 1], [0.1, 0.8, 0.1]), 1.0, 0.1),
    "Likert, mean 0": (_lattice(list(range(-4, 5)), [0.01, 0.03, 0.06, 0.2, 0.4, 0.2, 0.06, 0.03, 0.01]), 4.0, 0.3),
    "continuous, mean 0": (lambda g, n: 2 * g.beta(2, 2, n) - 1, 1.0, 0.1),
}


def power(reps: int) -> list[dict[str, object]]:
    rows = []
    for name, (draw, c, eps) in POWER_DISTS.items():
        for n in (50, 300, 1000):
            new = old = 0
            for i in range(reps):
                d = draw(np.random.default_rng(10**6 + i), n)
                new += equivalence_test(d, margin=eps, bound=c).equivalent
                kw = _shift_pvalue_routes(d)
                old += equivalence_test(d, margin=eps, ci_method="shift", rng=i, **kw).equivalent
            rows.append(dict(dist=name, n=n, eps=eps, power_new=new / reps, power_old=old / reps))
            print(rows[-1], flush=True)
    return rows


# -- the other distribution-free intervals for a bounded mean (data scaled to [0, 1]) -------------
def _hoeffding(y: np.ndarray, a: float) -> tuple[float, float]:
    h = math.sqrt(math.log(1 / a) / (2 * y.size))
    return max(0.0, y.mean() - h), min(1.0, y.mean() + h)


def _kl(p: float, q: float) -> float:
    q = min(max(q, 1e-300), 1 - 1e-16)
    return float(special.xlogy(p, p / q) + special.xlogy(1 - p, (1 - p) / (1 - q)))


def _solve(f: Callable[[float], bool], inside: float, outside: float) -> float:
    for _ in range(60):
        mid = 0.5 * (inside + outside)
        inside, outside = (mid, outside) if f(mid) else (inside, mid)
    return inside


def _chernoff(y: np.ndarray, a: float) -> tuple[float, float]:
    m, t = float(y.mean()), math.log(1 / a) / y.size
    lo = 0.0 if _kl(m, 0.0) <= t else _solve(lambda q: _kl(m, q) <= t, m, 0.0)
    hi = 1.0 if _kl(m, 1.0) <= t else _solve(lambda q: _kl(m, q) <= t, m, 1.0)
    return lo, hi


def _bentkus_tail(n: int, q: float, s: float) -> float:
    """e · P°(Bin(n, q) ≥ s), P° the log-linear interpolation of the binomial tail (Bentkus 2004)."""
    k = math.floor(s)
    t0, t1 = stats.binom.sf(k - 1, n, q), stats.binom.sf(k, n, q)
    f = s - k
    return math.e * (t0 ** (1 - f)) * (t1 ** f) if t1 > 0 else (math.e * t0 if f == 0 else 0.0)


def _bentkus(y: np.ndarray, a: float) -> tuple[float, float]:
    n, s = y.size, float(y.sum())
    lo = _solve(lambda q: _bentkus_tail(n, q, s) > a, float(y.mean()), 0.0)
    hi = 1.0 - _solve(lambda q: _bentkus_tail(n, q, n - s) > a, 1.0 - float(y.mean()), 0.0)
    return lo, hi


def _anderson(y: np.ndarray, a: float) -> tuple[float, float]:
    """Anderson's bound: the mean of the DKW band's extreme distribution (one-sided Massart constant)."""
    n, e = y.size, math.sqrt(math.log(1 / a) / (2 * y.size))
    z = np.sort(y)

    def lower(v: np.ndarray) -> float:  # ∫ max(0, S_n(t) − e) dt, S_n the empirical survival function
        edges = np.r_[0.0, v]
        surv = np.maximum(0.0, (n - np.arange(n)) / n - e)  # S_n on [v_(i-1), v_(i))
        return float(np.sum(np.diff(edges) * surv))

    return lower(z), 1.0 - lower(np.sort(1.0 - y))


def compare(reps: int) -> list[dict[str, object]]:
    rows = []
    a = ALPHA / 2
    for name in ("symmetric", "skewed-right", "sparse {-1,0,1}", "0/1 discordant", "Likert", "Bernoulli"):
        draw, c, mu, _ = DISTS[name]
        for n in NS:
            widths: dict[str, list[float]] = {k: [] for k in ("betting", "hoeffding", "chernoff", "bentkus", "anderson")}
            cover: dict[str, int] = {k: 0 for k in widths}
            for i in range(reps):
                d = draw(np.random.default_rng(i), n)
                y = (d + c) / (2 * c)
                r = bounded_mean_test(d, bound=c)
                ends = {"betting": ((r.ci_low + c) / (2 * c), (r.ci_high + c) / (2 * c)), "hoeffding": _hoeffding(y, a),
                        "chernoff": _chernoff(y, a), "bentkus": _bentkus(y, a), "anderson": _anderson(y, a)}
                for k, (lo, hi) in ends.items():
                    widths[k].append(2 * c * (hi - lo))
                    cover[k] += lo <= (mu + c) / (2 * c) <= hi
            rows.append(dict(dist=name, n=n, **{f"w_{k}": float(np.mean(v)) for k, v in widths.items()},
                             **{f"cov_{k}": cover[k] / reps for k in widths}))
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10_000)
    ap.add_argument("--power", type=int, default=2000, help="data sets per power row (0: skip)")
    ap.add_argument("--compare", type=int, default=1000, help="data sets per width row (0: skip)")
    ap.add_argument("--out", "-o", default=str(Path(__file__).with_name("CALIB_meanci.txt")))
    args = ap.parse_args()
    t0 = time.perf_counter()
    lines = [f"# calib_meanci.py --reps {args.reps} --power {args.power} --compare {args.compare}",
             f"# {machine()}", ""]
    rows = calibrate(args.reps)
    lines += [f"## Coverage of the 95 % interval and size of TOST at the margin (alpha = {ALPHA}), "
              f"{args.reps:,} seeded sets per row; 3 SE at 0.05 = {3 * _se(ALPHA, args.reps):.4f}", "",
              "| distribution | n | coverage betting | coverage shift | size betting TOST | size shift TOST | "
              "shift route | s |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['dist']} | {r['n']} | {r['cov_new']:.4f} | {r['cov_old']:.4f} | {r['size_new']:.4f} | "
                     f"{r['size_old']:.4f} | {r['route']} | {r['secs']:.0f} |")
    lines += ["", "distributions: " + "; ".join(f"{k}: {v[3]} (c = {v[1]:g}, mean {v[2]:.4g})"
                                                for k, v in DISTS.items()), ""]
    if args.power:
        prow = power(args.power)
        lines += [f"## Power of TOST at true mean 0 (P(equivalent)), {args.power:,} sets per row", "",
                  "| distribution | n | margin | betting | shift |", "|---|---|---|---|---|"]
        lines += [f"| {r['dist']} | {r['n']} | {r['eps']:g} | {r['power_new']:.3f} | {r['power_old']:.3f} |"
                  for r in prow]
        lines.append("")
    if args.compare:
        crow = compare(args.compare)
        keys = ("betting", "hoeffding", "chernoff", "bentkus", "anderson")
        lines += [f"## Mean width (coverage) of distribution-free 95 % intervals for the mean, "
                  f"{args.compare:,} sets per row", "",
                  "| distribution | n | " + " | ".join(keys) + " |", "|---|---|" + "---|" * len(keys)]
        for r in crow:
            lines.append(f"| {r['dist']} | {r['n']} | " + " | ".join(
                f"{r['w_' + k]:.3f} ({r['cov_' + k]:.3f})" for k in keys) + " |")
        lines.append("")
    lines.append(f"# total {time.perf_counter() - t0:.0f} s")
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
