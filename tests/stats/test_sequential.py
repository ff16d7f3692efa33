"""Anytime-valid sequential tests, confidence sequences, e-Holm / e-Bonferroni (ipcausal.stats.sequential)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

import ipcausal
from ipcausal.stats import betting
from ipcausal.stats import sequential as seq
from ipcausal.stats.eholm import e_bonferroni, e_holm

ALPHA = 0.05
EB = "empirical-bernstein"  # the size checks do not need the (slower) betting CS


# ---------------------------------------------------------------- a brute-force oracle, in plain Python

def _oracle_log_e(x: list[float], method: str, alternative: str, symmetric: bool = False) -> list[float]:
    """log of the e-process after each value of x (scaled to [−1, 1]), written from the definitions."""
    big = 0.0
    grid = [0.75 * g / 20 for g in range(1, 21)]
    out = []
    up = down = 0.0  # log wealths (aGRAPA / ONS)
    mix_up = [0.0] * 20
    mix_down = [0.0] * 20
    s = s2 = 0.0
    lam_u = lam_d = 0.0
    a_u = a_d = 1.0
    c = 2 / (2 - math.log(3))
    for t, v0 in enumerate(x):
        big = max(big, abs(v0))
        v = (v0 / big if big > 0 else 0.0) if symmetric else v0
        if method == "agrapa":
            mu, q = s / (t + 1), (0.25 + s2) / (t + 1)
            up += math.log(1 + min(max(mu / q, 0), 0.5) * v)
            down += math.log(1 - min(max(-mu / q, 0), 0.5) * v)
        elif method == "ons":
            up += math.log(1 + lam_u * v)
            down += math.log(1 - lam_d * v)
            gu, gd = v / (1 + lam_u * v), -v / (1 - lam_d * v)
            a_u += gu * gu
            a_d += gd * gd
            lam_u = min(max(lam_u + c * gu / a_u, 0), 0.5)
            lam_d = min(max(lam_d + c * gd / a_d, 0), 0.5)
        else:
            mix_up = [w + math.log(1 + lam * v) for w, lam in zip(mix_up, grid)]
            mix_down = [w + math.log(1 - lam * v) for w, lam in zip(mix_down, grid)]
            up = math.log(sum(math.exp(w) for w in mix_up) / 20)
            down = math.log(sum(math.exp(w) for w in mix_down) / 20)
        s += v0
        s2 += v0 * v0
        e = {"greater": math.exp(up), "less": math.exp(down)}.get(alternative, (math.exp(up) + math.exp(down)) / 2)
        out.append(math.log(e))
    return out


def _oracle_cs(y: list[float], alpha: float) -> list[tuple[float, float]]:
    """Waudby-Smith & Ramdas' predictable plug-in empirical-Bernstein CS for the mean of y ∈ [0, 1]
    (running intersection), from the formulas of their Theorem 2."""
    out, lo, hi = [], 0.0, 1.0
    mus, sig = [0.5], [0.25]  # μ̂_0, σ̂²_0
    sum_l = sum_ly = sum_vpsi = 0.0
    for t, v in enumerate(y, start=1):
        lam = min(math.sqrt(2 * math.log(2 / alpha) / (sig[-1] * t * math.log(1 + t))), 0.5)
        psi = (-math.log(1 - lam) - lam) / 4
        sum_vpsi += 4 * (v - mus[-1]) ** 2 * psi
        sum_l += lam
        sum_ly += lam * v
        mus.append((0.5 + sum(y[:t])) / (t + 1))
        sig.append((0.25 + sum((y[i] - mus[i + 1]) ** 2 for i in range(t))) / (t + 1))
        centre, half = sum_ly / sum_l, (math.log(2 / alpha) + sum_vpsi) / sum_l
        lo, hi = max(lo, centre - half), min(hi, centre + half)
        out.append((lo, hi))
    return out


@pytest.mark.parametrize("method", seq.METHODS)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("null", seq.NULLS)
def test_e_process_matches_brute_force_oracle(method: str, alternative: str, null: str) -> None:
    rng = np.random.default_rng(7)
    d = np.concatenate([[0.0, 0.0], rng.uniform(-2, 3, size=60).clip(-2.5, 2.5)])  # bound 2.5, some drift
    state = seq.sequential_state(bound=2.5, alternative=alternative, method=method, null=null)
    got = []
    for v in d:
        state = seq.sequential_update(state, [v])
        got.append(math.log(state.e_value))
    want = _oracle_log_e(list(d / 2.5), method, alternative, symmetric=null == "symmetry")
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert state.pvalue == pytest.approx(min(1.0, math.exp(-max(0.0, *want))), rel=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "less"])
def test_mixture_rescaling_keeps_huge_wealths_exact(alternative: str) -> None:
    """Wealths beyond 1e100 are rescaled inside the kernel: the e-value is still the oracle's."""
    d = np.concatenate([np.ones(500), -np.ones(40), np.ones(100)]) * (-1 if alternative == "less" else 1)
    state = seq.sequential_update(seq.sequential_state(bound=1.0, alternative=alternative), d)
    want = _oracle_log_e(list(d), "mixture", alternative)
    assert max(state.vector[betting._k.OFF_UP], state.vector[betting._k.OFF_DOWN]) > 200  # rescaled
    assert math.log(state.e_value) == pytest.approx(want[-1], rel=1e-11)
    assert state.pvalue == pytest.approx(min(1.0, math.exp(-max(0.0, *want))), rel=1e-11)


