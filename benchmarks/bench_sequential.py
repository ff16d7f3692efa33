"""ipcausal's sequential test against confseq's betting martingale, side by side (issue 12).

What it does
------------
On the released GPT-4 echo-chamber Δ (3,704 pairs; a simulated stream with the same shares of
−1/0/+1 when ``../shared/data`` is absent):

1. **one stream at once**: the two-sided e-process and confidence sequence over all pairs —
   ``ipcausal.stats.sequential_update`` (numba kernel, O(1) state; with the empirical-Bernstein CS and
   with the default betting CS) against ``confseq.betting.betting_mart`` (numpy, default
   predictable-mixture bets, the two sides averaged) plus
   ``confseq.predmix.predmix_empbern_twosided_cs`` (its empirical-Bernstein CS);
2. **an audit's looks**: the same stream monitored after every batch of 10 pairs (371 looks):
   ipcausal updates its state with each batch; confseq has no state, so each look recomputes
   the whole prefix;
3. **stopping time**: in 200 seeded random orders, the median pairs until the e-process first
   reaches 1/α = 20, ipcausal's default (``method="mixture"``) against confseq's default bet.

confseq 0.0.11 (PyPI) ships only an sdist whose build needs the Boost headers; its betting
module is pure Python, so point ``CONFSEQ_SRC`` at the unpacked sdist's ``src`` folder (or
install it) to include it (the script aliases ``np.float_``, which confseq 0.0.11 uses and
numpy 2 removed); without it only ipcausal's rows are printed.  Run
``python benchmarks/bench_sequential.py``; the table goes to ``benchmarks/BENCH_SEQUENTIAL.txt``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ipcausal  # noqa: E402
from _common import fmt_time, machine, timeit  # noqa: E402

ALPHA = 0.05


def _confseq():  # type: ignore[no-untyped-def]
    src = os.environ.get("CONFSEQ_SRC")
    if src:
        sys.path.insert(0, src)
    if not hasattr(np, "float_"):  # confseq 0.0.11 annotates with np.float_, gone in numpy 2
        np.float_ = np.float64  # type: ignore[attr-defined]
    try:
        from confseq import betting, predmix  # type: ignore[import-not-found]
    except Exception:  # noqa: BLE001 - not installed, or broken on this numpy
        return None
    return betting, predmix


def _stream() -> tuple[np.ndarray, str]:
    sys.path.insert(0, str(HERE))
    from sequential import DATA, echo_deltas

    if DATA.is_dir():
        return echo_deltas(DATA)["gpt-4-0613"], "released GPT-4 echo-chamber Δ"
    rng = np.random.default_rng(0)
    return rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.871, 0.029], size=3704), "simulated Δ (no released data here)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orders", type=int, default=200)
    ap.add_argument("--out", default=str(HERE / "BENCH_SEQUENTIAL.txt"))
    args = ap.parse_args(argv)
    d, what = _stream()
    y = (d + 1.0) / 2.0
    cs = _confseq()
    from ipcausal.stats.sequential import sequential_state, sequential_update

    def ours_full():  # type: ignore[no-untyped-def]
        return sequential_update(sequential_state(bound=1.0), d)

    def ours_full_eb():  # type: ignore[no-untyped-def]
        return sequential_update(sequential_state(bound=1.0, ci_method="empirical-bernstein"), d)

    def ours_looks():  # type: ignore[no-untyped-def]
        st = sequential_state(bound=1.0)
        for i in range(0, d.size, 10):
            st = sequential_update(st, d[i:i + 10])
        return st

    rows = []
    t_full, t_looks = timeit(ours_full, repeats=7), timeit(ours_looks, repeats=5)
    t_full_eb = timeit(ours_full_eb, repeats=7)
    theirs_full = theirs_looks = None
    if cs is not None:
        betting, predmix = cs

        def theirs_one(prefix):  # type: ignore[no-untyped-def]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mart = betting.betting_mart(prefix, 0.5, alpha=ALPHA, convex_comb=True)
                lo, hi = predmix.predmix_empbern_twosided_cs(prefix, alpha=ALPHA, running_intersection=True)
            return mart, lo, hi

        theirs_full = timeit(lambda: theirs_one(y), repeats=7)
        theirs_looks = timeit(lambda: [theirs_one(y[:i + 10]) for i in range(0, y.size, 10)], repeats=3)
    rows.append(("e-process + empirical-Bernstein CS, all pairs at once", t_full_eb, theirs_full))
    rows.append(("e-process + betting CS (ipcausal's default), all pairs at once", t_full, theirs_full))
    rows.append(("monitored every 10 pairs (371 looks), betting CS", t_looks, theirs_looks))
    # stopping times
    rng = np.random.default_rng(2024)
    ours_stop, theirs_stop = [], []
    for _ in range(args.orders):
        perm = rng.permutation(d.size)
        res = ipcausal.stats.sequential_test(d[perm], bound=1.0, alpha=ALPHA)
        ours_stop.append(res.stopped_at if res.reject else np.inf)
        if cs is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mart = cs[0].betting_mart(y[perm], 0.5, alpha=ALPHA, convex_comb=True)
            hit = np.flatnonzero(mart >= 1 / ALPHA)
            theirs_stop.append(hit[0] + 1 if hit.size else np.inf)
    info = machine()
    lines = [f"{info['date']}: python benchmarks/bench_sequential.py --orders {args.orders}  ({what}, {d.size} pairs; "
             f"{info.get('Model name', '?')}, {info['versions']})", "",
             "| task | ipcausal | confseq 0.0.11 | ratio (confseq / ipcausal) |", "|---|---|---|---|"]
    for label, ours, theirs in rows:
        ratio = f"{theirs['median'] / ours['median']:.1f}×" if theirs else "–"
        lines.append(f"| {label} | {fmt_time(ours['median'])} | "
                     f"{fmt_time(theirs['median']) if theirs else 'not importable'} | {ratio} |")
    med_o = float(np.median(ours_stop))
    med_t = f"{float(np.median(theirs_stop)):.0f}" if theirs_stop else "not importable"
    lines.append(f"| median pairs to e ≥ 1/α, {args.orders} random orders | {med_o:.0f} | {med_t} | "
                 + (f"{float(np.median(theirs_stop)) / med_o:.2f}× the pairs |" if theirs_stop else "– |"))
    lines.append("")
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
