"""Inverted confidence intervals of the sign-flip test: time, next to the p-value alone and a naive search.

Rows (warm: every kernel compiled first; median of repeats, min–max in brackets):

1. lattice Δ ∈ [−4, 4], n = 1,650 (the AmbrQA size): the exact p alone (the DP of
   ``exact-lattice``), the inverted exact interval alone (FFT law of (N_A, S_A) + breakpoint
   search), ``permutation_test`` with both, and the competitor: a naive bisection over δ on
   each side, every step an exact p of Δ − δ.  Δ − δ is lattice data only for δ on a finer
   lattice 2⁻ᵏ, so the naive search runs on multiples of 2⁻⁶ (the finest whose DP the exact
   route still accepts at this n) — it brackets each end to 1/64 and cannot reach the
   breakpoint, which the inversion returns exactly.
2. continuous Δ, n = 14: the enumeration interval (Hartigan's subset means) vs the naive
   bisection with the exact enumeration p (60 steps per side, to float resolution).
3. continuous Δ, n = 1,650, L = 100,000: ``permutation_test`` (Monte Carlo p + interval from one
   kernel pass) next to the p's kernel alone (target ≤ 1.5×), the former second pass
   (``mc_subsets``) alone, and ``scipy.stats.permutation_test`` of the same data and L, timed at that L (p only;
   target ≥ 2,000×).
4. Likert differences, n = 66,667: the exact p by the grouped-binomial FFT, the exact inverted
   interval (law of (N_A, S_A) from the live spectrum columns), and ``permutation_test`` auto
   (target ≤ 100 ms for both; issue 33).

Run ``python benchmarks/bench_intervals.py``; the table goes to ``benchmarks/intervals.txt``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_row, machine, timeit  # noqa: E402

from ipcausal import permutation_test  # noqa: E402
from ipcausal.stats import _kernels as K  # noqa: E402
from ipcausal.stats import intervals as I  # noqa: E402
from ipcausal.stats.permutation import _exact_fft, _exact_lattice, _mc_counts, lattice_units  # noqa: E402
from scipy import stats  # noqa: E402


def cpu_median(fn, repeats: int = 101) -> float:
    """Median process CPU time of ``fn()`` (less sensitive than wall time to a busy machine)."""
    import time

    fn()
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return float(np.median(times))


def naive_bisection(d: np.ndarray, alpha: float, *, grid: float | None, steps: int = 60) -> tuple[float, float]:
    """Each end by bisection on δ (inside: p > α), every step an exact p of d − δ."""

    def p(delta: float) -> float:
        x = d - delta
        return lattice_p(x) if grid is not None else enumeration_p(x)

    ends = []
    for outside in (float(d.min()) - 1.0, float(d.max()) + 1.0):
        inside = float(d.mean())
        if grid is not None:
            inside, outside = round(inside / grid) * grid, round(outside / grid) * grid
        for _ in range(steps):
            if grid is not None and abs(outside - inside) <= grid:
                break
            mid = 0.5 * (inside + outside)
            if grid is not None:
                mid = round(mid / grid) * grid
            if p(mid) > alpha:
                inside = mid
            else:
                outside = mid
        ends.append(inside)
    return ends[0], ends[1]


def lattice_p(d: np.ndarray) -> float:
    a = np.abs(d) / np.abs(d).max()
    nz = a > 0
    return _exact_lattice(lattice_units(a[nz]), np.sign(d[nz]), "two-sided")


def enumeration_p(d: np.ndarray) -> float:
    a = np.abs(d) / np.abs(d).max()
    nz = a > 0
    a, sg = np.ascontiguousarray(a[nz]), np.sign(d[nz])
    t = float(np.dot(sg, a))
    counts = K.exact_enumeration_counts(K.byte_tables(a), a.size, t, 1e-9 * float(a.sum()))
    return int(counts[0]) / float(1 << a.size)


def lattice_ci(d: np.ndarray) -> tuple[float, float]:
    a = np.abs(d) / np.abs(d).max()
    return I.law(d, "lattice", lattice=lattice_units(a[a > 0])).interval(0.95)


def main() -> None:
    rows = ["| case | what | wall time (median, min–max) | ratio | result |", "|---|---|---|---|---|"]
    out = []

    d = np.random.default_rng(0).integers(-4, 5, 1650).astype(float)
    t_p = timeit(lambda: lattice_p(d), repeats=101)
    t_ci = timeit(lambda: lattice_ci(d), repeats=101)
    t_all = timeit(lambda: permutation_test(d), repeats=101)
    cpu = {name: cpu_median(fn) for name, fn in
           (("p", lambda: lattice_p(d)), ("ci", lambda: lattice_ci(d)), ("all", lambda: permutation_test(d)))}
    t_naive = timeit(lambda: naive_bisection(d, 0.05, grid=2.0**-6), repeats=3)
    res = t_all["value"]
    nv = t_naive["value"]
    base = "lattice Δ ∈ [−4, 4], n = 1,650"
    rows += [
        f"| {base} | exact p alone (DP) | {fmt_row(t_p)} | 1 | p = {t_p['value']:.4g} |",
        f"| {base} | inverted exact interval alone | {fmt_row(t_ci)} | {t_ci['median'] / t_p['median']:.1f}× the p |"
        f" ({t_ci['value'][0]:.6f}, {t_ci['value'][1]:.6f}) |",
        f"| {base} | `permutation_test` (p + interval) | {fmt_row(t_all)} | {t_all['median'] / t_p['median']:.1f}× the p |"
        f" {res.ci_method} |",
        f"| {base} | naive bisection, exact p per step, δ on multiples of 1/64 | {fmt_row(t_naive)} |"
        f" {t_naive['median'] / t_ci['median']:.0f}× the inversion | ({nv[0]:.4f}, {nv[1]:.4f}), ±1/64 |",
    ]

    c = np.random.default_rng(1).normal(0.4, 1.0, 14)
    t_e = timeit(lambda: permutation_test(c, method="exact"), repeats=21)
    t_en = timeit(lambda: naive_bisection(c, 0.05, grid=None), repeats=3)
    e, en = t_e["value"], t_en["value"]
    rows += [
        f"| continuous, n = 14 | `permutation_test` exact (p + Hartigan interval) | {fmt_row(t_e)} | 1 |"
        f" ({e.ci_low:.6f}, {e.ci_high:.6f}) |",
        f"| continuous, n = 14 | naive bisection, exact p per step (60 per side) | {fmt_row(t_en)} |"
        f" {t_en['median'] / t_e['median']:.0f}× | ({en[0]:.6f}, {en[1]:.6f}) |",
    ]

    m = np.random.default_rng(2).normal(0.1, 1.0, 1650)
    am = np.abs(m) / np.abs(m).max()
    t_mp = timeit(lambda: permutation_test(m, method="monte-carlo", rng=1), repeats=11)
    t_mpo = timeit(lambda: _mc_counts(am, np.sign(m), 100_000, 1), repeats=11)  # the p's kernel alone
    t_mci = timeit(lambda: I.law(m, "monte-carlo", n_resamples=100_000, seed=5).interval(0.95), repeats=7)
    t_sp = timeit(lambda: stats.permutation_test((m,), np.mean, permutation_type="samples", n_resamples=100_000,
                                                 batch=10_000, random_state=1), repeats=2, warmup=0)
    sp_full = t_sp["median"]  # scipy timed at L = 100,000 itself (no extrapolation)
    ratio_p = t_mp["median"] / t_mpo["median"]
    ratio_sp = sp_full / t_mp["median"]
    base = "continuous, n = 1,650, L = 100,000"
    rows += [
        f"| {base} | the p's kernel alone (`_mc_counts`) | {fmt_row(t_mpo)} | 1 | counts {t_mpo['value'][0]} |",
        f"| {base} | `permutation_test` Monte Carlo: p + interval, one pass | {fmt_row(t_mp)} |"
        f" {ratio_p:.2f}× the p (target ≤ 1.5×: {'met' if ratio_p <= 1.5 else 'NOT met'}) | {t_mp['value'].ci_method} |",
        f"| {base} | the former second pass: the interval from `mc_subsets` alone | {fmt_row(t_mci)} |"
        f" {t_mci['median'] / t_mpo['median']:.2f}× the p | ({t_mci['value'][0]:.5f}, {t_mci['value'][1]:.5f}) |",
        f"| {base} | scipy.stats.permutation_test, same call (p only), L = 100,000 | {fmt_row(t_sp)} "
        f"| {ratio_sp:.0f}× ipcausal's p + interval (target ≥ 2,000×: "
        f"{'met' if ratio_sp >= 2000 else 'NOT met'}) | p = {t_sp['value'].pvalue:.4f} vs {t_mp['value'].pvalue:.4f} |",
    ]

    rng = np.random.default_rng(3)
    lk = (rng.integers(1, 7, 66_667) - rng.integers(1, 7, 66_667) + (rng.random(66_667) < 0.03)).astype(float)
    al = np.abs(lk) / np.abs(lk).max()
    kl = lattice_units(al[al > 0])
    t_fp = timeit(lambda: _exact_fft(kl, np.sign(lk[al > 0]), "two-sided"), repeats=11)
    t_fci = timeit(lambda: lattice_ci(lk), repeats=5)
    t_fall = timeit(lambda: permutation_test(lk), repeats=5)
    r = t_fall["value"]
    base = "Likert differences, n = 66,667"
    rows += [
        f"| {base} | exact p alone (grouped-binomial FFT) | {fmt_row(t_fp)} | 1 | p = {t_fp['value']:.4g} |",
        f"| {base} | inverted exact interval alone (law of (N_A, S_A): live spectrum columns) | {fmt_row(t_fci)} |"
        f" {t_fci['median'] / t_fp['median']:.1f}× the p | ({t_fci['value'][0]:.6f}, {t_fci['value'][1]:.6f}) |",
        f"| {base} | `permutation_test` auto (p + interval) | {fmt_row(t_fall)} | target ≤ 100 ms: "
        f"{'met' if t_fall['median'] <= 0.1 else 'NOT met'} | {r.method}, {r.ci_method} |",
    ]

    info = machine()
    out.append(f"Machine: {info.get('Model name', '?')}, {info.get('CPU(s)', '?')} CPUs, load "
               f"{info.get('load average (1, 5, 15 min)', '?')}, flags {info.get('Flags', '?')}, numba threads "
               f"{info.get('numba threads')}; {info.get('versions')}; {info.get('date')}")
    out.append(f"Kernel auto chose: {info.get('kernel auto chose', '?')}")
    out.append("")
    out += rows
    out.append("")
    out.append(f"CPU time (median of 101, process_time) at n = 1,650: exact p {cpu['p'] * 1e3:.2f} ms, "
               f"inverted interval {cpu['ci'] * 1e3:.2f} ms, `permutation_test` {cpu['all'] * 1e3:.2f} ms "
               f"(target ≤ 10 ms).")
    text = "\n".join(out) + "\n"
    print(text)
    (Path(__file__).resolve().parent / "intervals.txt").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
