"""PB (personalization bias) and the mean interval."""

from __future__ import annotations

import numpy as np
import pytest

from ipcausal import personalization_bias
from ipcausal.stats._kernels import boot_indices
from ipcausal.stats._validate import seed_from
from ipcausal.stats import mean_ci


def test_pb_is_population_sd_of_background_means() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(size=300)
    bgs = np.repeat(["SAE", "AAE", "ESL"], 100)
    pb = personalization_bias(values, bgs, rng=1)
    means = [values[bgs == b].mean() for b in ["AAE", "ESL", "SAE"]]
    assert pb.statistic == pytest.approx(np.std(means, ddof=0))
    # oracle for the interval: the percentile bootstrap written out here, same draws in the same order
    # (background u, resample r: generator u * 2000 + r of the counter-based stream)
    seed = seed_from(np.random.default_rng(1))
    boot = np.empty((2000, 3))
    for u, b in enumerate(["AAE", "ESL", "SAE"]):
        g = values[bgs == b]
        boot[:, u] = g[boot_indices(g.size, 2000, seed, u * 2000)].mean(axis=1)
    lo, hi = np.quantile(np.std(boot, axis=1, ddof=0), [0.025, 0.975])
    assert (pb.ci_low, pb.ci_high) == pytest.approx((lo, hi), rel=1e-12)
    # the former draws (bootstrap="numpy"): numpy's generator, one background after the other
    old = personalization_bias(values, bgs, rng=1, bootstrap="numpy")
    gen = np.random.default_rng(1)
    for u, b in enumerate(["AAE", "ESL", "SAE"]):
        g = values[bgs == b]
        boot[:, u] = g[gen.integers(0, g.size, size=(2000, g.size))].mean(axis=1)
    lo, hi = np.quantile(np.std(boot, axis=1, ddof=0), [0.025, 0.975])
    assert (old.ci_low, old.ci_high) == pytest.approx((lo, hi), rel=1e-12)
    assert set(pb.means) == {"AAE", "ESL", "SAE"} and pb.counts["SAE"] == 100


def test_pb_vector_outcome() -> None:
    v = np.array([[0, 0], [0, 0], [2, 4], [2, 4]], dtype=float)
    pb = personalization_bias(v, ["a", "a", "b", "b"], rng=0)
    # per-dimension population variances 1 and 4 -> sqrt(5)
    assert pb.statistic == pytest.approx(np.sqrt(5.0))


def test_pb_bootstrap_interval_covers_true_spread() -> None:
    rng = np.random.default_rng(3)
    values = np.r_[rng.normal(0, 1, 400), rng.normal(1, 1, 400)]
    pb = personalization_bias(values, ["x"] * 400 + ["y"] * 400, rng=4)
    assert pb.ci_low < 0.5 < pb.ci_high  # true PB = |1 - 0| / 2


def test_pb_reproducible() -> None:
    v = np.arange(20.0)
    b = ["a", "b"] * 10
    assert personalization_bias(v, b, rng=5) == personalization_bias(v, b, rng=5)


def test_mean_ci_matches_scipy_t_interval() -> None:
    from scipy import stats

    x = [1.0, 2.0, 3.0, 4.0, 7.5, -2.0]
    for level in (0.5, 0.9, 0.95, 0.99):
        res = mean_ci(x, confidence_level=level)
        lo, hi = stats.t.interval(level, len(x) - 1, loc=np.mean(x), scale=stats.sem(x))
        assert res.statistic == pytest.approx(np.mean(x))
        assert (res.ci_low, res.ci_high) == pytest.approx((lo, hi), rel=1e-12)
        assert res.confidence_level == level and res.n == 6 and res.method == "student-t"


@pytest.mark.parametrize(
    ("values", "bgs", "kwargs", "exc", "match"),
    [
        ([1.0, 2.0], ["a", "a"], {}, ValueError, "at least two backgrounds"),
        ([1.0, 2.0], ["a"], {}, ValueError, "`backgrounds` must have one label per value"),
        ([1.0, np.nan], ["a", "b"], {}, ValueError, "`values` must be finite"),
        (["x", "y"], ["a", "b"], {}, TypeError, "`values` must be numeric"),
        ([1.0, 2.0], "ab", {}, TypeError, "`backgrounds` must be a sequence"),
        ([1.0, 2.0], ["a", "b"], {"confidence_level": 0}, ValueError, "`confidence_level` must lie in"),
        ([1.0, 2.0], ["a", "b"], {"n_resamples": 0}, ValueError, "`n_resamples` must be >= 1"),
        ([], [], {}, ValueError, "`values` must have shape"),
    ],
)
def test_pb_validation(values, bgs, kwargs, exc, match) -> None:
    with pytest.raises(exc, match=match):
        personalization_bias(values, bgs, **kwargs)