def _oracle_betting_cs(x: list[float], alpha: float) -> list[tuple[float, float]]:
    """The betting CS on the grid m_j = −1 + (j + 1)/100, from its definition: m is excluded
    from below once mean_g Π(1 + λ_g (x − m)/(1 + m)) ≥ 2/α, from above once
    mean_g Π(1 − λ_g (x − m)/(1 − m)) ≥ 2/α (only m inside the current CS are followed)."""
    ms = [-1 + 2 * (j + 1) / 200 for j in range(199)]
    lams = [0.75 * g / 20 for g in range(1, 21)]
    up = [[0.0] * 20 for _ in ms]
    down = [[0.0] * 20 for _ in ms]
    lo, hi, out, thr = -1.0, 1.0, [], math.log(2 / alpha)
    for v in x:
        new_lo, new_hi = lo, hi
        for j, m in enumerate(ms):
            if not lo < m < hi:
                continue
            up[j] = [w + math.log(1 + lam * (v - m) / (1 + m)) for w, lam in zip(up[j], lams)]
            down[j] = [w + math.log(1 - lam * (v - m) / (1 - m)) for w, lam in zip(down[j], lams)]
            if math.log(sum(math.exp(w) for w in up[j]) / 20) >= thr:
                new_lo = max(new_lo, m)
            if math.log(sum(math.exp(w) for w in down[j]) / 20) >= thr:
                new_hi = min(new_hi, m)
        lo, hi = new_lo, new_hi
        out.append((lo, hi))
    return out


def test_betting_confidence_sequence_matches_its_definition() -> None:
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, 0.0, 0.5, 1.0], p=[0.15, 0.45, 0.1, 0.3], size=150)
    state = seq.sequential_state(bound=2.0)
    got = []
    for v in d:
        state = seq.sequential_update(state, [2 * v])  # bound 2: the CS is in Δ units
        got.append((state.ci_low / 2, state.ci_high / 2))
    want = _oracle_betting_cs(list(d), ALPHA)
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert want[-1][0] > -0.5 and want[-1][1] < 0.5  # it did narrow


