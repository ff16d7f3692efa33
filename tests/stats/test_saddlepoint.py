"""The saddlepoint approximation against the exact null distribution (dynamic programming)."""

from __future__ import annotations

import numpy as np
import pytest

from ipcausal import permutation_test
from ipcausal.stats import _kernels as K
from ipcausal.stats.saddlepoint import saddlepoint_pvalue, saddlepoint_tail


def _worst_relative_error(k: np.ndarray, *, continuous: bool) -> tuple[float, float]:
    """Worst |approx − exact| / exact over upper tails from p ≈ 0.5 down to p ≈ 1e-12."""
    k = np.asarray(k, dtype=np.int64)
    total = int(k.sum())
    v, c = np.unique(k, return_counts=True)
    v, c = v.astype(float), c.astype(float)
    sd = float(np.sqrt(np.sum(k.astype(float) ** 2)))
    survival = np.cumsum(K.lattice_null(k)[::-1])[::-1]  # P(W >= w), one DP for all tails
    worst, p_min = 0.0, 1.0
    for z in np.linspace(0.05, 7.5, 45):
        t = int(round(z * sd))
        t += (t - total) % 2  # T = 2W - M lives on M + 2Z
        exact = float(survival[(total + t) // 2])
        if exact < 1e-12:
            break
        # continuous formula at the midpoint between lattice points, or the lattice formula
        approx = saddlepoint_tail(v, c, t - 1.0, None) if continuous else saddlepoint_tail(v, c, float(t), 2.0)
        worst = max(worst, abs(approx - exact) / exact)
        p_min = min(p_min, exact)
    return worst, p_min


def _shapes(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "likert": rng.integers(1, 5, n),
        "binary": np.ones(n, dtype=np.int64),
        "uniform1000": rng.integers(1, 1001, n),
        "halfnormal100": np.maximum(1, np.rint(np.abs(rng.normal(size=n)) * 100)).astype(np.int64),
    }


@pytest.mark.parametrize("n", [500, 1650])
def test_lattice_saddlepoint_within_1e4_down_to_1e12(n: int) -> None:
    for name, k in _shapes(n, np.random.default_rng(n)).items():
        worst, p_min = _worst_relative_error(k, continuous=False)
        assert p_min < 1e-11, name
        assert worst <= 1e-4, (name, worst)


@pytest.mark.parametrize("n", [500, 1650])
def test_continuous_saddlepoint_within_1e4_down_to_1e12(n: int) -> None:
    # quasi-continuous magnitudes (a lattice of 10^3–10^4 steps): the continuous formula evaluated
    # between lattice points equals the exact tail up to O(span²) terms far below 1e-4
    rng = np.random.default_rng(3 + n)
    fine = 2_000 if n <= 500 else 1_000  # keeps the exact DP (n · Σk) small
    shapes = {
        "uniform": rng.integers(1, fine + 1, n),
        "halfnormal": np.maximum(1, np.rint(np.abs(rng.normal(size=n)) * fine * 0.3)).astype(np.int64),
        "exponential": np.maximum(1, np.rint(rng.exponential(size=n) * fine * 0.1)).astype(np.int64),
    }
    for name, k in shapes.items():
        worst, p_min = _worst_relative_error(k, continuous=True)
        assert p_min < 1e-11, name
        assert worst <= 1e-4, (name, worst)


def test_small_n_accuracy_is_what_the_docs_say() -> None:
    # documented: a few percent at n = 50 (no guarantee of 1e-4 below a few hundred)
    worst, _ = _worst_relative_error(np.random.default_rng(1).integers(1, 5, 50), continuous=False)
    assert worst < 0.05


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_public_route_matches_exact(alternative: str) -> None:
    rng = np.random.default_rng(9)
    d = rng.integers(-4, 5, 1650).astype(float) + 0.0
    d[:40] = np.abs(d[:40])  # a small effect
    exact = permutation_test(d, method="exact", alternative=alternative)
    sp = permutation_test(d, method="saddlepoint", alternative=alternative)
    # a coarse lattice (ratings): "saddlepoint" takes the exact route (the formula is below the exact p there)
    assert sp.method == "exact-lattice" and sp.pvalue == exact.pvalue
    k = np.abs(d[d != 0]).astype(np.int64)
    raw = saddlepoint_pvalue(k.astype(float), float(np.sign(d[d != 0]) @ k), alternative, lattice=k)
    assert raw == pytest.approx(exact.pvalue, rel=1e-4)
    fine = d * 7 + np.sign(d) * (np.arange(d.size) % 5)  # a fine lattice keeps the saddlepoint
    assert permutation_test(fine, method="saddlepoint", alternative=alternative).method == "saddlepoint"


def test_pvalue_function_directions_and_edges() -> None:
    a = np.arange(1.0, 31.0)
    p_g = saddlepoint_pvalue(a, 250.0, "greater")
    p_l = saddlepoint_pvalue(a, 250.0, "less")
    assert 0 < p_g < 0.01 and p_l > 0.99
    assert saddlepoint_pvalue(a, -250.0, "less") == pytest.approx(p_g)
    assert saddlepoint_pvalue(a, 250.0, "two-sided") == pytest.approx(2 * p_g)
    assert saddlepoint_pvalue(a, 0.0, "two-sided") == pytest.approx(1.0)
    k = np.arange(1, 31)
    assert saddlepoint_pvalue(a, 0.0, "two-sided", lattice=k) == 1.0
    # the all-plus vector: p is exactly 2^-n at the boundary, never 0 beyond it
    assert saddlepoint_pvalue(a, a.sum(), "greater") == pytest.approx(2.0**-30, rel=0.5)
    assert saddlepoint_pvalue(a, a.sum() * 2, "greater") == 2.0**-30


def test_scale_invariance() -> None:
    rng = np.random.default_rng(2)
    d = rng.normal(0.3, 1.0, 300)
    ps = [permutation_test(d * c, method="saddlepoint").pvalue for c in (1e-9, 1.0, 1e9)]
    assert ps[0] == pytest.approx(ps[1], rel=1e-12) and ps[2] == pytest.approx(ps[1], rel=1e-12)
