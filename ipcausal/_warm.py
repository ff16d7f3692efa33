"""Compile every numba kernel family once, so that the first ``ipcausal test`` after install is fast.

``make install`` runs ``python -m ipcausal._warm``: one tiny call of each route (the exact
enumeration, the exact lattice DP, the Monte Carlo kernels single- and multi-threaded, the
saddlepoint, the sign tests, every multiple-testing correction in one and many families, and one
:func:`ipcausal.test` of each outcome).  numba writes the compiled code to its on-disk cache
(``cache=True``), which later processes load instead of compiling.  Then it times every Monte
Carlo kernel variant on this CPU (:func:`ipcausal.stats.calibration.calibrate`, about a second)
and stores the timings beside numba's cache, where ``auto`` reads them.  Prints the seconds it
took and the variants chosen.  ``--no-calibrate`` skips the timing.
"""

from __future__ import annotations

import sys
import time
import warnings


def warm() -> float:
    """Run the tiny calls; returns the seconds taken."""
    import numpy as np

    import ipcausal
    from ipcausal import adjust_pvalues, permutation_test, sign_test
    from ipcausal.stats import sign_tests
    from ipcausal.stats.multitest import CORRECTIONS

    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    small = rng.normal(0.2, 1.0, 20)  # above the numpy twin's 16: the numba enumeration
    lattice = rng.integers(-2, 3, 300).astype(float)
    cont = rng.normal(0.1, 1.0, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        permutation_test(small, method="exact")
        permutation_test(lattice, method="exact")
        for n in (40, 5000):  # single-threaded and parallel Monte Carlo
            permutation_test(rng.normal(0.1, 1.0, n), method="monte-carlo", n_resamples=20_000, rng=1)
        permutation_test(lattice[:200], method="monte-carlo", n_resamples=20_000, rng=1)
        permutation_test(cont, method="saddlepoint")
        sign_test(rng.uniform(0, 1, 30), m0=0.8, alternative="less")
        sign_tests([5, 0, 3], [1, 4, 3])
        p = rng.uniform(0, 1, (3, 40))
        for c in CORRECTIONS:
            adjust_pvalues(p[0], c)
            adjust_pvalues(p, c, axis=-1)
        recs = [{"pair_id": k, "background_i": "a", "background_j": "b", "x_i": "q", "x_j": "q",
                 "score_i": float(k % 4), "score_j": float((k * 7) % 5), "similarity": (k % 10) / 10}
                for k in range(60)]
        ps = ipcausal.PairSet.from_records(recs)
        ipcausal.test(ps.drop_columns("similarity"))
        ipcausal.test(ps.drop_columns("score_i", "score_j"))
    return time.perf_counter() - t0


def calibrate() -> tuple[float, dict[str, str]]:
    """Time the kernel variants and store the choice (:mod:`ipcausal.stats.calibration`)."""
    from ipcausal.stats import calibration as _calibrate

    t0 = time.perf_counter()
    entry = _calibrate.calibrate()
    return time.perf_counter() - t0, _calibrate.describe(entry)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    seconds = warm()
    print(f"ipcausal: compiled the statistics kernels in {seconds:.1f} s (cached for later runs)", file=sys.stderr)
    if "--no-calibrate" not in args:
        from ipcausal.stats.calibration import cache_file

        took, chosen = calibrate()
        text = ", ".join(f"{fam} {name}" for fam, name in chosen.items())
        print(f"ipcausal: timed the Monte Carlo kernels in {took:.1f} s; at n = 1,650, L = 100,000 auto runs "
              f"{text} (stored in {cache_file()})", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
