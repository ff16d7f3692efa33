"""trend_test and heterogeneity_test: brute-force enumeration, a Python replay of the kernels' own
random stream (same draws, same counts), numpy's generator on the same randomisation, the k = 2
sign-flip identity, thread invariance, and every validation message."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from ipcausal.stats import ordered as O
from ipcausal.stats._kernels.stream import CHUNK, LANES, random_words
from ipcausal.stats.ordered import heterogeneity_test, trend_test
from ipcausal.stats.permutation import permutation_test

TOL = 1e-9


def _data(seed: int, n: int, k: int = 3, shift: float = 0.0, integer: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = rng.integers(1, 5, size=(n, k)).astype(float) if integer else rng.normal(size=(n, k)) + rng.normal(size=(n, 1))
    return y + shift * np.arange(k)


def _trend_stat(y: np.ndarray, c: np.ndarray) -> float:
    return float(((y - y.mean(axis=1, keepdims=True)) @ (c - c.mean())).sum())


def _spread(y: np.ndarray) -> float:
    m = y.mean(axis=0)
    return float(((m - m.mean()) ** 2).sum())


def _brute(y: np.ndarray, stat) -> list[float]:
    """Every (k!)^n relabeling in plain Python: the statistics of the relabelled tables."""
    n, k = y.shape
    perms = list(itertools.permutations(range(k)))
    return [stat(np.array([y[p, list(c)] for p, c in enumerate(combo)]))
            for combo in itertools.product(perms, repeat=n)]


def _p_from(draws, t: float, alternative: str, scale: float) -> float:
    d = np.asarray(draws)
    eps = TOL * scale
    hits = {"two-sided": np.abs(d) >= abs(t) - eps, "greater": d >= t - eps, "less": d <= t + eps}[alternative]
    return float(hits.mean())


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("scores", [None, [0.0, 1.0, 4.0]])
def test_trend_exact_equals_brute_force(alternative, scores) -> None:
    y = _data(3, 5, shift=0.4)
    c = np.arange(1.0, 4.0) if scores is None else np.array(scores)
    res = trend_test(y, scores=scores, alternative=alternative, method="exact")
    draws = _brute(y, lambda z: _trend_stat(z, c))
    assert res.method == "exact-enumeration" and res.n_resamples is None and res.seed is None
    assert res.statistic == pytest.approx(_trend_stat(y, c), rel=1e-12)
    assert res.pvalue == pytest.approx(_p_from(draws, res.statistic, alternative, 10.0), rel=1e-12)


def test_trend_exact_with_ties_four_levels_and_constant_rows() -> None:
    y = _data(5, 3, k=4, integer=True)
    y = np.vstack([y, np.full((2, 4), 2.0)])  # two prompts answered alike at every level
    res = trend_test(y, method="exact")
    draws = _brute(y[:3], lambda z: _trend_stat(z, np.arange(4.0)))
    assert res.n_constant == 2 and res.n == 5
    assert res.pvalue == pytest.approx(_p_from(draws, res.statistic, "two-sided", 10.0), rel=1e-12)
    assert trend_test(np.ones((4, 3))).pvalue == 1.0


def test_trend_slope_and_level_means() -> None:
    rng = np.random.default_rng(8)
    y = rng.normal(size=(30, 4))
    res = trend_test(y, scores=[0, 1, 2, 5], n_resamples=99, rng=0)
    slopes = [np.polyfit([0, 1, 2, 5], row, 1)[0] for row in y]  # per-prompt least squares
    assert res.slope == pytest.approx(float(np.mean(slopes)), rel=1e-10)
    np.testing.assert_allclose(res.level_means, y.mean(axis=0))


def test_trend_two_levels_is_the_sign_flip_test() -> None:
    y = _data(9, 12)[:, :2]
    for alt in ("two-sided", "greater", "less"):
        got = trend_test(y, alternative=alt, method="exact").pvalue
        ref = permutation_test(y[:, 1] - y[:, 0], alternative=alt, method="exact").pvalue
        assert got == pytest.approx(ref, rel=1e-12)


def test_trend_invariant_to_affine_scores_and_reversal() -> None:
    y = _data(4, 6, shift=0.3)
    base = trend_test(y, method="exact")
    assert trend_test(y, scores=[10, 20, 30], method="exact").pvalue == pytest.approx(base.pvalue, rel=1e-12)
    up = trend_test(y, alternative="greater", method="exact").pvalue
    down = trend_test(y[:, ::-1], alternative="less", method="exact").pvalue
    assert up == pytest.approx(down, rel=1e-12)


def _stream_draws(n: int, n_perm: int, n_resamples: int, seed: int) -> np.ndarray:
    """The kernels' relabelings replayed in Python: (L, n) permutation indices per prompt.

    Group size: the largest g with P**g ≤ 256 and g ≤ n; resample r of chunk c reads lane
    r % 16; group i takes 16-bit field i of the resample's words and Lemire's
    multiply-with-rejection (a rejection takes the low 16 bits of the lane's next word)."""
    group = 1
    while n_perm ** (group + 1) <= 256 and group + 1 <= n:
        group += 1
    n_groups = -(-n // group)
    n_words = -(-n_groups // 4)
    out = np.empty((n_resamples, n), dtype=np.int64)
    for c in range(-(-n_resamples // CHUNK)):
        count = min(CHUNK, n_resamples - c * CHUNK)
        lanes = [iter(random_words(seed, c * LANES + i, (CHUNK // LANES) * (n_words + 4)).tolist())
                 for i in range(LANES)]
        for r in range(count):
            it = lanes[r % LANES]
            words = [next(it) for _ in range(n_words)]
            for g in range(n_groups):
                size = min(n, g * group + group) - g * group
                bound = n_perm**size
                m = ((words[g // 4] >> (16 * (g % 4))) & 0xFFFF) * bound
                if (m & 0xFFFF) < bound:
                    while (m & 0xFFFF) < (65536 - bound) % bound:
                        m = (next(it) & 0xFFFF) * bound
                combo = m >> 16
                for t in range(size):
                    out[c * CHUNK + r, g * group + t] = combo % n_perm
                    combo //= n_perm
    return out


def _relabelled(y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """(L, n, k): each resample's table, prompt p's responses permuted by perms[idx[:, p]]."""
    perms = np.array(list(itertools.permutations(range(y.shape[1]))))
    return y[np.arange(y.shape[0])[None, :, None], perms[idx]]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_trend_monte_carlo_replays_the_kernel_stream(alternative) -> None:
    y = _data(11, 7, shift=0.2)
    L = CHUNK + 300  # a whole chunk and part of the next
    res = trend_test(y, alternative=alternative, method="monte-carlo", n_resamples=L, rng=5)
    z = _relabelled(y, _stream_draws(7, 6, L, res.seed))
    w = np.arange(3.0) - 1.0
    draws = (z @ w).sum(axis=1)
    hits = _p_from(draws, res.statistic, alternative, 10.0) * L
    assert res.method == "monte-carlo" and res.n_resamples == L
    assert res.pvalue == pytest.approx((1 + round(hits)) / (L + 1), abs=1e-15)


def test_heterogeneity_monte_carlo_replays_the_kernel_stream() -> None:
    y = _data(12, 6, k=3, shift=0.15)
    L = CHUNK + 77
    res = heterogeneity_test(y, method="monte-carlo", n_resamples=L, rng=2)
    z = _relabelled(y, _stream_draws(6, 6, L, res.seed)).mean(axis=1)  # (L, k) relabelled cue means
    draws = ((z - z.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    hits = int((draws >= res.statistic - 1e-9).sum())
    assert res.pvalue == pytest.approx((1 + hits) / (L + 1), abs=1e-15)


@pytest.mark.parametrize("test", [trend_test, heterogeneity_test])
def test_monte_carlo_agrees_with_numpy_generator_and_exact(test) -> None:
    y = _data(21, 6, shift=0.25)
    L = 30_000
    mc = test(y, method="monte-carlo", n_resamples=L, rng=3)
    ex = test(y, method="exact")
    idx = np.random.default_rng(99).integers(0, 6, size=(L, 6))  # numpy's generator, same randomisation
    z = _relabelled(y, idx)
    if test is trend_test:
        ref = _p_from((z @ (np.arange(3.0) - 1)).sum(axis=1), ex.statistic, "two-sided", 10.0)
    else:
        m = z.mean(axis=1)
        ref = float((((m - m.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) >= ex.statistic - 1e-9).mean())
    se = math.sqrt(ex.pvalue * (1 - ex.pvalue) / L) + 1e-4
    assert abs(mc.pvalue - ex.pvalue) < 4 * se
    assert abs(ref - ex.pvalue) < 4 * se


@pytest.mark.parametrize("k,n", [(2, 9), (3, 4)])
def test_heterogeneity_exact_equals_brute_force(k, n) -> None:
    y = _data(6, n, k=k, shift=0.5)
    res = heterogeneity_test(y, method="exact")
    draws = np.array(_brute(y, _spread))
    assert res.statistic == pytest.approx(_spread(y), rel=1e-12)
    assert res.pvalue == pytest.approx(float((draws >= res.statistic - 1e-9).mean()), rel=1e-12)
    np.testing.assert_allclose(res.cue_means, y.mean(axis=0))


@pytest.mark.parametrize("test", [trend_test, heterogeneity_test])
def test_threads_give_identical_counts_and_results_are_plain(test) -> None:
    y = _data(2, 40, shift=0.1)
    one = test(y, n_resamples=5_000, rng=7, _threads=1)
    two = test(y, n_resamples=5_000, rng=7, _threads=2)
    assert one == two
    assert json.loads(json.dumps(one.to_dict()))["pvalue"] == one.pvalue
    assert "H0" in one.null_hypothesis and "prompt" in one.null_hypothesis


@pytest.mark.parametrize("test", [trend_test, heterogeneity_test])
@pytest.mark.parametrize("y,exc,match", [
    ("abc", TypeError, r"`y` must be a 2-D array"),
    ([1.0, 2.0, 3.0], ValueError, r"`y` must be 2-D"),
    ([[1.0], [2.0]], ValueError, r"`y` needs between 2 and 8"),
    (np.ones((2, 9)), ValueError, r"`y` needs between 2 and 8"),
    (np.ones((0, 3)), ValueError, r"`y` needs at least one prompt"),
    ([[1.0, np.nan], [1.0, 2.0]], ValueError, r"`y` must be finite"),
    ([[1, 2], [3]], ValueError, r"`y` is ragged"),
    (np.array([["a", "b"]]), TypeError, r"`y` must hold numbers"),
])
def test_bad_y(test, y, exc, match) -> None:
    with pytest.raises(exc, match=match):
        test(y)


@pytest.mark.parametrize("test", [trend_test, heterogeneity_test])
def test_bad_method_resamples_rng(test) -> None:
    y = _data(1, 20)
    with pytest.raises(ValueError, match=r"`method` must be one of 'auto', 'exact', 'monte-carlo'"):
        test(y, method="fast")
    with pytest.raises(ValueError, match=r"`method`='exact' is not feasible"):
        test(y, method="exact")
    with pytest.raises(ValueError, match=r"`n_resamples` must be >= 1"):
        test(y, n_resamples=0)
    with pytest.raises(TypeError, match=r"`n_resamples` must be an integer"):
        test(y, n_resamples=1.5)
    with pytest.raises(TypeError, match=r"`rng` must be None, a non-negative int"):
        test(y, rng="seed")


def test_trend_bad_scores_and_alternative() -> None:
    y = _data(1, 5)
    with pytest.raises(ValueError, match=r"`scores` must hold one number per level of `y` \(3\)"):
        trend_test(y, scores=[1, 2])
    with pytest.raises(ValueError, match=r"`scores` must be finite and strictly increasing"):
        trend_test(y, scores=[1, 3, 2])
    with pytest.raises(ValueError, match=r"`scores` must be finite and strictly increasing"):
        trend_test(y, scores=[1, 2, np.inf])
    with pytest.raises(TypeError, match=r"`scores` must hold numbers"):
        trend_test(y, scores=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"`alternative` must be one of 'two-sided', 'greater', 'less'"):
        trend_test(y, alternative="up")


def test_table_limit_names_y() -> None:
    y = _data(1, 1700, k=7)
    with pytest.raises(ValueError, match=r"`y` with 7 levels and 1700 prompts needs relabeling tables over"):
        trend_test(y, n_resamples=10)
    assert O.MAX_LABELS == 8