def test_a_cs_without_zero_implies_a_two_sided_rejection() -> None:
    """The CS drops m when one side's wealth reaches 2/α; the test rejects when the two sides'
    average reaches 1/α (implied, not the converse: docs/sequential.md)."""
    rejected = 0
    for i in range(80):
        d = np.random.default_rng(i).choice([-1.0, 0.0, 1.0], size=300, p=[0.25, 0.45, 0.30])
        res = ipcausal.stats.sequential_test(d, bound=1)
        if not res.ci_low < 0 < res.ci_high:
            assert res.reject
        rejected += res.reject
    assert rejected > 0


def test_betting_cs_ends_at_zero_when_the_test_rejects() -> None:
    rng = np.random.default_rng(8)
    for _ in range(20):
        d = rng.choice([-1.0, 0.0, 1.0], p=[0.05, 0.8, 0.15], size=1000)
        res = ipcausal.stats.sequential_test(d, bound=1)
        eb = ipcausal.stats.sequential_test(d, bound=1, ci_method="empirical-bernstein")
        assert res.reject and res.ci_low == 0.0 and res.ci_high > 0  # 0 is excluded (an end is excluded)
        assert res.ci_high - res.ci_low < eb.ci_high - eb.ci_low and eb.ci_method != res.ci_method


def test_confidence_sequence_matches_oracle_formulas() -> None:
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, 0.0, 1.0], p=[0.2, 0.5, 0.3], size=80)
    state = seq.sequential_state(bound=1.0, ci_method="empirical-bernstein")
    got = []
    for v in d:
        state = seq.sequential_update(state, [v])
        got.append((state.ci_low, state.ci_high))
    want = [(2 * lo - 1, 2 * hi - 1) for lo, hi in _oracle_cs(list((d + 1) / 2), ALPHA)]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- the guarantee, seeded

def _null_streams(kind: str, rows: int, length: int, seed: int) -> tuple[np.ndarray, float]:
    rng = np.random.default_rng(seed)
    if kind == "binary":  # Δ = difference of two fair coins
        return rng.integers(0, 2, (rows, length)) - rng.integers(0, 2, (rows, length)).astype(float), 1.0
    if kind == "likert":  # Δ of two exchangeable 5-point ratings
        p = [0.1, 0.2, 0.4, 0.2, 0.1]
        return (rng.choice(5, (rows, length), p=p) - rng.choice(5, (rows, length), p=p)).astype(float), 4.0
    return rng.uniform(-1, 1, (rows, length)) ** 3, 1.0  # continuous, symmetric, mostly small


@pytest.mark.parametrize("kind", ["binary", "likert", "continuous"])
@pytest.mark.parametrize("null", seq.NULLS)
def test_size_under_continuous_monitoring(kind: str, null: str) -> None:
    rows = 1500
    xs, bound = _null_streams(kind, rows, 300, seed={"binary": 11, "likert": 12, "continuous": 13}[kind])
    rejected = sum(ipcausal.stats.sequential_test(row, bound=bound, null=null, ci_method=EB).reject for row in xs)
    se = math.sqrt(ALPHA * (1 - ALPHA) / rows)
    assert rejected / rows <= ALPHA + 3 * se


def test_size_check_fails_for_an_invalid_rule() -> None:
    """The size check can fail: rejecting when either one-sided wealth reaches 1/α (instead of
    their average) has size up to 2α, and the same check catches it on these streams."""
    rows = 1500
    xs, _ = _null_streams("binary", rows, 300, seed=13)
    up = np.array([ipcausal.stats.sequential_test(r, bound=1, alternative="greater", ci_method=EB).reject for r in xs])
    down = np.array([ipcausal.stats.sequential_test(r, bound=1, alternative="less", ci_method=EB).reject for r in xs])
    se = math.sqrt(ALPHA * (1 - ALPHA) / rows)
    assert (up | down).mean() > ALPHA + 3 * se
    assert np.mean([ipcausal.stats.sequential_test(r, bound=1, ci_method=EB).reject for r in xs]) <= ALPHA + 3 * se


