"""Calibration of the cluster test (issue 11): clustered H0 data, pair-level test beside it.

Farm-like data: each question contributes two 0/1-correctness pairs (same- and foreign-domain
statement) whose Δ are strongly correlated; under H0 the false belief changes nothing, so each
question's Δ are symmetric about 0 *as a unit*.  Flipping pairs one by one ignores that the two
pairs of a question move together and over-rejects; flipping whole questions (``cluster=``) is the
valid randomisation.  Both are exact lattice tests, so the reference for the cluster test is its
exact attainable size (as in benchmarks/calibration.py).

Usage: ``python benchmarks/calib_design.py [--datasets 10000]``; writes ``benchmarks/CALIB_DESIGN.txt``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration import ALPHA, attainable_size  # noqa: E402


def farm_h0(rng: np.random.Generator, n_q: int, rho: float) -> np.ndarray:
    """(n_q, 2) Δ: per question a shared coin decides both pairs' Δ with probability rho."""
    shared = np.where(rng.random(n_q) < 0.5, 1.0, -1.0)
    own = np.where(rng.random((n_q, 2)) < 0.5, 1.0, -1.0)
    use_shared = rng.random((n_q, 2)) < rho
    sign = np.where(use_shared, shared[:, None], own)
    nonzero = rng.random((n_q, 2)) < 0.6  # some pairs answer alike under both beliefs (Δ = 0)
    return sign * nonzero


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=20241201)
    ap.add_argument("--out", default=str(Path(__file__).with_name("CALIB_DESIGN.txt")))
    args = ap.parse_args(argv)
    from ipcausal import permutation_test

    se = math.sqrt(ALPHA * (1 - ALPHA) / args.datasets)
    lines = [f"alpha = {ALPHA}, {args.datasets:,} clustered H0 datasets per setting, SE = {se:.5f}; exact lattice "
             f"tests, two-sided; seed {args.seed}", ""]
    ok = True
    for i, (n_q, rho) in enumerate(((100, 0.9), (400, 0.9), (400, 0.5))):
        rng = np.random.default_rng([args.seed, i])
        t0 = time.perf_counter()
        rej_pair = rej_clus = 0
        size = 0.0
        for _ in range(args.datasets):
            d = farm_h0(rng, n_q, rho)
            if not d.any():
                d[0, 0] = 1.0
            sums = d.sum(axis=1)
            if not sums.any():
                sums[0] = 1.0
            rej_pair += permutation_test(d.ravel(), method="exact").pvalue <= ALPHA
            rej_clus += permutation_test(sums, method="exact").pvalue <= ALPHA
            size += attainable_size(sums)
        n = args.datasets
        rp, rc, sz = rej_pair / n, rej_clus / n, size / n
        se_sz = math.sqrt(sz * (1 - sz) / n)
        zc = (rc - ALPHA) / se
        zs = (rc - sz) / se_sz
        ok &= zc <= 3 and abs(zs) <= 3
        line = (f"{n_q} questions x 2 pairs, within-question correlation rho={rho}: cluster test {rc:.4f} "
                f"({zc:+.2f} SE of α; exact attainable size {sz:.4f}, {zs:+.2f} SE of it) | pair-level test "
                f"ignoring clusters {rp:.4f} ({(rp - ALPHA) / se:+.2f} SE of α)  [{time.perf_counter() - t0:.1f} s]")
        print(line, flush=True)
        lines.append(line)
    # continuous Δ (a rating difference averaged over raters, say): no lattice, so the cluster test's
    # size should sit within ±3 SE of α itself (Monte Carlo, L = 2,000)
    rng = np.random.default_rng([args.seed, 99])
    t0 = time.perf_counter()
    rej_pair = rej_clus = 0
    for k in range(args.datasets):
        shared = rng.normal(0, 1, (150, 1))
        d = 0.8 * shared + 0.6 * rng.normal(0, 1, (150, 2))
        d *= np.where(rng.random((150, 1)) < 0.5, 1.0, -1.0)  # H0: each question's Δ symmetric as a unit
        rej_pair += permutation_test(d.ravel(), method="monte-carlo", n_resamples=2000, rng=k).pvalue <= ALPHA
        rej_clus += permutation_test(d.sum(axis=1), method="monte-carlo", n_resamples=2000, rng=k).pvalue <= ALPHA
    rp, rc = rej_pair / args.datasets, rej_clus / args.datasets
    zc = (rc - ALPHA) / se
    ok &= abs(zc) <= 3
    line = (f"150 questions x 2 pairs, continuous Δ, shared question effect (corr 0.64), Monte Carlo L=2,000: "
            f"cluster test {rc:.4f} ({zc:+.2f} SE of α, {'within' if abs(zc) <= 3 else 'OUTSIDE'} ±3 SE) | "
            f"pair-level test {rp:.4f} ({(rp - ALPHA) / se:+.2f} SE of α)  [{time.perf_counter() - t0:.1f} s]")
    print(line, flush=True)
    lines.append(line)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
