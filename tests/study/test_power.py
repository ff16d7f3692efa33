"""ipcausal.power: exact binomial for the sign test, noncentral-t approximation, simulation, CLI."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import stats

import ipcausal
from ipcausal.cli import main
from ipcausal.study.power import PowerResult, power


def _brute_sign_power(n: int, q: float, level: float, alternative: str) -> float:
    """Power by enumerating every count and asking scipy's exact binomial test."""
    total = 0.0
    for k in range(n + 1):  # k = number of pairs below m0
        if alternative == "less":
            p = stats.binomtest(k, n, 0.5, alternative="greater").pvalue
        elif alternative == "greater":
            p = stats.binomtest(n - k, n, 0.5, alternative="greater").pvalue
        else:
            p = min(1.0, 2 * stats.binomtest(max(k, n - k), n, 0.5, alternative="greater").pvalue)
        if p <= level:
            total += stats.binom.pmf(k, n, q)
    return total


@pytest.mark.parametrize("alternative", ["less", "greater", "two-sided"])
@pytest.mark.parametrize("n, q, n_tests", [(10, 0.7, 1), (23, 0.65, 3), (40, 0.6, 1), (57, 0.45, 2), (8, 0.9, 1)])
def test_sign_power_equals_brute_force_binomial(n, q, n_tests, alternative):
    res = power(q, n=n, outcome="similarity", n_tests=n_tests, alternative=alternative)
    assert res.method == "exact binomial" and res.level == pytest.approx(0.05 / n_tests)
    assert res.power == pytest.approx(_brute_sign_power(n, q, 0.05 / n_tests, alternative), rel=1e-9, abs=1e-15)


def test_sign_power_equals_simulating_ipcausals_sign_test():
    rng = np.random.default_rng(0)
    n, q, reps = 30, 0.68, 1500
    hits = 0
    for _ in range(reps):
        below = rng.random(n) < q
        s = np.where(below, rng.uniform(0.0, 0.8, n), rng.uniform(0.81, 1.0, n))
        hits += ipcausal.sign_test(s, m0=0.8, alternative="less").pvalue <= 0.05
    exact = power(q, n=n, outcome="similarity").power
    assert abs(hits / reps - exact) <= 3 * math.sqrt(exact * (1 - exact) / reps)


def test_sign_test_size_at_the_null():
    # q = 0.5: the power is the test's exact size, at most alpha
    for n in range(2, 60):
        size = power(0.5, n=n, outcome="similarity").power
        assert size <= 0.05 + 1e-12
    assert power(0.5, n=4, outcome="similarity").power == 0.0  # 1/16 > 0.05: cannot reject


def test_smallest_n_for_the_sign_test_is_the_first_to_reach_the_target():
    res = power(0.65, power=0.8, outcome="similarity", n_tests=3)
    assert res.solved_for == "n" and res.power >= 0.8
    earlier = [power(0.65, n=m, outcome="similarity", n_tests=3).power for m in range(2, res.n)]
    assert max(earlier) < 0.8


@pytest.mark.parametrize("n, effect", [(10, 0.8), (20, 0.5), (40, 0.3), (25, -0.6)])
def test_approximation_agrees_with_simulation(n, effect):
    approx = power(effect, n=n)
    sim = power(effect, n=n, method="simulate", n_sim=800, rng=1)
    assert sim.method == "simulation" and sim.n_sim == 800
    assert sim.mc_se == pytest.approx(math.sqrt(sim.power * (1 - sim.power) / 800))
    assert abs(approx.power - sim.power) <= max(0.03, 4 * sim.mc_se), (approx.power, sim.power)


def test_simulation_is_seeded():
    a = power(0.4, n=15, method="simulate", n_sim=300, rng=7)
    b = power(0.4, n=15, method="simulate", n_sim=300, rng=7)
    assert a == b
    sim_sign = power(0.7, n=30, outcome="similarity", method="simulate", n_sim=4000, rng=2)
    exact = power(0.7, n=30, outcome="similarity")
    assert abs(sim_sign.power - exact.power) <= 4 * sim_sign.mc_se


def test_interval_approximation_properties():
    # the t approximation at effect 0 is the level; power grows with n and effect; symmetric in sign
    assert power(0.0, n=30).power == pytest.approx(0.05, abs=1e-9)
    assert power(0.3, n=30).power < power(0.3, n=60).power < power(0.6, n=60).power
    assert power(-0.4, n=30).power == pytest.approx(power(0.4, n=30).power)
    assert power(-0.4, n=30, alternative="greater").power < 0.05 < power(0.4, n=30, alternative="greater").power
    # sd scales the effect
    assert power(1.0, n=30, sd=2.0).power == pytest.approx(power(0.5, n=30).power)
    # too few pairs: a sign-flip test cannot go below 2/2^n
    assert power(5.0, n=4).power == 0.0 and power(5.0, n=6).power > 0.9