@pytest.mark.parametrize("ci_method", seq.CI_METHODS)
def test_confidence_sequence_covers_the_true_mean_at_every_time(ci_method: str) -> None:
    rng = np.random.default_rng(5)
    rows, covered = 400, 0
    for _ in range(rows):
        d = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.6, 0.3], size=300)  # mean 0.2
        state = seq.sequential_update(seq.sequential_state(bound=1, ci_method=ci_method), d)  # intersection
        if ci_method == "betting":  # its ends are excluded grid points (0.2 is one of the grid)
            covered += state.ci_low < 0.2 < state.ci_high
        else:
            covered += state.ci_low <= 0.2 <= state.ci_high
    assert covered / rows >= 1 - ALPHA - 3 * math.sqrt(ALPHA * (1 - ALPHA) / rows)


def test_anytime_pvalue_never_increases_and_e_value_moves() -> None:
    rng = np.random.default_rng(2)
    state = seq.sequential_state(bound=1, method="agrapa")
    ps, es = [], []
    for v in rng.choice([-1.0, 0.0, 1.0], p=[0.3, 0.4, 0.3], size=500):
        state = seq.sequential_update(state, [v])
        ps.append(state.pvalue)
        es.append(state.e_value)
    assert all(b <= a for a, b in zip(ps, ps[1:]))
    assert any(b > a for a, b in zip(es, es[1:])) and any(b < a for a, b in zip(es, es[1:]))
    assert ps[-1] == pytest.approx(min(1.0, 1 / max(1.0, *es)))


# ---------------------------------------------------------------- behaviour

def test_strong_effect_stops_early_and_no_effect_runs_out() -> None:
    rng = np.random.default_rng(8)
    strong = rng.choice([-1.0, 0.0, 1.0], p=[0.05, 0.55, 0.4], size=2000)
    res = ipcausal.stats.sequential_test(strong, bound=1)
    assert res.reject and res.stopped_at is not None and res.stopped_at < 200
    assert res.n == res.stopped_at and res.n_available == 2000
    assert res.pvalue == pytest.approx(1 / res.e_value) and res.pvalue <= ALPHA
    assert res.statistic == pytest.approx(strong[: res.n].mean())
    fixed = ipcausal.permutation_test(strong[: res.n], method="exact")
    assert fixed.pvalue < ALPHA  # the fixed-n test on the same pairs agrees
    none = ipcausal.stats.sequential_test(np.zeros(500), bound=1)
    assert not none.reject and none.stopped_at is None and none.n == 500 and none.pvalue == 1.0


def test_one_sided_directions() -> None:
    d = np.tile([1.0, 0.0, 1.0, -1.0, 1.0, 0.0], 30)
    assert ipcausal.stats.sequential_test(d, bound=1, alternative="greater").reject
    assert not ipcausal.stats.sequential_test(d, bound=1, alternative="less").reject
    assert ipcausal.stats.sequential_test(-d, bound=1, alternative="less").reject


def test_sign_test_twin() -> None:
    s = [0.2, 0.5, 0.8, 0.4, 0.9] * 12
    less = ipcausal.stats.sequential_sign_test(s, m0=0.8, alternative="less")
    assert less.reject and less.stopped_at == 29 and (less.n, less.n_ties, less.n_below) == (23, 6, 18)
    assert less.statistic == pytest.approx(18 / 23) and less.ci_low <= 18 / 23 <= less.ci_high
    assert not ipcausal.stats.sequential_sign_test(s, m0=0.8, alternative="greater").reject
    # the e-process is the mean test on ±1 without the ties
    b = np.array([1.0 if v < 0.8 else -1.0 for v in s if v != 0.8])
    twin = ipcausal.stats.sequential_test(b, bound=1, alternative="greater")
    assert twin.stopped_at == less.n and twin.e_value == pytest.approx(less.e_value, rel=1e-12)
    ties = ipcausal.stats.sequential_sign_test([0.8] * 10, m0=0.8)
    assert not ties.reject and ties.n == 0 and ties.n_ties == 10 and ties.pvalue == 1.0


