"""PB's bootstrap from the counter-based stream (issue 33): the draws decoded by hand, exactly
uniform indices, the same result on 1 or N threads and by row or by row type, and the interval
written out from the same draws (the oracle); the former draws stay behind ``bootstrap="numpy"``."""

from __future__ import annotations

import numpy as np
import pytest

from ipcausal import personalization_bias
from ipcausal.stats import _bootstrap as BS
from ipcausal.stats import _kernels as K
from ipcausal.stats._validate import seed_from


def _indices_by_hand(n: int, n_resamples: int, seed: int, offset: int, draws: int | None = None) -> np.ndarray:
    """The module's rule in plain Python: 32-bit halves (low first) of the stream's words, Lemire's
    multiply, rejection below 2**32 mod n."""
    draws = n if draws is None else draws
    out = np.empty((n_resamples, draws), dtype=np.int64)
    reject = (2**32 - n) % n
    for r in range(n_resamples):
        words = K.random_words(seed, offset + r, 2 * draws + 64)
        got: list[int] = []
        for w in words.tolist():
            for x in (w & 0xFFFFFFFF, w >> 32):
                m = x * n
                if (m & 0xFFFFFFFF) >= reject and len(got) < draws:
                    got.append(m >> 32)
        out[r] = got
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1000, 65_537])
def test_draws_are_the_stream_decoded_by_hand(n: int) -> None:
    for seed, offset in ((0, 0), (12345, 7), (2**62 + 1, 4000)):
        got = K.boot_indices(n, 3, seed, offset)
        assert np.array_equal(got, _indices_by_hand(n, 3, seed, offset)), (n, seed, offset)
        assert got.min() >= 0 and got.max() < n


def test_rejected_remainders_are_skipped_and_the_draws_are_uniform() -> None:
    n = 3 * 2**30 + 1  # 2**32 mod n = 2**30 - 1: about one 32-bit number in four is rejected
    got = K.boot_indices(n, 2, 5, 0, draws=2000)
    assert np.array_equal(got, _indices_by_hand(n, 2, 5, 0, draws=2000))
    words = K.random_words(5, 0, 2000).tolist()
    halves = [h for w in words for h in (w & 0xFFFFFFFF, w >> 32)]
    rejected = sum((h * n) & 0xFFFFFFFF < 2**30 - 1 for h in halves[:2000])
    assert 350 < rejected < 650  # the rule above really rejects here (about 500 of 2,000)
    draws = K.boot_indices(6, 20_000, 3, 0).ravel()
    counts = np.bincount(draws, minlength=6)
    expected = draws.size / 6
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 25.7, counts  # chi-square(5) 0.9999 quantile: fails about once in 10,000 seeds


def test_one_and_many_threads_and_row_types_give_the_same_sums() -> None:
    rng = np.random.default_rng(1)
    table = rng.integers(0, 13, (50_000, 6)).astype(np.float64)  # integer rows: typed sums are exact
    table[:, :3] = 2.0
    one = K.boot_sums(table, 40, 77, 5)
    assert np.array_equal(one, K.boot_sums_parallel(table, 40, 77, 5))
    types, rows = BS.row_types(table)
    assert np.array_equal(rows[types], table)
    assert np.array_equal(one, K.boot_type_sums(types, rows, 40, 77, 5))
    assert np.array_equal(one, K.boot_type_sums_parallel(types, rows, 40, 77, 5))
    idx = _indices_by_hand(table.shape[0], 2, 77, 5)  # the oracle: the decoded draws, summed in numpy
    assert np.array_equal(one[:2], np.stack([table[i].sum(axis=0) for i in idx]))
    cont = rng.normal(size=(3000, 2))
    assert BS.row_types(cont, most=100) is None
    assert np.allclose(BS.table_sums(cont, 30, 4), np.stack([cont[i].sum(axis=0) for i in K.boot_indices(3000, 30, 4, 0)]),
                       rtol=1e-12, atol=1e-12)


