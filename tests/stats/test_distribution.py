"""mmd_permutation_test and similarity_matrices: brute force over every split, a numpy
implementation of the same randomisation, the statistic's definition, threads, validation."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import ipcausal
from ipcausal.stats import distribution as D
from ipcausal.stats.distribution import mmd_permutation_test, similarity_matrices


def _sims(seed: int, n: int, r: int, shift: float = 0.0, dim: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2 * r, dim)) + rng.normal(size=(n, 1, dim))  # a prompt effect per pair
    x[:, r:] += shift
    d2 = ((x[:, :, None, :] - x[:, None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * dim))


def _pair_stat(s: np.ndarray, side_x) -> float:
    """Mean within-side similarity − mean cross-side similarity, diagonal left out (by definition)."""
    m = s.shape[0]
    side_y = [i for i in range(m) if i not in side_x]
    within_x = np.mean([s[i, j] for i in side_x for j in side_x if i != j])
    within_y = np.mean([s[i, j] for i in side_y for j in side_y if i != j])
    cross = np.mean([s[i, j] for i in side_x for j in side_y])
    return (within_x + within_y) / 2 - cross


def _brute(sim: np.ndarray) -> float:
    n, m, _ = sim.shape
    r = m // 2
    per = [[_pair_stat(sim[p], list(x)) for x in itertools.combinations(range(m), r)] for p in range(n)]
    obs = sum(_pair_stat(sim[p], list(range(r))) for p in range(n))
    combos = list(itertools.product(*per))
    return sum(sum(c) >= obs - 1e-9 for c in combos) / len(combos)


def _numpy_mmd(sim: np.ndarray, n_resamples: int, seed: int) -> float:
    """The same randomisation, vectorised numpy: a uniform side-X subset of size r per pair."""
    n, m, _ = sim.shape
    r = m // 2
    rng = np.random.default_rng(seed)
    obs = sum(_pair_stat(sim[p], list(range(r))) for p in range(n))
    keys = rng.random((n_resamples, n, m)).argsort(axis=2) < r  # True = side X
    same = keys[..., :, None] == keys[..., None, :]
    off = ~np.eye(m, dtype=bool)
    w_same = (sim[None] * (same & off)).sum(axis=(2, 3)) / 2
    w_all = (sim * off).sum(axis=(1, 2)) / 2
    t = ((1 / (r * (r - 1)) + 1 / r**2) * w_same - w_all / r**2).sum(axis=1)
    return (1 + (t >= obs - 1e-9).sum()) / (n_resamples + 1)


@pytest.mark.parametrize(("n", "r", "shift"), [(3, 2, 0.5), (2, 3, 1.0), (1, 4, 0.0), (5, 2, 0.0)])
def test_exact_equals_brute_force(n, r, shift) -> None:
    sim = _sims(n * 10 + r, n, r, shift)
    res = mmd_permutation_test(sim, method="exact")
    assert res.method == "exact-enumeration" and res.pvalue_se == 0.0
    assert res.pvalue == pytest.approx(_brute(sim), rel=1e-12)
    assert res.statistic == pytest.approx(np.mean([_pair_stat(s, list(range(r))) for s in sim]))
    np.testing.assert_allclose(res.pair_statistics, [_pair_stat(s, list(range(r))) for s in sim])


def test_statistic_is_half_the_unbiased_mmd2() -> None:
    x = np.random.default_rng(0).normal(size=(8, 3))
    sim = np.exp(-((x[:, None] - x[None]) ** 2).sum(-1))
    k_xx, k_yy, k_xy = sim[:4, :4], sim[4:, 4:], sim[:4, 4:]
    mmd2_u = ((k_xx.sum() - np.trace(k_xx)) / 12 + (k_yy.sum() - np.trace(k_yy)) / 12 - 2 * k_xy.mean())
    assert mmd_permutation_test(sim, method="exact").statistic == pytest.approx(mmd2_u / 2)


def test_monte_carlo_agrees_with_exact_and_numpy() -> None:
    sim = _sims(4, 3, 3, shift=0.4)
    exact = mmd_permutation_test(sim, method="exact").pvalue
    L = 20_000
    mc = mmd_permutation_test(sim, method="monte-carlo", n_resamples=L, rng=3)
    ref = _numpy_mmd(sim, L, 11)
    se = np.sqrt(exact * (1 - exact) / L)
    assert mc.method == "monte-carlo" and mc.n_resamples == L
    assert abs(mc.pvalue - exact) < 4 * se + 1e-4
    assert abs(ref - exact) < 4 * se + 1e-4
    assert mc.pvalue_se == pytest.approx(np.sqrt(mc.pvalue * (1 - mc.pvalue) / (L + 1)))


def test_direct_route_agrees_with_the_tables(monkeypatch) -> None:
    sim = _sims(9, 12, 3, shift=0.3)
    table = mmd_permutation_test(sim, method="monte-carlo", n_resamples=20_000, rng=1)
    monkeypatch.setattr(D, "MAX_TABLE_SPLITS", 1)
    direct = mmd_permutation_test(sim, method="monte-carlo", n_resamples=20_000, rng=1)
    assert direct.statistic == table.statistic
    assert abs(direct.pvalue - table.pvalue) < 4 * np.sqrt(2) * table.pvalue_se + 1e-4
    with pytest.raises(ValueError, match="`method`='exact' needs r ≤ 7"):
        mmd_permutation_test(sim[:1], method="exact")


def test_threads_seeds_and_invariances() -> None:
    sim = _sims(2, 300, 5, shift=0.1)
    one = mmd_permutation_test(sim, n_resamples=4_000, rng=5, _threads=1)
    two = mmd_permutation_test(sim, n_resamples=4_000, rng=5, _threads=2)
    assert one == two
    assert mmd_permutation_test(sim, n_resamples=4_000, rng=6) != one
    # the diagonal is never read; permuting responses within a side changes nothing
    small = _sims(3, 4, 3, shift=0.5)
    base = mmd_permutation_test(small, method="exact")
    nan_diag = small.copy()
    nan_diag[:, np.arange(6), np.arange(6)] = np.nan
    assert mmd_permutation_test(nan_diag, method="exact").pvalue == base.pvalue
    perm = [2, 0, 1, 4, 5, 3]
    shuffled = small[:, perm][:, :, perm]
    assert mmd_permutation_test(shuffled, method="exact").pvalue == pytest.approx(base.pvalue, rel=1e-12)
    swapped = small[:, [3, 4, 5, 0, 1, 2]][:, :, [3, 4, 5, 0, 1, 2]]
    assert mmd_permutation_test(swapped, method="exact").pvalue == pytest.approx(base.pvalue, rel=1e-12)


def test_a_shifted_side_is_detected_and_json() -> None:
    res = mmd_permutation_test(_sims(1, 40, 5, shift=1.0), n_resamples=9_999, rng=0)
    assert res.pvalue < 0.001 and res.statistic > 0
    d = json.loads(json.dumps(res.to_dict()))
    assert d["r"] == 5 and d["n"] == 40 and d["alternative"] == "greater" and len(d["pair_statistics"]) == 40
    assert "exchangeable" in res.null_hypothesis
    assert ipcausal.stats.mmd_permutation_test is mmd_permutation_test


def test_auto_route_and_a_single_matrix() -> None:
    sim = _sims(0, 1, 2)
    assert mmd_permutation_test(sim[0]).method == "exact-enumeration"
    assert mmd_permutation_test(_sims(0, 30, 5), n_resamples=99, rng=1).method == "monte-carlo"
    with pytest.raises(ValueError, match="`method`='exact' is not feasible"):
        mmd_permutation_test(_sims(0, 30, 5), method="exact")


@pytest.mark.parametrize(("sim", "exc", "pattern"), [
    ("abc", TypeError, "`similarity` must be an array"),
    (np.zeros((2, 4, 5)), ValueError, r"`similarity` must have shape \(n_pairs, 2r, 2r\)"),
    (np.zeros(4), ValueError, "`similarity` must have shape"),
    (np.zeros((0, 4, 4)), ValueError, "`similarity` needs at least one pair"),
    (np.zeros((1, 2, 2)), ValueError, "r ≥ 2 responses per side"),
    (np.zeros((1, 5, 5)), ValueError, "r ≥ 2 responses per side"),
    (np.array([[["a"] * 4] * 4]), TypeError, "`similarity` must hold numbers"),
])
def test_validation_of_the_array(sim, exc, pattern) -> None:
    with pytest.raises(exc, match=pattern):
        mmd_permutation_test(sim)


def test_validation_of_values_and_options() -> None:
    sim = _sims(0, 3, 2)
    bad = sim.copy()
    bad[1, 0, 2] = np.nan
    with pytest.raises(ValueError, match=r"finite off the diagonal; NaN or inf in pair\(s\) \[1\]"):
        mmd_permutation_test(bad)
    bad = sim.copy()
    bad[2, 0, 1] += 0.1
    with pytest.raises(ValueError, match=r"must be symmetric; not in pair\(s\) \[2\]"):
        mmd_permutation_test(bad)
    with pytest.raises(ValueError, match="`method` must be one of"):
        mmd_permutation_test(sim, method="fast")
    with pytest.raises(ValueError, match="`n_resamples` must be >= 1"):
        mmd_permutation_test(sim, n_resamples=0)
    with pytest.raises(TypeError, match="`rng` must be None"):
        mmd_permutation_test(sim, method="monte-carlo", rng="x")
    with pytest.raises(TypeError, match="`rng` must be None"):
        mmd_permutation_test(sim, method="exact", rng=1.5)


def test_similarity_matrices_score_each_unordered_pair_once() -> None:
    calls: list[tuple[str, str]] = []

    def sim(a: str, b: str) -> float:
        calls.append((a, b))
        return 1.0 - abs(len(a) - len(b)) / 10

    si = [["aa", "bbb"], ["c", "aa"]]
    sj = [["bbb", "dddd"], ["aa", "c"]]
    out = similarity_matrices(si, sj, sim)
    assert out.shape == (2, 4, 4) and np.allclose(out, out.transpose(0, 2, 1))
    assert np.all(out[:, np.arange(4), np.arange(4)] == 1.0)
    assert out[0, 0, 1] == pytest.approx(0.9) and out[0, 1, 2] == 1.0
    assert len(calls) == len({frozenset(c) if c[0] != c[1] else c for c in calls})  # no pair twice
    assert mmd_permutation_test(out, method="exact").n == 2


@pytest.mark.parametrize(("args", "exc", "pattern"), [
    (([["a", "b"]], [["c", "d"]], "embedding"), TypeError, "`similarity` must be a callable"),
    (("ab", [["c", "d"]], len), TypeError, "`samples_i` must be a sequence"),
    (([["a", "b"]], [["c", "d"], ["e", "f"]], max), ValueError, "one entry per pair"),
    (([], [], max), ValueError, "`samples_i` must not be empty"),
    (([["a", "b"], ["a", "b", "c"]], [["c", "d"], ["c", "d", "e"]], max), ValueError, "same number r"),
    (([["a"]], [["c"]], max), ValueError, "r ≥ 2 samples per side"),
    (([["a", "b"]], ["cd"], max), TypeError, "entry 0 must be a list of responses"),
    (([["a", "b"]], [["c", "d"]], lambda a, b: float("nan")), ValueError, "`similarity` returned nan"),
])
def test_similarity_matrices_validation(args, exc, pattern) -> None:
    with pytest.raises(exc, match=pattern):
        similarity_matrices(*args)


def test_exact_p_is_invariant_to_an_affine_change_of_the_similarity() -> None:
    sim = _sims(12, 3, 3, shift=0.6)
    base = mmd_permutation_test(sim, method="exact")
    moved = mmd_permutation_test(4.0 * sim - 1.5, method="exact")
    assert moved.pvalue == pytest.approx(base.pvalue, rel=1e-12)
    assert moved.statistic == pytest.approx(4.0 * base.statistic)
    order = [2, 0, 1]  # the order of the pairs changes nothing exact
    assert mmd_permutation_test(sim[order], method="exact").pvalue == pytest.approx(base.pvalue, rel=1e-12)