def test_bonferroni_is_alpha_over_the_number_of_tests():
    for outcome, effect in (("interval", 0.5), ("similarity", 0.7)):
        a = power(effect, n=40, n_tests=3, outcome=outcome)
        b = power(effect, n=40, alpha=0.05 / 3, outcome=outcome)
        assert a.power == pytest.approx(b.power) and a.level == pytest.approx(b.level)
        assert a.power < power(effect, n=40, outcome=outcome).power


def test_smallest_n_interval():
    res = power(0.5, power=0.8)
    assert res.n == 34 and res.power >= 0.8 and power(0.5, n=res.n - 1).power < 0.8
    assert power(0.5, power=0.8, n_tests=3).n > res.n
    sim = power(0.5, power=0.8, method="simulate", n_sim=400, rng=3)
    assert abs(sim.n - res.n) <= 6 and sim.solved_for == "n" and sim.target_power == 0.8


def test_result_is_frozen_and_printable():
    res = power(0.5, n=34)
    assert isinstance(res, PowerResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.power = 1.0  # type: ignore[misc]
    assert "n = 34 pairs" in str(res) and json.loads(json.dumps(res.to_dict()))["n"] == 34
    assert "P(similarity < 0.8)" in str(power(0.7, n=30, outcome="similarity"))


def test_the_public_name_is_the_function_even_after_the_module_is_imported():
    import ipcausal.study.power  # noqa: F401

    assert ipcausal.power(0.5, n=34) == power(0.5, n=34)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(effect=0.5, power=0.0), "`power`"),
        (dict(effect=0.5, power=1.0), "`power`"),
        (dict(effect=0.5, power=1.5), "`power`"),
        (dict(effect=0.5, n=1), "`n`"),
        (dict(effect=0.5), "exactly one of `n`"),
        (dict(effect=0.5, n=10, power=0.8), "exactly one of `n`"),
        (dict(effect=-0.1, n=10, outcome="similarity"), "`effect`"),
        (dict(effect=1.2, n=10, outcome="similarity"), "`effect`"),
        (dict(effect=float("nan"), n=10), "`effect`"),
        (dict(effect=0.5, n=10, sd=0.0), "`sd`"),
        (dict(effect=0.5, n=10, sd=-1.0), "`sd`"),
        (dict(effect=0.5, n=10, alpha=0.0), "`alpha`"),
        (dict(effect=0.5, n=10, n_tests=0), "`n_tests`"),
        (dict(effect=0.5, n=10, outcome="ordinal"), "`outcome`"),
        (dict(effect=0.5, n=10, method="bootstrap"), "`method`"),
        (dict(effect=0.7, n=10, outcome="similarity", method="approx"), "`method`"),
        (dict(effect=0.5, n=10, method="exact"), "`method`"),
        (dict(effect=0.5, n=10, method="simulate", n_sim=10), "`n_sim`"),
        (dict(effect=0.7, n=10, outcome="similarity", m0=0.0), "`m0`"),
        (dict(effect=0.5, n=10, alternative="bigger"), "`alternative`"),
        (dict(effect=0.0, power=0.8), "cannot be reached"),
        (dict(effect=0.5, power=0.8, outcome="similarity"), "cannot be reached"),
        (dict(effect=0.3, power=0.8, outcome="similarity"), "cannot be reached"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        power(**kwargs)


def test_bad_types():
    with pytest.raises(TypeError, match="`n`"):
        power(0.5, n=10.5)
    with pytest.raises(TypeError, match="`alpha`"):
        power(0.5, n=10, alpha="0.05")


# -- the command line ---------------------------------------------------------------------
def test_cli_power(capsys):
    assert main(["power", "--effect", "0.5", "--n", "34"]) == 0
    assert "power = 0.8078" in capsys.readouterr().out
    assert main(["power", "--effect", "0.65", "--power", "0.8", "--outcome", "similarity", "--tests", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == power(0.65, power=0.8, outcome="similarity", n_tests=3).n and out["method"] == "exact binomial"
    assert main(["power", "--effect", "0.5", "--n", "20", "--method", "simulate", "--sims", "200", "--seed", "1"]) == 0
    assert "Monte Carlo SE" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--effect", "0.5", "--n", "1"], "`n`"),
        (["--effect", "0.5", "--power", "1.2"], "argument --power: must lie in (0, 1), got 1.2"),
        (["--effect", "-0.2", "--n", "20", "--outcome", "similarity"], "`effect`"),
        (["--effect", "0.5", "--n", "20", "--sd", "0"], "argument --sd: must be a positive number, got 0"),
        (["--effect", "0.5", "--n", "20", "--seed", "-3"], "argument --seed: must be a non-negative integer, got -3"),
    ],
)
def test_cli_errors_are_one_line(argv, match, capsys):
    assert main(["power", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ipcausal power: error:") and len(err.strip().splitlines()) == 1
    assert match in err


def test_cli_requires_n_or_power(capsys):
    assert main(["power", "--effect", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "one of the arguments --n --power is required" in err and len(err.strip().splitlines()) == 1
