"""Prediction-powered inference (ipcausal.stats.ppi): an oracle, the PPI++ reference code, edge cases, size.

The oracle is the estimator written out directly in numpy (and scipy's t distribution); the
reference is ppi_py, the authors' package (Angelopoulos et al.), for the point estimate and the
power-tuned λ (its values recorded in fixtures/ppi_py_reference.json by benchmarks/ppi_reference.py).  The seeded calibration with 10,000 sets per setting is benchmarks/calib_ppi.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from ipcausal.stats import PPIResult, ppi_mean_test
from ipcausal.stats.ppi import tuned_lambda


def _data(seed: int, n: int = 60, big_n: int = 500, bias: float = 0.4):
    g = np.random.default_rng(seed)
    h_all = g.normal(0.2, 1.0, n + big_n)
    f_all = 0.8 * h_all + bias + g.normal(0.0, 0.6, n + big_n)
    return h_all[:n], f_all[:n], f_all[n:]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lam", [None, 0.0, 0.5, 1.0])
def test_against_a_direct_numpy_computation(seed: int, lam: float | None) -> None:
    h, f, fu = _data(seed)
    res = ppi_mean_test(h, f, fu, lam=lam, confidence_level=0.9)
    n, big_n = h.size, fu.size
    if lam is None:  # PPI++: cov(h, f) / ((1 + n/N) var(f over all units))
        cov = np.sum((h - h.mean()) * (f - f.mean())) / n
        var = np.sum((np.r_[f, fu] - np.r_[f, fu].mean()) ** 2) / (n + big_n - 1)
        lam = min(1.0, max(0.0, cov / ((1 + n / big_n) * var)))
    theta = lam * fu.mean() + np.mean(h - lam * f)
    se = math.sqrt(lam**2 * np.var(fu, ddof=1) / big_n + np.var(h - lam * f, ddof=1) / n)
    q = sps.t.ppf(0.95, n - 1)
    assert res.lam == pytest.approx(lam, rel=1e-12, abs=1e-15)
    assert res.statistic == pytest.approx(theta, rel=1e-12)
    assert res.se == pytest.approx(se, rel=1e-12)
    assert (res.ci_low, res.ci_high) == pytest.approx((theta - q * se, theta + q * se), rel=1e-10)
    assert res.pvalue == pytest.approx(2 * sps.t.sf(abs(theta / se), n - 1), rel=1e-9)
    assert res.rectifier == pytest.approx(np.mean(h - f)) and res.judge_mean == pytest.approx(np.r_[f, fu].mean())


def test_against_the_authors_ppi_py() -> None:
    """ppi_py's λ, estimate and interval, recorded by benchmarks/ppi_reference.py (ppi-python 0.2.3).

    ppi-python is not installed by ``make``: it installs a top-level ``tests`` package that shadows
    this repository's ``tests`` helpers, so its values are recorded once, like R's.
    """
    import json
    from pathlib import Path

    ref = json.loads((Path(__file__).parent / "fixtures" / "ppi_py_reference.json").read_text(encoding="utf-8"))
    assert len(ref["rows"]) == 5
    for row in ref["rows"]:
        h, f, fu = _data(row["seed"], n=row["n"])
        res = ppi_mean_test(h, f, fu)
        assert res.lam == pytest.approx(row["lam"], rel=1e-10)
        assert res.statistic == pytest.approx(row["estimate"], rel=1e-10)
        # ppi_py uses the z quantile and ddof 0: its interval is a little narrower than our t interval
        assert 1.0 < (res.ci_high - res.ci_low) / (row["ci_high"] - row["ci_low"]) < 1.06


def test_lambda_zero_is_the_human_only_t_test() -> None:
    h, f, fu = _data(3)
    res = ppi_mean_test(h, f, fu, lam=0.0, null_value=0.1)
    t = sps.ttest_1samp(h, 0.1)
    ci = t.confidence_interval(0.95)
    assert res.statistic == pytest.approx(h.mean()) and res.pvalue == pytest.approx(t.pvalue)
    assert (res.ci_low, res.ci_high) == pytest.approx((ci.low, ci.high))
    assert (res.human_ci_low, res.human_ci_high, res.human_pvalue) == pytest.approx((ci.low, ci.high, t.pvalue))
    assert res.width_ratio == pytest.approx(1.0)


def test_a_good_judge_narrows_the_interval_and_a_useless_one_costs_little() -> None:
    g = np.random.default_rng(7)
    h_all = g.normal(0.0, 1.0, 2080)
    good = ppi_mean_test(h_all[:80], h_all[:80] + 0.6, h_all[80:] + 0.6)  # exact up to a bias
    assert good.width_ratio < 0.35 and good.lam > 0.6 and good.rectifier == pytest.approx(-0.6)
    noise = g.normal(0.0, 1.0, 2080)  # a judge that is only noise
    bad = ppi_mean_test(h_all[:80], noise[:80], noise[80:])
    assert bad.lam < 0.3 and bad.width_ratio < 1.05


def test_one_sided_and_degenerate_cases() -> None:
    h, f, fu = _data(4)
    two = ppi_mean_test(h, f, fu)
    up = ppi_mean_test(h, f, fu, alternative="greater")
    assert up.ci_high == math.inf and up.pvalue == pytest.approx(two.pvalue / 2 if two.statistic > 0 else
                                                                  1 - two.pvalue / 2)
    # no unlabelled unit: the human-only estimate
    all_labelled = ppi_mean_test(h, f, [])
    assert all_labelled.lam == 0.0 and all_labelled.statistic == pytest.approx(h.mean())
    # a judge without spread: lambda 0
    assert tuned_lambda(h, np.ones_like(h), np.ones(10)) == 0.0
    const = ppi_mean_test([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0])
    assert isinstance(const, PPIResult) and const.se == 0.0 and const.pvalue == 0.0 and const.ci_low == 1.0


def test_validation_messages() -> None:
    with pytest.raises(ValueError, match="`human` needs at least 2 values"):
        ppi_mean_test([1.0], [1.0], [1.0])
    with pytest.raises(ValueError, match="`judge` must score the same units as `human`: 2 scores for 3 units"):
        ppi_mean_test([1.0, 2.0, 3.0], [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match=r"`lam` must be a number in \[0, 1\] or None"):
        ppi_mean_test([1.0, 2.0], [1.0, 2.0], [1.0], lam=1.5)
    with pytest.raises(ValueError, match="`lam` must be 0 when no unit is unlabelled"):
        ppi_mean_test([1.0, 2.0], [1.0, 2.0], [], lam=1.0)
    with pytest.raises(ValueError, match="`judge_unlabelled` must be finite"):
        ppi_mean_test([1.0, 2.0], [1.0, 2.0], [np.nan])
    with pytest.raises(ValueError, match="`alternative` must be one of"):
        ppi_mean_test([1.0, 2.0], [1.0, 2.0], [1.0], alternative="up")
    with pytest.raises(ValueError, match="`confidence_level` must lie in"):
        ppi_mean_test([1.0, 2.0], [1.0, 2.0], [1.0], confidence_level=1.0)


def test_seeded_coverage_with_a_judge_biased_by_background() -> None:
    """A small version of benchmarks/calib_ppi.py: 1,000 sets, judge +0.6 on one side, n = 80 of 400 pairs."""
    g = np.random.default_rng(2024)
    hits = judge_only_rejects = 0
    for _ in range(1000):
        h = g.normal(0.0, 1.0, 400)  # no effect on the human scale
        f = h + 0.6 + g.normal(0.0, 0.7, 400)  # Δ_judge = Δ_human + 0.6: the judge adds an effect
        idx = g.permutation(400)
        lab, rest = idx[:80], idx[80:]
        res = ppi_mean_test(h[lab], f[lab], f[rest])
        hits += res.ci_low <= 0.0 <= res.ci_high
        judge_only_rejects += sps.ttest_1samp(f, 0.0).pvalue <= 0.05
    assert 0.93 <= hits / 1000 <= 0.97  # binomial spread around 0.95 at n = 1000: ±0.014
    assert judge_only_rejects / 1000 > 0.99  # the judge alone "finds" the effect it made
