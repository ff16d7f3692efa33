"""Correctness that must hold on the fast paths (thread counts, large n, extreme p)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ipcausal import permutation_test
from ipcausal.stats import permutation as P


def _likert(n: int, seed: int, shift: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = rng.integers(-4, 5, n).astype(float)
    flip = rng.random(n) < shift
    d[flip] = np.abs(d[flip])
    return d


@pytest.mark.parametrize("shift", [0.0, 0.03, 0.06])
def test_monte_carlo_within_4_se_of_exact_at_n_1650(shift: float) -> None:
    d = _likert(1650, 21, shift)
    exact = permutation_test(d, method="exact")
    assert exact.method == "exact-lattice"
    L = 100_000
    se = np.sqrt(exact.pvalue * (1 - exact.pvalue) / L)
    for seed in (1, 2, 3, 4, 5):
        mc = permutation_test(d, method="monte-carlo", n_resamples=L, rng=seed)
        assert abs(mc.pvalue - exact.pvalue) <= 4 * se + 1 / (L + 1), (seed, mc.pvalue, exact.pvalue)


def test_table_kernel_within_4_se_of_exact_on_non_integer_lattice() -> None:
    # halves and irrational scale: lattice_units finds the lattice, but force the table path
    d = _likert(1650, 5, 0.03) * 0.5 * np.pi
    x = d[d != 0]
    a = np.abs(x) / np.abs(x).max()
    exact = permutation_test(d, method="exact").pvalue
    L = 100_000
    for seed in (7, 8, 9):
        counts = P._mc_counts(a, np.sign(x), L, seed, k=None)
        p = (counts[0] + 1) / (L + 1)
        assert abs(p - exact) <= 4 * np.sqrt(exact * (1 - exact) / L) + 1 / (L + 1)


_CHILD = """
import json, sys, numpy as np, numba
from ipcausal import permutation_test
from ipcausal.stats import permutation as P
rng = np.random.default_rng(3)
out = {"threads": numba.get_num_threads()}
cont = rng.normal(0.05, 1.0, 1650)
lik = rng.integers(-4, 5, 1650).astype(float)
L = 400_000  # enough work for the parallel path on 2 threads
out["cont"] = permutation_test(cont, method="monte-carlo", n_resamples=L, rng=12345).pvalue
out["likert"] = permutation_test(lik, method="monte-carlo", n_resamples=L, rng=12345).pvalue
x = cont
a = np.abs(x) / np.abs(x).max()
out["forced"] = P._mc_counts(a, np.sign(x), 50_000, 77, threads=None).tolist()
print(json.dumps(out))
"""


def _child(threads: int) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    res = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_same_seed_same_p_on_one_and_two_threads() -> None:
    one, two = _child(1), _child(2)
    assert one["threads"] == 1 and two["threads"] == 2
    for key in ("cont", "likert", "forced"):
        assert one[key] == two[key], key  # bitwise


def test_set_num_threads_does_not_change_counts() -> None:
    import numba

    rng = np.random.default_rng(4)
    x = rng.normal(size=900)
    a = np.abs(x) / np.abs(x).max()
    before = numba.get_num_threads()
    try:
        res = []
        for t in sorted({1, before}):
            numba.set_num_threads(t)
            res.append(P._mc_counts(a, np.sign(x), 20_000, 3, threads=2).tolist())
        assert all(r == res[0] for r in res)
    finally:
        numba.set_num_threads(before)


def test_pvalue_never_zero_at_extremes() -> None:
    d = np.full(1650, 4.0)
    for method in ("exact", "monte-carlo", "saddlepoint"):
        p = permutation_test(d, method=method, n_resamples=1000, rng=1).pvalue
        assert p > 0, method
    assert permutation_test(np.full(5000, 1.0), method="exact").pvalue > 0
    assert permutation_test(np.linspace(1, 2, 3000), method="saddlepoint").pvalue > 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=2, max_size=80),
    method=st.sampled_from(["auto", "monte-carlo", "saddlepoint"]),
    alternative=st.sampled_from(["two-sided", "greater", "less"]),
)
def test_no_p_of_zero_ever(values: list[float], method: str, alternative: str) -> None:
    res = permutation_test(values, method=method, alternative=alternative, n_resamples=500, rng=0)
    assert 0.0 < res.pvalue <= 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=20, max_size=400).filter(lambda v: sum(map(abs, v)) > 0))
def test_order_invariance_of_monte_carlo(values: list[int]) -> None:
    d = np.array(values, dtype=float)
    perm = np.random.default_rng(len(values)).permutation(d.size)
    p1 = permutation_test(d, method="monte-carlo", n_resamples=2000, rng=5).pvalue
    p2 = permutation_test(d[perm], method="monte-carlo", n_resamples=2000, rng=5).pvalue
    assert p1 == p2
