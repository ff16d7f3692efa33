"""Calibration and power of the joint test across backgrounds and of the distribution test.

Settings (α = 0.05, every dataset seeded by ``[--seed, setting, dataset]``)
--------------------------------------------------------------------------
1. **Westfall–Young family-wise error with shared responses** (``--datasets`` H0 datasets,
   default 10,000): k = 3 backgrounds, one response per prompt and background, so the three
   pairs share responses; prompt effects correlated across backgrounds (y = u_p + e_pc,
   corr 0.5), normal and integer (rounded, essay-like) scores; L = 999.  Family-wise error =
   P(some adjusted p ≤ α) = P(omnibus p ≤ α); passes within ±3 SE of α.  Beside it, the FWER
   of Bonferroni and Holm on the per-pair sign-flip p's (the study's route), and a partial
   null (background 2 shifted: the FWER over the one true null pair, 0–1), for the step-down
   and for closed testing (``procedure="closed"``, ≤ α by construction).
2. **Distribution test size** (``--datasets`` H0 datasets): 20 pairs × r = 5 responses per
   side, responses random vectors around a pair-specific centre (exchangeable across sides),
   similarity a Gaussian kernel; L = 999; passes within ±3 SE of α.  Also a discrete version
   (a response is one of 4 answers, similarity 1 when equal): ties make it ≤ α.
3. **Power, side by side** (``--power-datasets``, default 2,000, per setting):
   Westfall–Young vs Bonferroni and Holm on the same permutation raw p's and on the plain
   per-pair sign-flip tests (``adjust_pvalues``); repeated samples r = 1 vs r = 5 (Δ from the
   first sample vs the mean of 5 per side, ``permutation_test``); the distribution test vs
   the study's sign test of median similarity < 0.8 on simulated free text, at two noise
   levels, under H0 and under an effect that shifts side j's response distribution.

Usage: ``python benchmarks/calib_joint.py [--datasets 10000] [--power-datasets 2000]``;
writes ``benchmarks/CALIB_joint.txt`` (Markdown table lines).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

ALPHA = 0.05
L_CAL = 999


def _scores(rng: np.random.Generator, n: int, shift: tuple[float, float, float], integer: bool) -> np.ndarray:
    u = rng.normal(size=(n, 1))  # prompt effect shared by the backgrounds: corr(y_a, y_b) = 0.5
    y = u + rng.normal(size=(n, 3)) + np.asarray(shift)[None, :]
    return np.round(3 * y + 30) if integer else y


def _free_text(rng: np.random.Generator, n: int, r: int, dim: int, shift: float, discrete: bool = False,
               sigma: float = 1.0):
    """Per pair 2r responses (noise SD ``sigma`` around a pair's centre); side j's distribution
    shifted by ``shift`` noise SDs in a random direction (0 = H0)."""
    if discrete:
        base = rng.dirichlet(np.ones(4), size=(n, 1))
        alt = np.roll(base, 1, axis=2)
        probs = np.concatenate([np.repeat(base, r, 1), np.repeat((1 - shift) * base + shift * alt, r, 1)], 1)
        u = rng.random((n, 2 * r, 1))
        ans = (u > probs.cumsum(2)).sum(2)
        return (ans[:, :, None] == ans[:, None, :]).astype(float)
    centre = rng.normal(size=(n, 1, dim))
    x = centre + sigma * rng.normal(size=(n, 2 * r, dim))
    direction = rng.normal(size=(n, 1, dim))
    direction /= np.linalg.norm(direction, axis=2, keepdims=True)
    x[:, r:] += shift * sigma * direction
    d2 = ((x[:, :, None, :] - x[:, None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * dim))  # in (0, 1]: 1 = the same response


def _rate(hits: int, n: int) -> str:
    p = hits / n
    return f"{p:.4f} ± {math.sqrt(p * (1 - p) / n):.4f}"


def _band(hits: int, n: int, one_sided: bool = False) -> str:
    se = math.sqrt(ALPHA * (1 - ALPHA) / n)
    z = (hits / n - ALPHA) / se
    ok = z <= 3 if one_sided else abs(z) <= 3
    return f"{z:+.2f} SE of α, {'pass' if ok else 'FAIL'}"


def fwer(args, lines: list[str]) -> bool:
    from ipcausal import adjust_pvalues, permutation_test
    from ipcausal.stats import westfall_young

    n_sets, n = args.datasets, 50
    lines += [f"Westfall–Young family-wise error, k = 3, n = {n} prompts, {n_sets:,} H0 datasets, L = {L_CAL}:", "",
              "| scores | Westfall–Young FWER (= omnibus size) | vs α | closed testing | vs α | "
              "Bonferroni, sign-flip | Holm, sign-flip | time |",
              "|---|---|---|---|---|---|---|---|"]
    ok = True
    for s, integer in enumerate((False, True)):
        t0 = time.perf_counter()
        hit_wy = hit_c = hit_b = hit_h = 0
        for i in range(n_sets):
            rng = np.random.default_rng([args.seed, 1, s, i])
            y = _scores(rng, n, (0.0, 0.0, 0.0), integer)
            res = westfall_young(y, n_resamples=L_CAL, rng=i)
            hit_wy += res.pvalue <= ALPHA
            closed = westfall_young(y, n_resamples=L_CAL, rng=i, procedure="closed")
            hit_c += min(closed.adjusted_pvalues) <= ALPHA
            if i < args.power_datasets:  # the sign-flip comparison on the first power-datasets sets
                sf = [permutation_test(y[:, b] - y[:, a], n_resamples=L_CAL, rng=i).pvalue for a, b in res.pairs]
                hit_b += bool((adjust_pvalues(sf, method="bonferroni") <= ALPHA).any())
                hit_h += bool((adjust_pvalues(sf, method="holm") <= ALPHA).any())
        m = min(n_sets, args.power_datasets)
        band = _band(hit_wy, n_sets)
        band_c = _band(hit_c, n_sets, one_sided=True)
        ok &= "pass" in band and "pass" in band_c
        lines.append(f"| {'integer (rounded)' if integer else 'normal'} | {_rate(hit_wy, n_sets)} | {band} | "
                     f"{_rate(hit_c, n_sets)} | {band_c} (≤ α + 3 SE) | "
                     f"{_rate(hit_b, m)} ({m:,} sets) | {_rate(hit_h, m)} | {time.perf_counter() - t0:.0f} s |")
    # partial null: background 2 shifted, the pair (0, 1) true
    t0 = time.perf_counter()
    hit = np.zeros(2, dtype=int)
    for i in range(n_sets):
        rng = np.random.default_rng([args.seed, 2, i])
        y = _scores(rng, n, (0.0, 0.0, 0.8), False)
        for j, proc in enumerate(("step-down", "closed")):
            hit[j] += westfall_young(y, n_resamples=L_CAL, rng=i, procedure=proc).adjusted_pvalues[0] <= ALPHA
    bands = [_band(int(h), n_sets, one_sided=True) for h in hit]
    ok &= all("pass" in b for b in bands)
    lines += ["", "Partial null (background 2 shifted by 0.8 SD, pair 0–1 true; must be ≤ α + 3 SE): "
              f"P(adjusted p(0–1) ≤ α) = {_rate(int(hit[0]), n_sets)} step-down ({bands[0]}), "
              f"{_rate(int(hit[1]), n_sets)} closed ({bands[1]}) [{time.perf_counter() - t0:.0f} s]", ""]
    return ok


def mmd_size(args, lines: list[str]) -> bool:
    from ipcausal.stats import mmd_permutation_test

    n_sets = args.datasets
    lines += [f"Distribution test size, 20 pairs × r = 5, {n_sets:,} H0 datasets, L = {L_CAL}:", "",
              "| responses | rejection rate | vs α | time |", "|---|---|---|---|"]
    ok = True
    for s, discrete in enumerate((False, True)):
        t0 = time.perf_counter()
        hit = 0
        for i in range(n_sets):
            rng = np.random.default_rng([args.seed, 3, s, i])
            sim = _free_text(rng, 20, 5, 8, 0.0, discrete)
            hit += mmd_permutation_test(sim, n_resamples=L_CAL, rng=i).pvalue <= ALPHA
        band = _band(hit, n_sets, one_sided=discrete)
        ok &= "pass" in band
        name = "one of 4 answers, s = 1 if equal (ties: ≤ α)" if discrete else "vectors in R^8, Gaussian kernel"
        lines.append(f"| {name} | {_rate(hit, n_sets)} | {band} | {time.perf_counter() - t0:.0f} s |")
    lines.append("")
    return ok


def power_joint(args, lines: list[str]) -> None:
    from ipcausal import adjust_pvalues, permutation_test
    from ipcausal.stats import westfall_young

    n_sets, n = args.power_datasets, 50
    lines += [f"Power, joint test vs Bonferroni/Holm, k = 3, n = {n}, {n_sets:,} datasets, L = {L_CAL}; per cell "
              "P(at least one pair rejected); mean number of true rejections; P(pair 0–1 rejected):", "",
              "| shifts (SD) | Westfall–Young step-down | closed testing | Bonferroni, same raw p | "
              "Holm, same raw p | Bonferroni, sign-flip | Holm, sign-flip |", "|---|---|---|---|---|---|---|"]
    for s, shift in enumerate(((0.0, 0.0, 0.4), (0.0, 0.2, 0.45), (0.0, 0.0, 1.0), (0.0, 0.45, 1.5))):
        any_ = np.zeros(6)
        true = np.zeros(6)
        first = np.zeros(6)
        nonnull = np.array([shift[b] != shift[a] for a, b in ((0, 1), (0, 2), (1, 2))])
        for i in range(n_sets):
            rng = np.random.default_rng([args.seed, 4, s, i])
            y = _scores(rng, n, shift, False)
            res = westfall_young(y, n_resamples=L_CAL, rng=i)
            raw = np.array(res.raw_pvalues)
            sf = np.array([permutation_test(y[:, b] - y[:, a], n_resamples=L_CAL, rng=i).pvalue for a, b in res.pairs])
            closed = westfall_young(y, n_resamples=L_CAL, rng=i, procedure="closed")
            rejs = [np.array(res.adjusted_pvalues) <= ALPHA, np.array(closed.adjusted_pvalues) <= ALPHA,
                    adjust_pvalues(raw, method="bonferroni") <= ALPHA, adjust_pvalues(raw, method="holm") <= ALPHA,
                    adjust_pvalues(sf, method="bonferroni") <= ALPHA, adjust_pvalues(sf, method="holm") <= ALPHA]
            for j, rej in enumerate(rejs):
                any_[j] += rej.any()
                true[j] += (rej & nonnull).sum()
                first[j] += rej[0]
        cells = [f"{any_[j] / n_sets:.3f}; {true[j] / n_sets:.2f}; {first[j] / n_sets:.3f}" for j in range(6)]
        lines.append(f"| {shift} | " + " | ".join(cells) + " |")
    lines.append("")


def power_repeated(args, lines: list[str]) -> None:
    from ipcausal import permutation_test

    n_sets, n, tau = args.power_datasets, 100, 0.5
    lines += [f"Repeated samples, n = {n} pairs, sample noise SD 1, pair × side noise SD {tau}, "
              f"{n_sets:,} datasets, permutation_test L = {L_CAL}:", "",
              "| effect δ | r = 1 (first sample) | r = 5 (mean of 5 per side) |", "|---|---|---|"]
    for s, delta in enumerate((0.0, 0.15, 0.25)):
        hits = np.zeros(2)
        for i in range(n_sets):
            rng = np.random.default_rng([args.seed, 5, s, i])
            u = rng.normal(size=(n, 1))
            yi = u + tau * rng.normal(size=(n, 1)) + rng.normal(size=(n, 5))
            yj = u + delta + tau * rng.normal(size=(n, 1)) + rng.normal(size=(n, 5))
            hits[0] += permutation_test(yj[:, 0] - yi[:, 0], n_resamples=L_CAL, rng=i).pvalue <= ALPHA
            hits[1] += permutation_test(yj.mean(1) - yi.mean(1), n_resamples=L_CAL, rng=i).pvalue <= ALPHA
        lines.append(f"| {delta} | {_rate(int(hits[0]), n_sets)} | {_rate(int(hits[1]), n_sets)} |")
    lines.append("")


def power_text(args, lines: list[str]) -> None:
    from ipcausal import sign_test
    from ipcausal.stats import mmd_permutation_test

    n_sets, n, r = args.power_datasets, 50, 5
    lines += [f"Free text: distribution test vs the study's sign test (median similarity < 0.8, first sample "
              f"per side), n = {n} pairs, r = {r}, {n_sets:,} datasets, L = {L_CAL}; responses vectors in R^8 "
              "(noise SD σ around a pair's centre), similarity exp(−‖x − y‖² / 16); side j shifted by δ noise "
              "SDs (δ = 0: H0):", "",
              "| σ (noise level) | median s under H0 | δ | distribution test | sign test, m0 = 0.8 |",
              "|---|---|---|---|---|"]
    for s, sigma in enumerate((0.3, 0.6)):
        med = np.median(_free_text(np.random.default_rng([args.seed, 6, s]), 500, r, 8, 0.0, sigma=sigma)[:, 0, r])
        for t, delta in enumerate((0.0, 0.5, 1.0)):
            hits = np.zeros(2)
            for i in range(n_sets):
                rng = np.random.default_rng([args.seed, 7, s, t, i])
                sim = _free_text(rng, n, r, 8, delta, sigma=sigma)
                hits[0] += mmd_permutation_test(sim, n_resamples=L_CAL, rng=i).pvalue <= ALPHA
                hits[1] += sign_test(sim[:, 0, r], m0=0.8, alternative="less").pvalue <= ALPHA
            lines.append(f"| {sigma} | {med:.2f} | {delta} | {_rate(int(hits[0]), n_sets)} | "
                         f"{_rate(int(hits[1]), n_sets)} |")
    lines.append("")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=10_000)
    ap.add_argument("--power-datasets", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=20241201)
    ap.add_argument("--out", default=str(Path(__file__).with_name("CALIB_joint.txt")))
    args = ap.parse_args(argv)
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.datasets)
    lines = [f"α = {ALPHA}; size settings: {args.datasets:,} datasets each, SE = {se:.4f}, ±3 SE band "
             f"[{ALPHA - 3 * se:.4f}, {ALPHA + 3 * se:.4f}]; seed {args.seed}.", ""]
    ok = True
    for step in (fwer, mmd_size, power_joint, power_repeated, power_text):
        t0 = time.perf_counter()
        res = step(args, lines)
        ok &= res is not False
        print("\n".join(lines), flush=True) if step is power_text else None
        print(f"[{step.__name__}: {time.perf_counter() - t0:.0f} s]", flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