def _pb_by_hand(v: np.ndarray, b: np.ndarray, c: np.ndarray | None, n_resamples: int, rng: int,
                level: float = 0.95) -> tuple[float, float]:
    """PB's interval written out from the decoded draws (cluster or within-background bootstrap)."""
    seed = seed_from(np.random.default_rng(rng))
    labels = sorted(set(b))
    if c is None:
        means = []
        for u, lab in enumerate(labels):
            g = v[b == lab]
            idx = K.boot_indices(g.size, n_resamples, seed, u * n_resamples)
            means.append(g[idx].mean(axis=1))
        boot = np.stack(means, axis=1)
    else:
        ids = np.unique(c.astype(str), return_inverse=True)[1].ravel()
        n_c = ids.max() + 1
        idx = K.boot_indices(n_c, n_resamples, seed, 0)
        w = np.stack([np.bincount(row, minlength=n_c) for row in idx]).astype(float)
        boot = np.stack([(w @ np.bincount(ids[b == lab], weights=v[b == lab], minlength=n_c))
                         / (w @ np.bincount(ids[b == lab], minlength=n_c)) for lab in labels], axis=1)
    dist = np.sqrt(np.var(boot, axis=1))
    return tuple(np.quantile(dist[np.isfinite(dist)], [(1 - level) / 2, (1 + level) / 2]))  # type: ignore[return-value]


@pytest.mark.parametrize("clustered", [True, False])
def test_pb_interval_is_the_one_written_out_from_the_same_draws(clustered: bool) -> None:
    rng = np.random.default_rng(6)
    n = 3000
    v = rng.integers(1, 7, n).astype(float) + rng.normal(0, 0.1, n)
    b = np.array(["AAE", "ESL", "SAE"])[rng.integers(0, 3, n)]
    c = np.array([f"q{i}" for i in rng.integers(0, 700, n)]) if clustered else None
    res = personalization_bias(v, b, clusters=c, n_resamples=300, rng=11)
    lo, hi = _pb_by_hand(v, b, c, 300, 11)
    assert res.ci_low == pytest.approx(lo, rel=1e-12) and res.ci_high == pytest.approx(hi, rel=1e-12)


def test_pb_on_a_large_rating_table_takes_the_typed_sums_with_the_same_interval() -> None:
    rng = np.random.default_rng(8)
    n_c = 30_000  # per-cluster table of 30,000 x 6 floats (1.4 MB): summed by type
    v = rng.integers(1, 7, 2 * n_c).astype(float)
    b = np.array(["AAE", "SAE"])[np.arange(2 * n_c) % 2]
    c = np.repeat(np.arange(n_c), 2).astype(str)
    res = personalization_bias(v, b, clusters=c, n_resamples=60, rng=2)
    lo, hi = _pb_by_hand(v, b, c, 60, 2)
    assert res.ci_low == pytest.approx(lo, rel=1e-12) and res.ci_high == pytest.approx(hi, rel=1e-12)


def test_former_draws_stay_available_and_the_choice_is_validated() -> None:
    values = np.array([1.0, 2.0, 1.5, 3.0, 0.5, 2.5])
    labels = np.array(["a", "b", "a", "b", "a", "b"], dtype=object)
    prompts = np.array(["p1", "p1", "p2", "p2", "p3", "p3"], dtype=object)
    old = personalization_bias(values, labels, clusters=prompts, n_resamples=500, rng=7, bootstrap="numpy")
    idx = np.random.default_rng(7).integers(0, 3, size=(500, 3))  # ipcausal 0.1's draws, written out
    w = np.stack([np.bincount(row, minlength=3) for row in idx])
    ma = (w @ np.array([1.0, 1.5, 0.5])) / w.sum(axis=1)
    mb = (w @ np.array([2.0, 3.0, 2.5])) / w.sum(axis=1)
    assert (old.ci_low, old.ci_high) == pytest.approx(tuple(np.quantile(np.abs(ma - mb) / 2, [0.025, 0.975])),
                                                     rel=1e-12)
    new = personalization_bias(values, labels, clusters=prompts, n_resamples=500, rng=7)
    assert new.statistic == old.statistic
    with pytest.raises(ValueError, match="`bootstrap` must be one of"):
        personalization_bias(values, labels, bootstrap="python")
