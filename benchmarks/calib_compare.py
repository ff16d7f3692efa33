"""Calibration and power of the model comparison (``ipcausal.stats.models.compare_models``, SPEC §10).

Data: per dataset, the effects Δ of m models on the same n = 50 pairs, Δ_pc = u_p + e_pc + s_c
(a pair effect u_p ~ N(0, 1) shared by the models, so corr(Δ^a, Δ^b) = 0.5; e_pc ~ N(0, 1);
s_c the model's shift, 0 under H0); "integer" rounds 3Δ (rating-like Δ, the exact lattice route
for the pair tests).  α = 0.05, L = 999 relabelings, every dataset seeded by
``[--seed, setting, dataset]``.

1. **Family-wise error under the complete null** (``--datasets``, default 10,000, per row): FWER =
   P(some adjusted p ≤ α) = P(omnibus p ≤ α) of the Westfall–Young step-down over the C(m, 2)
   model pairs; passes within ±3 SE of α.  Beside it, Bonferroni and Holm on the model pairs'
   own sign-flip tests of D (``pair_pvalues``), on the same datasets.
2. **Clusters** (``--datasets``): 25 clusters of two pairs whose Δ share a strong cluster effect
   per model (Δ_pc = u_p + v_{cluster, c} + 0.3 e_pc, v ~ N(0, 1)): relabelling whole clusters
   (``clusters=``) against relabelling pairs one by one (the wrong unit).
3. **Partial null** (``--datasets``): model C shifted by 0.8, A and B equal: P(adjusted p(A–B) ≤ α)
   for the step-down and for closed testing; must be ≤ α + 3 SE.
4. **Equal means, unequal spread** (``--datasets``): two models' Δ are noisy (SD 3), the others
   precise (SD 0.3), so
   every pair's "mean D = 0" is true while the models are not exchangeable: how often each
   procedure claims a difference in mean (informative, no pass/fail: the joint null is false).
5. **Power** (``--power-datasets``, default 2,000, per setting): P(at least one model pair rejected)
   and the mean number of true rejections, Westfall–Young step-down and closed vs Bonferroni and
   Holm on the pair tests.

Usage: ``python benchmarks/calib_compare.py [--datasets 10000] [--power-datasets 2000]``;
writes ``benchmarks/CALIB_compare.txt`` (Markdown table lines).
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from pathlib import Path

import numpy as np

ALPHA = 0.05
L_CAL = 999
N_PAIRS = 50


def _delta(rng: np.random.Generator, shift: tuple[float, ...], integer: bool) -> np.ndarray:
    m = len(shift)
    d = rng.normal(size=(N_PAIRS, 1)) + rng.normal(size=(N_PAIRS, m)) + np.asarray(shift)[None, :]
    return np.round(3 * d) if integer else d


def _clustered(rng: np.random.Generator, m: int) -> np.ndarray:
    v = np.repeat(rng.normal(size=(N_PAIRS // 2, m)), 2, axis=0)  # one effect per cluster and model
    return rng.normal(size=(N_PAIRS, 1)) + v + 0.3 * rng.normal(size=(N_PAIRS, m))


def _rate(hits: int, n: int) -> str:
    p = hits / n
    return f"{p:.4f} ± {math.sqrt(p * (1 - p) / n):.4f}"


def _band(hits: int, n: int, one_sided: bool = False) -> str:
    z = (hits / n - ALPHA) / math.sqrt(ALPHA * (1 - ALPHA) / n)
    ok = z <= 3 if one_sided else abs(z) <= 3
    return f"{z:+.2f} SE of α, {'pass' if ok else 'FAIL'}"


def fwer(args, lines: list[str]) -> bool:
    from ipcausal import adjust_pvalues
    from ipcausal.stats.models import compare_models

    n_sets = args.datasets
    lines += [f"Complete null (no model differs), n = {N_PAIRS} pairs, {n_sets:,} datasets per row, L = {L_CAL}:", "",
              "| models m | Δ | Westfall–Young FWER (= omnibus size) | vs α | Bonferroni, pair tests | "
              "Holm, pair tests | time |", "|---|---|---|---|---|---|---|"]
    ok = True
    for s, (m, integer) in enumerate(((3, False), (4, False), (3, True))):
        t0 = time.perf_counter()
        hit = hit_b = hit_h = 0
        for i in range(n_sets):
            rng = np.random.default_rng([args.seed, 1, s, i])
            res = compare_models(_delta(rng, (0.0,) * m, integer), n_resamples=L_CAL, rng=i)
            hit += res.pvalue <= ALPHA
            hit_b += bool((adjust_pvalues(res.pair_pvalues, method="bonferroni") <= ALPHA).any())
            hit_h += bool((adjust_pvalues(res.pair_pvalues, method="holm") <= ALPHA).any())
        band = _band(hit, n_sets)
        ok &= "pass" in band
        lines.append(f"| {m} | {'integer (3Δ rounded)' if integer else 'normal'} | {_rate(hit, n_sets)} | {band} | "
                     f"{_rate(hit_b, n_sets)} | {_rate(hit_h, n_sets)} | {time.perf_counter() - t0:.0f} s |")
    lines.append("")
    return ok


def clusters(args, lines: list[str]) -> bool:
    from ipcausal.stats.models import compare_models

    n_sets, m = args.datasets, 3
    labels = np.repeat(np.arange(N_PAIRS // 2), 2)
    t0 = time.perf_counter()
    hit = np.zeros(2, dtype=int)
    for i in range(n_sets):
        rng = np.random.default_rng([args.seed, 2, i])
        d = _clustered(rng, m)
        hit[0] += compare_models(d, clusters=labels, n_resamples=L_CAL, rng=i).pvalue <= ALPHA
        hit[1] += compare_models(d, n_resamples=L_CAL, rng=i).pvalue <= ALPHA
    band = _band(int(hit[0]), n_sets)
    lines += [f"Clusters: {N_PAIRS // 2} clusters of 2 pairs sharing a cluster effect per model, m = {m}, complete "
              f"null, {n_sets:,} datasets, L = {L_CAL}:", "",
              "| relabelling | FWER | vs α |", "|---|---|---|",
              f"| whole clusters (`clusters=`) | {_rate(int(hit[0]), n_sets)} | {band} |",
              f"| pairs one by one (wrong unit) | {_rate(int(hit[1]), n_sets)} | {_band(int(hit[1]), n_sets)} |",
              "", f"[{time.perf_counter() - t0:.0f} s]", ""]
    return "pass" in band


def partial(args, lines: list[str]) -> bool:
    from ipcausal.stats.models import compare_models

    n_sets = args.datasets
    t0 = time.perf_counter()
    hit = np.zeros(2, dtype=int)
    for i in range(n_sets):
        rng = np.random.default_rng([args.seed, 3, i])
        d = _delta(rng, (0.0, 0.0, 0.8), False)
        for j, proc in enumerate(("step-down", "closed")):
            hit[j] += compare_models(d, n_resamples=L_CAL, rng=i, procedure=proc).adjusted_pvalues[0] <= ALPHA
    bands = [_band(int(h), n_sets, one_sided=True) for h in hit]
    lines += [f"Partial null (model C shifted by 0.8, A = B; must be ≤ α + 3 SE), {n_sets:,} datasets: "
              f"P(adjusted p(A–B) ≤ α) = {_rate(int(hit[0]), n_sets)} step-down ({bands[0]}), "
              f"{_rate(int(hit[1]), n_sets)} closed ({bands[1]}) [{time.perf_counter() - t0:.0f} s]", ""]
    return all("pass" in b for b in bands)


def hetero(args, lines: list[str]) -> None:
    """Equal means, unequal spread: every pair's "mean D = 0" is true, but the models are not
    exchangeable (the joint null is false), so the step-down's per-pair claims may over-reject."""
    from ipcausal import adjust_pvalues
    from ipcausal.stats.models import compare_models

    n_sets = args.datasets
    lines += [f"Equal means, unequal spread: every \"mean D = 0\" is true but the models are not exchangeable "
              f"(two noisy models A, B, the rest precise); {n_sets:,} datasets per row, L = {L_CAL}; "
              "P(some pair rejected); P(A–B rejected):", "",
              "| noise SD per model | Westfall–Young step-down | closed testing | Holm, pair tests | time |",
              "|---|---|---|---|---|"]
    for s, sd in enumerate(((3.0, 3.0, 0.3), (3.0, 3.0, 0.3, 0.3, 0.3))):
        t0 = time.perf_counter()
        m = len(sd)
        hit = np.zeros(3, dtype=int)
        hit_ab = np.zeros(3, dtype=int)
        for i in range(n_sets):
            rng = np.random.default_rng([args.seed, 5, s, i])
            d = rng.normal(size=(N_PAIRS, 1)) + np.asarray(sd)[None, :] * rng.normal(size=(N_PAIRS, m))
            res = compare_models(d, n_resamples=L_CAL, rng=i)
            rejs = [np.array(res.adjusted_pvalues) <= ALPHA, None,
                    adjust_pvalues(res.pair_pvalues, method="holm") <= ALPHA]
            if m == 3:
                closed = compare_models(d, n_resamples=L_CAL, rng=i, procedure="closed")
                rejs[1] = np.array(closed.adjusted_pvalues) <= ALPHA
            for j, rej in enumerate(rejs):
                if rej is not None:
                    hit[j] += rej.any()
                    hit_ab[j] += rej[0]
        cells = [f"{_rate(int(hit[j]), n_sets)}; {_rate(int(hit_ab[j]), n_sets)}" if (j != 1 or m == 3) else
                 "(not run: 2^10 − 1 intersections)" for j in range(3)]
        lines.append(f"| {sd} | " + " | ".join(cells) + f" | {time.perf_counter() - t0:.0f} s |")
    lines.append("")


