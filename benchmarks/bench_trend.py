"""The trend and heterogeneity tests: speed against the Westfall–Young call on the same array and numpy.

What it times (one run, side by side, warm: compilation and numpy's first call excluded)
-------------------------------------------------------------------------------------------
1. ``ipcausal.stats.trend_test`` on 518 prompts × 3 levels (the essay case's SAE/AAE/ESL
   scores, the released GPT-4 AES scores from ``../shared/data`` when present, else simulated
   integer scores), L = 100,000 relabelings, against ``ipcausal.stats.westfall_young`` on the same
   array and L (the same relabeling tables and random stream; target: trend ≤ 2× its time),
   and against :func:`trend_numpy`, the same randomisation vectorised in numpy.
2. ``ipcausal.stats.heterogeneity_test`` on the same array (columns read as cues), same L.
3. CPU time on one thread (the kernels forced serial), which a shared machine disturbs less.

Usage: ``python benchmarks/bench_trend.py [--resamples 100000] [--repeats 7]``; writes
``benchmarks/TREND.txt`` (Markdown table lines).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_row, machine, timeit  # noqa: E402
from bench_joint import cpu_time, essay_scores  # noqa: E402

TOL = 1e-9


def trend_numpy(y: np.ndarray, n_resamples: int, seed: int, chunk: int = 2_000) -> float:
    """Two-sided p of the trend test, numpy only: per prompt the value of T under each of the
    k! relabelings, a uniform relabeling per prompt and resample (numpy's generator)."""
    n, k = y.shape
    perms = np.array(list(itertools.permutations(range(k))))
    w = np.arange(k) - (k - 1) / 2
    v = (y[:, perms] @ w).ravel()  # (n · P,)
    t = float((y @ w).sum())
    thr = abs(t) - TOL * float(np.ptp(v.reshape(n, -1), axis=1).sum())
    offsets = (np.arange(n) * len(perms))[None, :]
    rng = np.random.default_rng(seed)
    ge = done = 0
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        ge += int((np.abs(v[rng.integers(0, len(perms), size=(b, n)) + offsets].sum(axis=1)) >= thr).sum())
        done += b
    return (ge + 1) / (n_resamples + 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--resamples", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=str(Path(__file__).with_name("TREND.txt")))
    args = ap.parse_args(argv)
    import ipcausal
    from ipcausal.stats.ordered import heterogeneity_test, trend_test

    L = args.resamples
    y = essay_scores()
    source = "released GPT-4 AES scores, SAE < AAE < ESL as levels" if y is not None else "simulated scores 24–45"
    if y is None:
        y = np.random.default_rng(0).integers(24, 46, size=(518, 3)).astype(float)
    info = machine()
    lines = [f"Machine: {info.get('Model name', '?')}, numba threads {info['numba threads']}, "
             f"load {info.get('load average (1, 5, 15 min)', '?')}", ""]
    t_tr = timeit(lambda: trend_test(y, n_resamples=L, rng=1), repeats=args.repeats)
    t_wy = timeit(lambda: ipcausal.stats.westfall_young(y, n_resamples=L, rng=1), repeats=args.repeats)
    t_het = timeit(lambda: heterogeneity_test(y, n_resamples=L, rng=1), repeats=args.repeats)
    t_np = timeit(lambda: trend_numpy(y, L, 1), repeats=max(1, args.repeats // 3))
    res = t_tr["value"]
    ratio = t_tr["median"] / t_wy["median"]
    lines += [
        f"{y.shape[0]} prompts × {y.shape[1]} levels ({source}), L = {L:,}:",
        "",
        "| call | time (median, min–max) | ratio to Westfall–Young | p |",
        "|---|---|---|---|",
        f"| ipcausal.stats.trend_test (numba) | {fmt_row(t_tr)} | {ratio:.2f}× "
        f"({'within' if ratio <= 2 else 'OVER'} the 2× target) | {res.pvalue:.5f} ± {res.pvalue_se:.5f} |",
        f"| ipcausal.stats.westfall_young (numba), same array | {fmt_row(t_wy)} | 1× | {t_wy['value'].pvalue:.5f} (omnibus) |",
        f"| ipcausal.stats.heterogeneity_test (numba), same array | {fmt_row(t_het)} | "
        f"{t_het['median'] / t_wy['median']:.2f}× | {t_het['value'].pvalue:.5f} |",
        f"| numpy, vectorised (same randomisation as trend_test) | {fmt_row(t_np)} | "
        f"{t_np['median'] / t_wy['median']:.0f}× ({t_np['median'] / t_tr['median']:.0f}× trend_test) | "
        f"{t_np['value']:.5f} |",
        "",
    ]
    reps = max(3, args.repeats // 2)
    c_tr = cpu_time(lambda: trend_test(y, n_resamples=L, rng=1, _threads=1), reps)
    c_wy = cpu_time(lambda: ipcausal.stats.westfall_young(y, n_resamples=L, rng=1, _threads=1), reps)
    c_np = cpu_time(lambda: trend_numpy(y, L, 1), 1)
    lines += [
        "CPU time on one thread (smallest of the repeats; the kernels forced serial):",
        "",
        "| trend_test | westfall_young | ratio | numpy | numpy / trend_test |",
        "|---|---|---|---|---|",
        f"| {c_tr * 1e3:.2f} ms | {c_wy * 1e3:.2f} ms | {c_tr / c_wy:.2f}× | {c_np * 1e3:.0f} ms | {c_np / c_tr:.0f}× |",
        "",
    ]
    text = "\n".join(lines)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
