"""Calibration of prediction-powered inference with human scores (SPEC §11 "The judge is a measurement").

Each set is one background pair of N = 400 pairs with no effect on the human scale: per side a human
score h ~ N(0, 1), so Δh = h_j − h_i has mean 0.  A judge scores every pair; people score a uniformly
random subset of n pairs (n = 40, 80, 200).  Three judges, per side:

* ``biased``: f = h + e (e ~ N(0, 0.7²)) plus 0.6 on side j: the judge's error differs by background,
  so Δf = Δh + 0.6 + noise — the judge alone "finds" an effect that people do not see;
* ``noisy``: f = h + e, unbiased (e ~ N(0, 0.7²));
* ``noise``: f ~ N(0, 1) independent of h: a judge that is only noise.

Per set: :func:`ipcausal.stats.ppi.ppi_mean_test` (PPI++, power-tuned λ, t interval at 95 %) on the n
labelled Δh and Δf and the other N − n Δf, the human-only t interval of the n Δh, and the judge-only
test of mean Δf = 0 over all N pairs (a t test: at N = 400 it agrees with the package's sign-flip
test, checked on ``CHECK`` sets with :func:`ipcausal.stats.permutation_test`).  PPI is computed for all
sets at once in numpy (the same formulas) and checked against the public ``ppi_mean_test`` on the
first ``CHECK`` sets of every row (the row says on how many they agree to 1e-9).

Coverage passes when it lies within 0.95 ± 3 Monte Carlo SE.

Usage: ``python benchmarks/calib_ppi.py [--sets 10000] [--seed 0]``; writes ``benchmarks/CALIB_ppi.txt``
(Markdown table lines).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from scipy import special

from ipcausal.stats import permutation_test
from ipcausal.stats.ppi import ppi_mean_test

N_PAIRS = 400
LEVEL = 0.95
CHECK = 200
JUDGES = ("biased", "noisy", "noise")
SIZES = (40, 80, 200)


def _simulate(judge: str, sets: int, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(Δh, Δf) of ``sets`` sets × N_PAIRS pairs."""
    h = gen.normal(0.0, 1.0, size=(sets, N_PAIRS, 2))
    if judge == "noise":
        f = gen.normal(0.0, 1.0, size=h.shape)
    else:
        f = h + gen.normal(0.0, 0.7, size=h.shape)
        if judge == "biased":
            f[..., 1] += 0.6
    return h[..., 1] - h[..., 0], f[..., 1] - f[..., 0]


def _t_interval(est: np.ndarray, se: np.ndarray, df: int) -> tuple[np.ndarray, np.ndarray]:
    q = special.stdtrit(df, 0.5 + LEVEL / 2)
    return est - q * se, est + q * se


def _ppi(dh: np.ndarray, df_: np.ndarray, lab: np.ndarray, rest: np.ndarray) -> dict[str, np.ndarray]:
    """Vectorised PPI++ (the formulas of ipcausal.stats.ppi) for every set."""
    rows = np.arange(dh.shape[0])[:, None]
    h, f, fu = dh[rows, lab], df_[rows, lab], df_[rows, rest]
    n, big_n = h.shape[1], fu.shape[1]
    cov = np.mean((h - h.mean(1, keepdims=True)) * (f - f.mean(1, keepdims=True)), axis=1)
    var_all = np.var(np.concatenate([f, fu], axis=1), axis=1, ddof=1)
    lam = np.clip(np.where(var_all > 0, cov / ((1 + n / big_n) * var_all), 0.0), 0.0, 1.0)
    r = h - lam[:, None] * f
    est = lam * fu.mean(1) + r.mean(1)
    se = np.sqrt(lam**2 * np.var(fu, axis=1, ddof=1) / big_n + np.var(r, axis=1, ddof=1) / n)
    lo, hi = _t_interval(est, se, n - 1)
    h_se = np.std(h, axis=1, ddof=1) / math.sqrt(n)
    hlo, hhi = _t_interval(h.mean(1), h_se, n - 1)
    return {"est": est, "lo": lo, "hi": hi, "lam": lam, "hlo": hlo, "hhi": hhi, "h": h, "f": f, "fu": fu}


def _row(judge: str, n: int, sets: int, seed: int) -> tuple[str, bool]:
    t0 = time.perf_counter()
    gen = np.random.default_rng([seed, JUDGES.index(judge), n])
    dh, df_ = _simulate(judge, sets, gen)
    order = np.argsort(gen.random((sets, N_PAIRS)), axis=1)  # a uniformly random labelled subset per set
    lab, rest = order[:, :n], order[:, n:]
    got = _ppi(dh, df_, lab, rest)
    cover = float(np.mean((got["lo"] <= 0.0) & (0.0 <= got["hi"])))
    cover_h = float(np.mean((got["hlo"] <= 0.0) & (0.0 <= got["hhi"])))
    width, width_h = got["hi"] - got["lo"], got["hhi"] - got["hlo"]
    se_judge = np.std(df_, axis=1, ddof=1) / math.sqrt(N_PAIRS)
    p_judge = 2 * special.stdtr(N_PAIRS - 1, -np.abs(df_.mean(1) / se_judge))
    judge_rej = float(np.mean(p_judge <= 1 - LEVEL))
    agree = 0
    perm_agree = 0
    for k in range(min(CHECK, sets)):
        res = ppi_mean_test(got["h"][k], got["f"][k], got["fu"][k], confidence_level=LEVEL)
        agree += bool(np.allclose([res.statistic, res.ci_low, res.ci_high, res.lam],
                                  [got["est"][k], got["lo"][k], got["hi"][k], got["lam"][k]], rtol=1e-9, atol=1e-12))
        pt = permutation_test(df_[k], method="monte-carlo", n_resamples=1999, rng=k)
        perm_agree += (pt.pvalue <= 1 - LEVEL) == (p_judge[k] <= 1 - LEVEL)
    se = math.sqrt(LEVEL * (1 - LEVEL) / sets)
    ok = abs(cover - LEVEL) <= 3 * se
    secs = time.perf_counter() - t0
    line = (f"| {judge} | {n} | {sets:,} | {cover:.4f} ± {se:.4f} | {cover_h:.4f} | {np.median(width):.3f} | "
            f"{np.median(width_h):.3f} | {np.mean(width / width_h):.3f} | {np.mean(got['lam']):.3f} | "
            f"{judge_rej:.4f} | {'pass' if ok else 'FAIL'} | {agree}/{min(CHECK, sets)}, {perm_agree}/{min(CHECK, sets)} "
            f"| {secs:.0f} s |")
    return line, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--out", default=str(Path(__file__).with_name("CALIB_ppi.txt")))
    args = ap.parse_args()
    head = ["| judge | n labelled | sets | PPI++ coverage (95 %) | human-only coverage | PPI width (median) | "
            "human-only width (median) | width ratio (mean) | mean λ | judge-only test rejects H0 (α = 0.05) | "
            "coverage within ±3 SE | PPI = public function, judge t = sign-flip verdict (first sets) | time |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines = list(head)
    for judge in JUDGES:
        for n in SIZES:
            line, _ = _row(judge, n, args.sets, args.seed)
            print(line, flush=True)
            lines.append(line)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
