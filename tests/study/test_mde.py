"""The minimal detectable effect beside a non-rejection (issue 30, item 3): it is what a seeded simulation of
the test itself detects with power 0.8, and every report of a non-rejection says it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ipcausal
from ipcausal.study.mde import family_level, minimal_detectable_effect


def _simulated_mde(n: int, sd: float, *, outcome: str = "interval", n_sim: int = 600) -> float:
    """The effect at which ipcausal.power's seeded simulation (the package's own test on simulated data,
    common random numbers across effects) reaches power 0.8, by bisection."""
    lo, hi = (0.0, 3.0 * sd) if outcome == "interval" else (0.5, 1.0)
    for _ in range(8):
        mid = (lo + hi) / 2
        p = ipcausal.power(mid, n=n, sd=sd, outcome=outcome, method="simulate", n_sim=n_sim, rng=0).power
        lo, hi = (lo, mid) if p >= 0.8 else (mid, hi)
    return (lo + hi) / 2


@pytest.mark.slow
@pytest.mark.parametrize("n, sd", [(12, 1.0), (30, 2.5)])
def test_the_mde_matches_a_seeded_power_simulation_within_10_percent(n: int, sd: float) -> None:
    mde = minimal_detectable_effect(n, sd=sd)
    assert abs(_simulated_mde(n, sd) - mde) / mde < 0.10


def test_the_sign_test_mde_matches_its_simulation() -> None:
    q = minimal_detectable_effect(40, outcome="similarity")
    assert abs(_simulated_mde(40, 1.0, outcome="similarity", n_sim=4000) - q) / q < 0.10


def test_the_mde_inverts_power_and_says_when_nothing_is_detectable() -> None:
    for n, sd in ((10, 1.0), (50, 0.3), (200, 4.0)):
        mde = minimal_detectable_effect(n, sd=sd, alpha=0.05 / 3)
        assert ipcausal.power(mde, n=n, sd=sd, alpha=0.05, n_tests=3).power == pytest.approx(0.8, abs=1e-9)
        assert ipcausal.power(0.99 * mde, n=n, sd=sd, alpha=0.05, n_tests=3).power < 0.8
    assert minimal_detectable_effect(4) == math.inf  # 2/2^4 > 0.05: no p can be small enough
    assert minimal_detectable_effect(4, outcome="similarity") == math.inf  # 1/2^4 > 0.05
    assert minimal_detectable_effect(30, alternative="less") == pytest.approx(
        minimal_detectable_effect(30, alternative="greater"))
    assert family_level(0.05, "none", 3) == (0.05, "alpha")
    assert family_level(0.05, "by", 2)[0] == pytest.approx(0.05 / (2 * 1.5))


def test_a_report_states_the_mde_from_the_observed_spread() -> None:
    g = np.random.default_rng(3)
    ps = ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "SAE", "background_j": "AAE", "x_i": "q", "x_j": "q'",
         "score_i": 3.0, "score_j": 3.0 + float(d)} for k, d in enumerate(g.normal(0.05, 1.0, 25).round(2)))
    report = ipcausal.test(ps, method="monte-carlo", rng=0)
    (grp,) = report.groups
    assert not grp.reject and grp.mde is not None and grp.mde.from_observed
    deltas = np.array([r["score_j"] - r["score_i"] for r in ps.records()])
    assert grp.mde.sd == pytest.approx(np.std(deltas, ddof=1))
    assert grp.mde.effect == pytest.approx(minimal_detectable_effect(25, sd=np.std(deltas, ddof=1)))
    assert grp.mde.d_z == pytest.approx(grp.mde.effect / grp.mde.sd)
    text = str(report)
    header = next(line for line in text.splitlines() if "mean Δ" in line and "d_z" in line)
    assert header.split().index("d_z") == header.split().index("Δ") + 1  # d_z beside mean Δ
    assert f"{grp.detail.effect_size:.2f}" in text
    assert (f"SAE vs AAE: not rejected; minimal detectable effect: the test would detect |mean Δ| ≥ "
            f"{grp.mde.effect:.3g} (d_z = {grp.mde.d_z:.2f}) with 80 % power (25 pairs, observed sd of Δ") in text
