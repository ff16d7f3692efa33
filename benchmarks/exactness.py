"""How exact are the "exact" and approximate routes of the sign-flip p (issue 28, item 5)?

* the lattice DP (``exact-lattice``) against big-integer arithmetic, with its certified bound;
* the grouped-binomial FFT (``exact-lattice-fft``) against the DP: the tail's error and its bound;
* the saddlepoint formula against the exact p: how often it falls below, and by how much —
  on coarse lattices (where ``method="saddlepoint"`` now takes the exact route) and on
  continuous data at n = 18–22 (exact by enumeration).

Run ``nice -n 10 python benchmarks/exactness.py``; the table goes to ``benchmarks/EXACTNESS.txt``.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402

from ipcausal import permutation_test  # noqa: E402
from ipcausal.stats import _kernels as K  # noqa: E402
from ipcausal.stats._kernels.exact import lattice_tail_bound  # noqa: E402
from ipcausal.stats.grouped import tail  # noqa: E402
from ipcausal.stats.saddlepoint import saddlepoint_pvalue  # noqa: E402


def exact_tail(vals: tuple[int, ...], cnts: tuple[int, ...], w0: int) -> Fraction:
    dist = {0: 1}
    for v, c in zip(vals, cnts):
        binoms = [math.comb(c, j) for j in range(c + 1)]
        new: dict[int, int] = {}
        for w, m in dist.items():
            for j, b in enumerate(binoms):
                new[w + v * j] = new.get(w + v * j, 0) + m * b
        dist = new
    return Fraction(sum(m for w, m in dist.items() if w >= w0), 2 ** sum(cnts))


def main() -> None:
    lines = ["# benchmarks/exactness.py", f"# {machine()}", ""]
    lines += ["## The lattice DP against big integers (n = 2,000)", "",
              "| magnitudes | worst relative error of the tail | certified bound | reported p ≥ exact |", "|---|---|---|---|"]
    for vals, cnts in (((1, 2), (1000, 1000)), ((1, 3), (1500, 500)), ((1, 2, 3), (700, 700, 600)), ((1,), (2000,)),
                       ((1, 2, 3, 4), (500, 500, 500, 500))):
        k = np.repeat(np.array(vals, dtype=np.int64), cnts)
        total, worst, ok = int(k.sum()), 0.0, True
        for f in (0.55, 0.6, 0.65, 0.7):
            w0 = int(f * total)
            ex, got = exact_tail(vals, cnts, w0), K.lattice_tail(k, w0)
            worst = max(worst, abs(float((Fraction(got) - ex) / ex)))
            ok = ok and Fraction(got * (1 + lattice_tail_bound(k))) >= ex
        lines.append(f"| {vals} × {cnts} | {worst:.2e} | {lattice_tail_bound(k):.2e} | {ok} |")
    lines += ["", "## The FFT tail against the DP", "", "| magnitudes | n | worst relative error | bound / p |",
              "|---|---|---|---|"]
    for vals, n in (((1,), 2000), ((1, 2), 2000), ((1, 2, 3, 4, 5), 2000), ((2, 3, 7), 300), ((1, 10, 100), 300),
                    ("Likert differences", 8000)):
        rng = np.random.default_rng(3)
        if isinstance(vals, str):
            d = rng.integers(1, 7, n) - rng.integers(1, 7, n)
            k = np.abs(d[d != 0]).astype(np.int64)
        else:
            k = rng.choice(vals, size=n).astype(np.int64)
        total, worst, rb = int(k.sum()), 0.0, 0.0
        for f in (0.505, 0.52, 0.55, 0.6, 0.7):
            p, b = tail(k, int(f * total))
            ex = K.lattice_tail(k, int(f * total))
            if ex > 1e-290:
                worst, rb = max(worst, abs(p / ex - 1)), max(rb, b / ex)
        lines.append(f"| {vals} | {n} | {worst:.2e} | {rb:.2e} |")
    lines += ["", "## The saddlepoint formula against the exact p", "",
              "| data | n | sets | below the exact p | worst relative error |", "|---|---|---|---|---|"]
    rng = np.random.default_rng(0)
    for n in (100, 500, 2000):
        below = tot = 0
        worst = 0.0
        for _ in range(200):
            d = rng.integers(-4, 5, n).astype(float) + (rng.random(n) < 0.1)
            nz = d != 0
            k = np.abs(d[nz]).astype(np.int64)
            sp = saddlepoint_pvalue(k.astype(float), float(np.sign(d[nz]) @ k), "two-sided", lattice=k)
            ex = permutation_test(d, method="exact").pvalue
            if 1e-300 < ex < 0.999:
                tot += 1
                below += sp < ex
                worst = max(worst, abs(sp / ex - 1))
        lines.append(f"| coarse lattice (k ≤ 5) | {n} | {tot} | {below} | {worst:.2e} |")
    for n in (18, 22):
        below = 0
        worst = 0.0
        for _ in range(100):
            d = rng.normal(0.3, 1, n)
            sp, ex = permutation_test(d, method="saddlepoint").pvalue, permutation_test(d, method="exact").pvalue
            below += sp < ex
            worst = max(worst, abs(sp / ex - 1))
        lines.append(f"| continuous N(0.3, 1) | {n} | 100 | {below} | {worst:.2e} |")
    out = Path(__file__).with_name("EXACTNESS.txt")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