@pytest.mark.parametrize("method", seq.METHODS)
def test_batches_give_the_same_state_as_all_at_once(method: str) -> None:
    rng = np.random.default_rng(4)
    d = rng.choice([-1.0, 0.0, 1.0], p=[0.15, 0.5, 0.35], size=400)
    whole = seq.sequential_update(seq.sequential_state(bound=1, method=method), d)
    parts = seq.sequential_state(bound=1, method=method)
    for chunk in np.array_split(d, [1, 7, 50, 51, 200, 333]):
        parts = seq.sequential_update(parts, chunk)
    assert np.array_equal(whole.vector, parts.vector)
    assert (whole.n_seen, whole.stop_seen) == (parts.n_seen, parts.stop_seen) and whole.stop_seen is not None
    assert whole.result() == parts.result()
    # sign kind, ties included
    s = rng.choice([0.1, 0.5, 0.8, 0.9], p=[0.4, 0.2, 0.3, 0.1], size=300)
    w = seq.sequential_update(seq.sequential_sign_state(m0=0.5, method=method), s)
    p = seq.sequential_sign_state(m0=0.5, method=method)
    for chunk in np.array_split(s, 9):
        p = seq.sequential_update(p, chunk)
    assert np.array_equal(w.vector, p.vector) and (w.n_ties, w.stop_seen, w.stop_ties) == (p.n_ties, p.stop_seen, p.stop_ties)
    assert w.result() == p.result()
    # the replay that stops at the crossing reports the same verdict
    assert ipcausal.stats.sequential_sign_test(s, m0=0.5, method=method).to_dict() == \
        {**w.result().to_dict(), "n_available": 300}


@settings(max_examples=60, deadline=None)
@given(values=hst.lists(hst.sampled_from([-1.0, -0.5, 0.0, 0.25, 1.0]), min_size=1, max_size=120),
       cuts=hst.lists(hst.integers(0, 120), max_size=6), method=hst.sampled_from(seq.METHODS),
       alternative=hst.sampled_from(["two-sided", "greater", "less"]), null=hst.sampled_from(seq.NULLS))
def test_any_batching_is_all_at_once_and_p_never_increases(values, cuts, method, alternative, null) -> None:
    d = np.array(values)
    make = lambda: seq.sequential_state(bound=1.0, method=method, alternative=alternative, null=null)  # noqa: E731
    whole = seq.sequential_update(make(), d)
    parts, ps = make(), [1.0]
    for chunk in np.split(d, sorted(c for c in cuts if c < d.size)):
        parts = seq.sequential_update(parts, chunk)
        ps.append(parts.pvalue)
    assert np.array_equal(whole.vector, parts.vector) and whole == parts
    assert all(b <= a for a, b in zip(ps, ps[1:])) and 0 < whole.pvalue <= 1
    assert -1 <= whole.ci_low <= 1 and -1 <= whole.ci_high <= 1  # (empty only if the mean drifts)


def test_state_round_trips_through_json_and_does_not_change() -> None:
    st = seq.sequential_update(seq.sequential_state(bound=4, alternative="less", null="symmetry"), [-4, -3, 0, 1, -2])
    before = st.vector.copy()
    again = seq.SequentialState.from_dict(json.loads(json.dumps(st.to_dict())))
    assert np.array_equal(again.vector, st.vector) and again == st
    nxt = seq.sequential_update(st, [-1, -4])
    assert np.array_equal(st.vector, before) and nxt.n == 7
    assert np.array_equal(seq.sequential_update(again, [-1, -4]).vector, nxt.vector)
    assert not st.equivalent(0.5) and seq.sequential_update(st, np.zeros(20000)).equivalent(0.5)


