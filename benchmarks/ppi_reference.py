"""Record the PPI++ reference values of the authors' package (ppi_py) for tests/stats/test_ppi.py.

``pip install ppi-python==0.2.3`` (in a venv of its own: it installs a top-level ``tests`` package that
shadows this repository's), then ``python benchmarks/ppi_reference.py`` writes
``tests/stats/fixtures/ppi_py_reference.json``: for five seeded data sets (the test's ``_data``), the
tuned λ (``ppi_py.ppi._calc_lam_glm`` with clipping, as PPI++ tunes it), the point estimate at that λ
and ppi_py's 95 % interval (z quantile, ddof 0).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import ppi_py
from ppi_py.ppi import _calc_lam_glm


def _data(seed: int, n: int = 60, big_n: int = 500, bias: float = 0.4):
    g = np.random.default_rng(seed)
    h_all = g.normal(0.2, 1.0, n + big_n)
    f_all = 0.8 * h_all + bias + g.normal(0.0, 0.6, n + big_n)
    return h_all[:n], f_all[:n], f_all[n:]


def main() -> None:
    rows = []
    for seed in range(5):
        n = 40 + 20 * seed
        h, f, fu = _data(seed, n=n)
        est1 = ppi_py.ppi_mean_pointestimate(h, f, fu, lam=1)
        lam = float(_calc_lam_glm(h - est1, f - est1, fu - est1, np.eye(1), clip=True))
        est = float(ppi_py.ppi_mean_pointestimate(h, f, fu, lam=lam)[0])
        lo, hi = ppi_py.ppi_mean_ci(h, f, fu, alpha=0.05, lam=lam)
        rows.append({"seed": seed, "n": n, "lam": lam, "estimate": est, "ci_low": float(lo[0]),
                     "ci_high": float(hi[0])})
    out = Path(__file__).resolve().parents[1] / "tests" / "stats" / "fixtures" / "ppi_py_reference.json"
    out.write_text(json.dumps({"ppi_py": ppi_py.__version__ if hasattr(ppi_py, "__version__") else "0.2.3",
                               "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(out)


if __name__ == "__main__":
    main()
