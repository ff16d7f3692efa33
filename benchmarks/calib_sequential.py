"""Calibration of the anytime-valid sequential tests: size and confidence-sequence coverage under
continuous monitoring (issue 12).

For each kind of H0 stream — continuous bounded (a centred, skewed Beta(2, 5) value, |Δ| ≤ 1),
Likert (the difference of two exchangeable 5-point ratings, |Δ| ≤ 4) and 0/1 (the difference of
two Bernoulli(0.3) outcomes, |Δ| ≤ 1) — ``--streams`` (default 20,000) seeded streams of
``--length`` (default 1,000) pairs are monitored after every pair by the numba kernel (the same
step as :func:`ipcausal.stats.sequential_test`), with each bet (``method=``) under the mean null, and
the default bet under the symmetry null where the stream is symmetric (Likert, 0/1, and a
symmetric continuous stream U(−1, 1)³) — these with the empirical-Bernstein CS — and the default
bet with the (default) betting CS.  A stream counts as rejected when its e-value reached
1/α at any of the 1,000 looks; it counts as covered when the running-intersection confidence
sequence contained the true mean (0) at every look.  Targets: rejection rate ≤ α + 3 SE,
coverage ≥ 1 − α − 3 SE (SE the binomial standard error at α).  A second table checks the
coverage of both confidence sequences on streams with an effect whose true mean lies between
the betting CS's grid points.

Run it with ``python benchmarks/calib_sequential.py`` (``--streams 2000`` for a quick look); the
table goes to ``benchmarks/CALIB_SEQUENTIAL.txt``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import sys
import time
from pathlib import Path

import numpy as np

import ipcausal
from ipcausal.stats import betting
from ipcausal.stats import sequential as seq
from ipcausal.stats._kernels import sequential as kern

HERE = Path(__file__).resolve().parent
ALPHA = 0.05
CHUNK = 2000


SHIFTED = {  # streams with an effect, true mean off the betting CS's grid: (kind, true mean of Δ / bound)
    "continuous-shifted": 2.0 / 7.0 - 0.2,
    "likert-shifted": (0.1 * 0 + 0.2 * 1 + 0.3 * 2 + 0.25 * 3 + 0.15 * 4 - 2.0) / 4.0,
    "binary-shifted": 0.335 - 0.2,
}


def _streams(kind: str, rng: np.random.Generator, rows: int, length: int) -> tuple[np.ndarray, float]:
    """(Δ streams, bound) for one chunk of streams of ``kind`` (H0 unless it ends in -shifted)."""
    if kind == "continuous-shifted":
        return rng.beta(2.0, 5.0, (rows, length)) - 0.2, 1.0
    if kind == "likert-shifted":
        p = [0.1, 0.2, 0.3, 0.25, 0.15]
        return (rng.choice(5, (rows, length), p=p) - 2.0), 4.0
    if kind == "binary-shifted":
        return (rng.random((rows, length)) < 0.335).astype(np.float64) - (rng.random((rows, length)) < 0.2), 1.0
    if kind == "continuous":
        return rng.beta(2.0, 5.0, (rows, length)) - 2.0 / 7.0, 1.0
    if kind == "continuous-symmetric":
        return rng.uniform(-1.0, 1.0, (rows, length)) ** 3, 1.0
    if kind == "likert":
        p = [0.1, 0.25, 0.3, 0.25, 0.1]
        return (rng.choice(5, (rows, length), p=p) - rng.choice(5, (rows, length), p=p)).astype(np.float64), 4.0
    return (rng.random((rows, length)) < 0.3).astype(np.float64) - (rng.random((rows, length)) < 0.3), 1.0


def calibrate(kind: str, method: str, null: str, ci_method: str, streams: int, length: int, seed: int,
              mean: float = 0.0) -> dict:
    rng = np.random.default_rng(seed)
    template = seq.sequential_state(bound=1.0, method=method, null=null, ci_method=ci_method).vector
    lams = betting._GRID if method == "mixture" else betting._NO_GRID
    ms = betting._cs_grid(ci_method)
    cs0 = kern.GRID0 + 2 * betting._test_grid(method)
    rejected = covered = 0
    t0 = time.perf_counter()
    for start in range(0, streams, CHUNK):
        xs, bound = _streams(kind, rng, min(CHUNK, streams - start), length)
        stop, cov, _ = kern.seq_monitor_many(np.ascontiguousarray(xs / bound), mean, betting._CODES[method],
                                             kern.TWO_SIDED, betting._MAX_BET[method], lams,
                                             math.log(2 / ALPHA), math.log(1 / ALPHA), template, null == "symmetry",
                                             ms, betting._GRID, cs0)
        rejected += int(np.count_nonzero(stop >= 0))
        covered += int(cov.sum())
    se = math.sqrt(ALPHA * (1 - ALPHA) / streams)
    return dict(kind=kind, method=method, null=null, ci=ci_method, streams=streams, length=length, rate=rejected / streams,
                coverage=covered / streams, se=se, seconds=time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=20_000)
    ap.add_argument("--length", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--out", default=str(HERE / "CALIB_SEQUENTIAL.txt"))
    args = ap.parse_args(argv)
    # compile once outside the timings
    for method in seq.METHODS:
        for ci in seq.CI_METHODS:
            calibrate("binary", method, "mean", ci, 2, 3, 0)
    eb = "empirical-bernstein"
    runs = [(k, m, "mean", eb) for k in ("continuous", "likert", "binary") for m in seq.METHODS]
    runs += [(k, "mixture", "symmetry", eb) for k in ("continuous-symmetric", "likert", "binary")]
    runs += [(k, "mixture", "mean", "betting") for k in ("continuous", "likert", "binary")]
    rows = [calibrate(k, m, n, c, args.streams, args.length, args.seed + i) for i, (k, m, n, c) in enumerate(runs)]
    lines = [f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M UTC}: python benchmarks/calib_sequential.py "
             f"--streams {args.streams} --length {args.length} --seed {args.seed}  (α = {ALPHA}, two-sided, "
             f"monitored after every pair, ipcausal {ipcausal.__version__})", "",
             "| H0 stream | null | method | CS | streams × pairs | rejection rate (any look) | ≤ α + 3 SE | "
             "CS coverage (every look) | ≥ 1 − α − 3 SE | time |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['kind']} | {r['null']} | {r['method']} | {r['ci']} | {r['streams']:,} × {r['length']:,} | "
                     f"{100 * r['rate']:.2f} % | {'yes' if r['rate'] <= ALPHA + 3 * r['se'] else 'NO'} | "
                     f"{100 * r['coverage']:.2f} % | {'yes' if r['coverage'] >= 1 - ALPHA - 3 * r['se'] else 'NO'} | "
                     f"{r['seconds']:.1f} s |")
    lines.append("")
    lines += ["Coverage with an effect (the true mean off the betting CS's grid; the rejection rate is power here):", "",
              "| stream | true mean of Δ/bound | CS | streams × pairs | rejected H0 | CS coverage (every look) | "
              "≥ 1 − α − 3 SE |", "|---|---|---|---|---|---|---|"]
    for i, (kind, mu) in enumerate(SHIFTED.items()):
        for ci in seq.CI_METHODS:
            r = calibrate(kind, "mixture", "mean", ci, args.streams, args.length, args.seed + 100 + i, mean=mu)
            lines.append(f"| {kind} | {mu:.4f} | {ci} | {r['streams']:,} × {r['length']:,} | {100 * r['rate']:.1f} % | "
                         f"{100 * r['coverage']:.2f} % | {'yes' if r['coverage'] >= 1 - ALPHA - 3 * r['se'] else 'NO'} |")
    lines.append("")
    lines.append(f"SE at α: {100 * rows[0]['se']:.2f} points.  The empirical-Bernstein CS does not depend on the "
                 "bet; the betting CS (the default) counts as covering when the true mean is strictly inside "
                 "(its reported ends are excluded grid points; under H0 the mean 0 is one of them).")
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