def power(args, lines: list[str]) -> None:
    from ipcausal import adjust_pvalues
    from ipcausal.stats.models import compare_models

    n_sets = args.power_datasets
    lines += [f"Power, n = {N_PAIRS} pairs, {n_sets:,} datasets per setting, L = {L_CAL}; per cell P(at least one "
              "model pair rejected); mean number of true rejections:", "",
              "| model shifts | Westfall–Young step-down | closed testing | Bonferroni, pair tests | "
              "Holm, pair tests | time |", "|---|---|---|---|---|---|"]
    for s, shift in enumerate(((0.0, 0.0, 0.4), (0.0, 0.2, 0.45), (0.0, 0.45, 0.9), (0.0, 0.0, 0.3, 0.6))):
        t0 = time.perf_counter()
        fam = list(itertools.combinations(range(len(shift)), 2))
        nonnull = np.array([shift[a] != shift[b] for a, b in fam])
        any_ = np.zeros(4)
        true = np.zeros(4)
        for i in range(n_sets):
            rng = np.random.default_rng([args.seed, 4, s, i])
            d = _delta(rng, shift, False)
            res = compare_models(d, n_resamples=L_CAL, rng=i)
            closed = compare_models(d, n_resamples=L_CAL, rng=i, procedure="closed") if len(shift) <= 4 else res
            rejs = [np.array(res.adjusted_pvalues) <= ALPHA, np.array(closed.adjusted_pvalues) <= ALPHA,
                    adjust_pvalues(res.pair_pvalues, method="bonferroni") <= ALPHA,
                    adjust_pvalues(res.pair_pvalues, method="holm") <= ALPHA]
            for j, rej in enumerate(rejs):
                any_[j] += rej.any()
                true[j] += (rej & nonnull).sum()
        cells = [f"{any_[j] / n_sets:.3f}; {true[j] / n_sets:.2f}" for j in range(4)]
        lines.append(f"| {shift} | " + " | ".join(cells) + f" | {time.perf_counter() - t0:.0f} s |")
    lines.append("")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=10_000)
    ap.add_argument("--power-datasets", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--out", default=str(Path(__file__).with_name("CALIB_compare.txt")))
    args = ap.parse_args()
    lines: list[str] = []
    ok = fwer(args, lines)
    ok &= clusters(args, lines)
    ok &= partial(args, lines)
    hetero(args, lines)
    power(args, lines)
    lines.append(f"all calibration checks: {'pass' if ok else 'FAIL'}")
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