def test_symmetry_null_does_not_pay_for_a_loose_bound() -> None:
    rng = np.random.default_rng(6)
    d = rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], p=[0.05, 0.15, 0.3, 0.3, 0.2], size=518)  # mean 0.45
    loose = ipcausal.stats.sequential_test(d, bound=60)
    sym = ipcausal.stats.sequential_test(d, bound=60, null="symmetry")
    tight = ipcausal.stats.sequential_test(d, bound=2)
    assert not loose.reject and sym.reject and tight.reject and sym.stopped_at < 200
    assert "sign-flip" in sym.null_hypothesis and sym.ci_low <= d[: sym.n].mean() <= sym.ci_high


def test_all_methods_are_fast_enough_to_stop_on_a_clear_effect() -> None:
    d = np.tile([1.0, 1.0, 0.0, -1.0, 1.0], 100)
    stops = {m: ipcausal.stats.sequential_test(d, bound=1, method=m).stopped_at for m in seq.METHODS}
    assert all(v is not None and v < 150 for v in stops.values()), stops


# ---------------------------------------------------------------- validation

def test_validation_messages() -> None:
    with pytest.raises(ValueError, match=r"`d`.*`bound` = 1"):
        ipcausal.stats.sequential_test([0.5, 1.5], bound=1)
    with pytest.raises(ValueError, match=r"`bound` must be > 0"):
        ipcausal.stats.sequential_test([0.5], bound=0)
    with pytest.raises(ValueError, match=r"`bound` must be a finite number"):
        ipcausal.stats.sequential_test([0.5], bound=float("inf"))
    with pytest.raises(ValueError, match=r"`alpha` must lie in \(0, 1\)"):
        ipcausal.stats.sequential_test([0.5], bound=1, alpha=1.5)
    with pytest.raises(ValueError, match=r"`alternative` must be one of"):
        ipcausal.stats.sequential_test([0.5], bound=1, alternative="bigger")
    with pytest.raises(ValueError, match=r"`null` must be one of 'mean', 'symmetry'"):
        ipcausal.stats.sequential_test([0.5], bound=1, null="median")
    with pytest.raises(ValueError, match=r"`ci_method` must be one of 'betting', 'empirical-bernstein'"):
        ipcausal.stats.sequential_test([0.5], bound=1, ci_method="hoeffding")
    with pytest.raises(ValueError, match=r"`method` must be one of 'mixture', 'agrapa', 'ons'"):
        ipcausal.stats.sequential_test([0.5], bound=1, method="kelly")
    with pytest.raises(ValueError, match=r"`d` must be finite"):
        ipcausal.stats.sequential_test([0.5, float("nan")], bound=1)
    with pytest.raises(ValueError, match=r"`d` needs at least 1 values"):
        ipcausal.stats.sequential_test([], bound=1)
    with pytest.raises(ValueError, match=r"`s` must be 1-D"):
        ipcausal.stats.sequential_sign_test([[0.1, 0.2]], m0=0.5)
    with pytest.raises(ValueError, match=r"`m0` must be a finite number"):
        ipcausal.stats.sequential_sign_test([0.1], m0=float("nan"))
    st = seq.sequential_state(bound=2)
    with pytest.raises(ValueError, match=r"`batch`: every \|Δ\| must be ≤ `bound` = 2"):
        seq.sequential_update(st, [1.0, -2.5])
    with pytest.raises(TypeError, match=r"`state` must be a SequentialState"):
        seq.sequential_update({"n": 1}, [1.0])
    with pytest.raises(TypeError, match=r"`batch` must hold numbers"):
        seq.sequential_update(st, ["a"])
    with pytest.raises(ValueError, match=r"`margin` must be > 0"):
        st.equivalent(0)
    with pytest.raises(ValueError, match=r"`vector` must be the kernel state"):
        seq.SequentialState(kind="mean", bound=1.0, m0=0.0, alpha=0.05, alternative="less", method="ons")
    with pytest.raises(ValueError, match=r"`vector` must be the kernel state"):
        seq.SequentialState.from_dict({**st.to_dict(), "vector": [0.0, 1.0]})
    with pytest.raises(ValueError, match=r"`data` must have exactly the keys"):
        seq.SequentialState.from_dict({"kind": "mean"})
    assert seq.sequential_update(st, []).n == 0  # an empty batch is allowed
    assert ipcausal.stats.sequential_test([1.0 + 1e-12, -1.0], bound=1).n == 2  # rounding slack


