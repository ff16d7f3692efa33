"""binomial_test and clopper_pearson against scipy.stats.binomtest, and every validation message."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats

from ipcausal.stats.binomial import binomial_test, clopper_pearson


@pytest.mark.parametrize("n", [1, 2, 7, 30, 101, 518])
@pytest.mark.parametrize("p", [0.5, 1 / 3, 0.25, 1 / 7, 0.8])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_pvalue_and_interval_match_scipy(n, p, alternative) -> None:
    for k in sorted({0, 1, n // 3, n // 2, round(p * n), n - 1, n}):
        if not 0 <= k <= n:
            continue
        ref = stats.binomtest(k, n, p, alternative=alternative)
        got = binomial_test(k, n, p, alternative=alternative, confidence_level=0.9)
        assert got.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
        ci = stats.binomtest(k, n, p).proportion_ci(0.9, method="exact")  # two-sided Clopper–Pearson
        # scipy finds the bounds by root-finding (to about 1e-8 relative); ours are beta quantiles
        assert (got.ci_low, got.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-7, abs=1e-14)
        assert got.statistic == k and got.proportion == k / n and got.p0 == p


def test_interval_at_one_success_is_the_closed_form() -> None:
    # k = 1: the lower bound solves 1 − (1 − lo)^n = α/2
    n, a = 518, 0.1
    lo, _ = clopper_pearson(1, n, 1 - a)
    assert lo == pytest.approx(-math.expm1(math.log1p(-a / 2) / n), rel=1e-13)
    assert clopper_pearson(0, n)[0] == 0.0 and clopper_pearson(n, n)[1] == 1.0


def test_result_fields_and_plain_dict() -> None:
    res = binomial_test(12, 20, 0.25, alternative="greater")
    d = json.loads(json.dumps(res.to_dict()))
    assert d["method"] == "exact-binomial" and d["ci_method"] == "clopper-pearson" and d["n"] == 20
    assert "H0" in res.null_hypothesis and "0.25" in res.null_hypothesis
    assert clopper_pearson(12, 20, 0.95) == (res.ci_low, res.ci_high)


@pytest.mark.parametrize("args,kwargs,exc,match", [
    ((1.5, 10), {}, TypeError, r"`k` must be an integer"),
    ((-1, 10), {}, ValueError, r"`k` must be >= 0"),
    ((11, 10), {}, ValueError, r"`k` must be at most `n` \(10\)"),
    ((1, 0), {}, ValueError, r"`n` must be >= 1"),
    ((1, True), {}, TypeError, r"`n` must be an integer"),
    ((1, 10, 1.0), {}, ValueError, r"`p` must be a probability strictly between 0 and 1"),
    ((1, 10, "a"), {}, ValueError, r"`p` must be a probability"),
    ((1, 10), {"alternative": "up"}, ValueError, r"`alternative` must be one of"),
    ((1, 10), {"confidence_level": 1.0}, ValueError, r"`confidence_level` must lie in \(0, 1\)"),
])
def test_bad_inputs(args, kwargs, exc, match) -> None:
    with pytest.raises(exc, match=match):
        binomial_test(*args, **kwargs)
