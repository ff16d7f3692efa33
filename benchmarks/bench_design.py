"""Speed of the design-aware test (issue 11): the cluster test against the plain test, side by side.

Target: the cluster test is no slower than the plain test on the same number of clusters (the
cluster sums are one bincount; the test itself is the same kernel).  Farm-like data: 1,852
questions × 2 pairs of 0/1 correctness, exact lattice route and Monte Carlo (L = 100,000).

Usage: ``python benchmarks/bench_design.py``; writes ``benchmarks/DESIGN.txt`` (Markdown rows).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import fmt_row, timeit  # noqa: E402


def main() -> int:
    import ipcausal

    rng = np.random.default_rng(0)
    n_q = 1852
    rows, plain_rows = [], []
    for q in range(n_q):
        base = rng.integers(0, 2)
        for dom in ("same", "foreign"):
            rows.append({"pair_id": f"{q}-{dom}", "background_i": "true_belief", "background_j": "false_belief",
                         "x_i": "", "x_j": "", "score_i": int(base), "score_j": int(rng.integers(0, 2)),
                         "question_id": f"q{q}"})
        plain_rows.append({"pair_id": q, "background_i": "true_belief", "background_j": "false_belief", "x_i": "",
                           "x_j": "", "score_i": 0, "score_j": int(rng.integers(-2, 3))})
    clustered = ipcausal.PairSet.from_records(rows)
    plain = ipcausal.PairSet.from_records(plain_rows)
    out = ["| measurement | ipcausal.test(cluster=...) on 3,704 pairs / 1,852 clusters | ipcausal.test on 1,852 pairs "
           "| ratio (plain / cluster) |", "|---|---|---|---|"]
    for method, kw in (("exact", {}), ("monte-carlo", {"n_resamples": 100_000})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_c = timeit(lambda: ipcausal.test(clustered, cluster="question_id", method=method, rng=1, **kw), repeats=5)
            t_p = timeit(lambda: ipcausal.test(plain, method=method, rng=1, **kw), repeats=5)
        ratio = t_p["median"] / t_c["median"]
        verdict = "met" if ratio >= 0.9 else "NOT met"
        line = f"| {method} | {fmt_row(t_c)} | {fmt_row(t_p)} | {ratio:.2f}× ({verdict}: no slower, within 10 %) |"
        print(line, flush=True)
        out.append(line)
    # the test step alone (group, orient, sum per cluster, then the same kernel), without reading,
    # PB (which sees twice the responses when there are two pairs per cluster) and the Report
    from ipcausal.stats.permutation import permutation_test
    from ipcausal.study.groups import groups

    for method, kw in (("exact", {}), ("monte-carlo", {"n_resamples": 100_000})):
        def clus() -> float:
            (g,) = groups(clustered, "interval", cluster="question_id")
            return permutation_test(g.values, method=method, rng=1, **kw).pvalue

        def plain_step() -> float:
            (g,) = groups(plain, "interval")
            return permutation_test(g.values, method=method, rng=1, **kw).pvalue

        t_c, t_p = timeit(clus, repeats=7), timeit(plain_step, repeats=7)
        ratio = t_p["median"] / t_c["median"]
        verdict = "met" if ratio >= 0.9 else "NOT met"
        line = (f"| {method}, the test step only (groups + sign-flip test) | {fmt_row(t_c)} | {fmt_row(t_p)} | "
                f"{ratio:.2f}× ({verdict}: no slower, within 10 %) |")
        print(line, flush=True)
        out.append(line)
    (HERE / "DESIGN.txt").write_text("\n".join(out) + "\n")
    print(f"wrote {HERE / 'DESIGN.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