# ---------------------------------------------------------------- many groups

def test_e_holm_hand_example() -> None:
    # sorted: 0.2, 1, 60, 200; 1/α = 20.
    # 200: min{200, 100.1, 67.07, 65.3} = 65.3; 60: min{60, 30.1, 20.4, 65.3} = 20.4;
    # 1: min{1, 0.6, ...} = 0.6; 0.2: 0.2.
    res = e_holm([200, 60, 1, 0.2], alpha=0.05)
    assert res.reject == (True, True, False, False) and res.any_reject and res.n == 4
    np.testing.assert_allclose(res.e_adjusted, [261.2 / 4, 61.2 / 3, 0.6, 0.2])
    bon = e_bonferroni([200, 60, 1, 0.2], alpha=0.05)  # threshold m/α = 80
    assert bon.reject == (True, False, False, False) and bon.e_adjusted == (50.0, 15.0, 0.25, 0.05)
    assert not e_holm([19.9, 0.5], alpha=0.05).any_reject and e_holm([np.inf, 30], alpha=0.05).reject == (True, True)


def test_e_holm_matches_closed_testing_by_enumeration() -> None:
    rng = np.random.default_rng(9)
    for _ in range(60):
        m = int(rng.integers(1, 7))
        e = rng.exponential(10, m) * rng.integers(0, 2, m)
        brute = [min(np.mean([e[i] for i in sub]) for r in range(1, m + 1)
                     for sub in itertools.combinations(range(m), r) if k in sub) for k in range(m)]
        res = e_holm(e, alpha=0.1)
        np.testing.assert_allclose(res.e_adjusted, brute, rtol=1e-12)
        assert all(h or not b for h, b in zip(res.reject, e_bonferroni(e, alpha=0.1).reject))


def test_e_multiple_validation() -> None:
    with pytest.raises(ValueError, match=r"`e_values` must be non-negative"):
        e_holm([1.0, -0.5])
    with pytest.raises(ValueError, match=r"`e_values` must be a non-empty 1-D array"):
        e_bonferroni([])
    with pytest.raises(TypeError, match=r"`e_values` must hold numbers"):
        e_holm(["x"])
    with pytest.raises(ValueError, match=r"`alpha` must lie in \(0, 1\)"):
        e_holm([1.0], alpha=0)


def test_public_names_and_results_are_plain() -> None:
    res = ipcausal.stats.sequential_test([1, 0, 1], bound=1)
    assert isinstance(res, ipcausal.stats.SequentialTestResult)
    json.dumps(res.to_dict())
    json.dumps(ipcausal.stats.e_holm([3.0, 40.0]).to_dict())
    assert ipcausal.stats.sequential_update is seq.sequential_update and ipcausal.stats.SequentialState is seq.SequentialState
    assert "mean(Δ)" in res.null_hypothesis and "anytime-valid" in res.null_hypothesis


def test_e_value_past_the_float_range_is_inf_not_an_error():
    """A long stream of large effects drives log e past ~709.8: the state says inf, p stays 0-ish."""
    state = seq.sequential_update(seq.sequential_state(bound=1.0), np.full(5000, 0.9))
    assert state.vector[betting._k.LOG_E] > 1000
    assert state.e_value == math.inf and 0.0 <= state.pvalue < 1e-300
    assert state.reject and math.isfinite(state.result().e_value)  # the verdict is at the first crossing
