"""westfall_young: brute-force enumeration, a numpy implementation of the same randomisation,
the Bonferroni/Holm dominance, the stream's thread invariance, and every validation message."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ipcausal
from ipcausal.stats import joint as J
from ipcausal.stats.joint import westfall_young
from ipcausal.stats.multitest import adjust_pvalues
from ipcausal.stats.permutation import permutation_test

TOL = 1e-9


def _oriented(z: np.ndarray, fam, alternative: str) -> np.ndarray:
    s = np.array([z[..., b] - z[..., a] for a, b in fam]).T  # (..., m) sums of y_b − y_a
    return np.abs(s) if alternative == "two-sided" else (s if alternative == "greater" else -s)


def _brute(y: np.ndarray, fam, alternative: str):
    """Raw and step-down adjusted p by listing every (k!)^n relabeling, in plain Python."""
    n, k = y.shape
    perms = list(itertools.permutations(range(k)))
    t = _oriented(y.sum(0), fam, alternative)
    order = np.argsort(-t, kind="stable")
    raw = np.zeros(len(fam))
    sd = np.zeros(len(fam))
    total = 0
    for combo in itertools.product(perms, repeat=n):
        z = np.array([y[p, list(c)] for p, c in enumerate(combo)]).sum(0)
        ts = _oriented(z, fam, alternative)
        total += 1
        raw += ts >= t - TOL
        u = -np.inf
        for i in range(len(fam) - 1, -1, -1):
            u = max(u, ts[order[i]])
            sd[i] += u >= t[order[i]] - TOL
    adj = np.empty(len(fam))
    adj[order] = np.maximum.accumulate(sd / total)
    return raw / total, adj


def _brute_closed(y: np.ndarray, fam, alternative: str):
    """Closed testing by listing, per intersection, every within-block relabeling (plain Python)."""
    n, k = y.shape
    t = _oriented(y.sum(0), fam, alternative)
    m = len(fam)
    p_sub = {}
    for mask in range(1, 1 << m):
        members = [i for i in range(m) if mask >> i & 1]
        comp = list(range(k))  # connected components of the subset's pairs (repeated relaxation)
        for _ in range(k):
            for i in members:
                a, b = fam[i]
                comp[a] = comp[b] = min(comp[a], comp[b])
        perms = [p for p in itertools.permutations(range(k)) if all(comp[p[c]] == comp[c] for c in range(k))]
        obs = max(t[i] for i in members)
        hits = total = 0
        for combo in itertools.product(perms, repeat=n):
            z = np.array([y[p, list(c)] for p, c in enumerate(combo)]).sum(0)
            hits += max(_oriented(z, fam, alternative)[i] for i in members) >= obs - TOL
            total += 1
        p_sub[mask] = hits / total
    raw = [p_sub[1 << i] for i in range(m)]
    adj = [max(p for q, p in p_sub.items() if q >> i & 1) for i in range(m)]
    return raw, adj, p_sub[(1 << m) - 1]


def _numpy_wy(y: np.ndarray, n_resamples: int, seed: int, alternative: str = "two-sided"):
    """The same randomisation, vectorised numpy (numpy's generator, not the kernels' stream)."""
    n, k = y.shape
    fam = list(itertools.combinations(range(k), 2))
    perms = np.array(list(itertools.permutations(range(k))))
    idx = np.random.default_rng(seed).integers(0, len(perms), size=(n_resamples, n))
    z = y[np.arange(n)[None, :, None], perms[idx]].sum(1)  # (L, k) relabelled column sums
    s = np.stack([z[:, b] - z[:, a] for a, b in fam], axis=1)
    pool = np.abs(s) if alternative == "two-sided" else np.concatenate([s, -s], axis=1)
    t = _oriented(y.sum(0), fam, alternative)
    s0 = np.array([y[:, b].sum() - y[:, a].sum() for a, b in fam])
    pool0 = np.abs(s0) if alternative == "two-sided" else np.concatenate([s0, -s0])
    v = pool[:, :len(fam)] if alternative != "less" else -pool[:, :len(fam)]
    raw = np.array([((pool >= x - TOL).sum() + (pool0 >= x - TOL).sum()) / (pool.shape[1] * (n_resamples + 1))
                    for x in t])
    order = np.argsort(-t, kind="stable")
    succ = np.maximum.accumulate(v[:, order[::-1]], axis=1)[:, ::-1]
    cnt = (succ >= t[order] - TOL).sum(0)
    adj = np.empty(len(fam))
    adj[order] = np.maximum.accumulate((1 + cnt) / (n_resamples + 1))
    return raw, adj


def _data(seed: int, n: int, k: int = 3, shift: float = 0.0, integer: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if integer:
        y = rng.integers(1, 7, size=(n, k)).astype(float)
    else:
        y = rng.normal(size=(n, k)) + rng.normal(size=(n, 1))
    y[:, -1] += shift
    return y


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("fam", [None, [(0, 2), (1, 0)], [(2, 1)]])
def test_exact_equals_brute_force_enumeration(alternative, fam) -> None:
    y = _data(3, 5, shift=0.7)
    res = westfall_young(y, pairs=fam, alternative=alternative, method="exact")
    raw, adj = _brute(y, fam or list(itertools.combinations(range(3), 2)), alternative)
    assert res.method == "exact-enumeration" and res.n_resamples is None
    np.testing.assert_allclose(res.raw_pvalues, raw, rtol=1e-12)
    np.testing.assert_allclose(res.adjusted_pvalues, adj, rtol=1e-12)


def test_exact_brute_force_four_backgrounds_and_ties() -> None:
    y = _data(5, 3, k=4, integer=True)
    res = westfall_young(y, method="exact")
    raw, adj = _brute(y, list(itertools.combinations(range(4), 2)), "two-sided")
    np.testing.assert_allclose(res.raw_pvalues, raw, rtol=1e-12)
    np.testing.assert_allclose(res.adjusted_pvalues, adj, rtol=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_monte_carlo_agrees_with_numpy_and_with_exact(alternative) -> None:
    y = _data(11, 7, shift=0.6)
    L = 40_000
    mc = westfall_young(y, alternative=alternative, n_resamples=L, rng=5)
    ref_raw, ref_adj = _numpy_wy(y, L, 99, alternative)
    ex = westfall_young(y, alternative=alternative, method="exact")
    assert mc.method == "monte-carlo" and mc.n_resamples == L
    for got, ref, exact in ((mc.raw_pvalues, ref_raw, ex.raw_pvalues), (mc.adjusted_pvalues, ref_adj, ex.adjusted_pvalues)):
        se = np.sqrt(np.asarray(exact) * (1 - np.asarray(exact)) / L) + 1e-4
        assert np.all(np.abs(np.asarray(got) - exact) < 4 * se)
        assert np.all(np.abs(np.asarray(got) - ref) < 4 * np.sqrt(2) * se)


@pytest.mark.parametrize("alternative", ["two-sided", "less"])
@pytest.mark.parametrize("fam", [None, [(0, 2), (1, 0)]])
def test_closed_testing_equals_brute_force(alternative, fam) -> None:
    y = _data(13, 4, shift=0.9)
    fam_ = fam or list(itertools.combinations(range(3), 2))
    res = westfall_young(y, pairs=fam, alternative=alternative, method="exact", procedure="closed")
    raw, adj, omni = _brute_closed(y, fam_, alternative)
    assert res.procedure == "closed" and res.method == "exact-enumeration"
    np.testing.assert_allclose(res.raw_pvalues, raw, rtol=1e-12)
    np.testing.assert_allclose(res.adjusted_pvalues, adj, rtol=1e-12)
    assert res.pvalue == pytest.approx(omni, rel=1e-12)
    # its raw p's are the pairs' own sign-flip tests
    for (a, b), p in zip(fam_, res.raw_pvalues):
        d = y[:, b] - y[:, a]
        assert p == pytest.approx(permutation_test(d, method="exact", alternative=alternative).pvalue, rel=1e-12)


def test_closed_testing_four_backgrounds_and_monte_carlo() -> None:
    y = _data(21, 3, k=4, integer=True)
    fam = [(0, 1), (2, 3), (1, 2)]
    res = westfall_young(y, pairs=fam, method="exact", procedure="closed")
    raw, adj, omni = _brute_closed(y, fam, "two-sided")
    np.testing.assert_allclose(res.adjusted_pvalues, adj, rtol=1e-12)
    y = _data(22, 8, shift=0.8)
    ex = westfall_young(y, method="exact", procedure="closed")
    mc = westfall_young(y, method="monte-carlo", n_resamples=40_000, rng=2, procedure="closed")
    se = np.sqrt(np.array(ex.adjusted_pvalues) * (1 - np.array(ex.adjusted_pvalues)) / 40_000) + 1e-4
    assert np.all(np.abs(np.array(mc.adjusted_pvalues) - ex.adjusted_pvalues) < 4 * se)
    assert mc == westfall_young(y, method="monte-carlo", n_resamples=40_000, rng=2, procedure="closed")
    assert np.all(np.array(mc.adjusted_pvalues) >= np.array(mc.raw_pvalues))
    with pytest.raises(ValueError, match="`procedure`='closed' tests all 2\\^m − 1 intersections"):
        westfall_young(_data(0, 4, k=6), procedure="closed", n_resamples=9)


def test_two_backgrounds_is_the_sign_flip_test() -> None:
    y = _data(2, 12, k=2)
    res = westfall_young(y, method="exact")
    ref = permutation_test(y[:, 1] - y[:, 0], method="exact")
    assert res.raw_pvalues[0] == pytest.approx(ref.pvalue, rel=1e-12)
    assert res.adjusted_pvalues[0] == pytest.approx(ref.pvalue, rel=1e-12)
    assert res.pair_statistics[0] == pytest.approx(ref.statistic)


def _check_dominance(res, exact: bool) -> None:
    raw = np.array(res.raw_pvalues)
    adj = np.array(res.adjusted_pvalues)
    m = raw.size
    assert np.all(adj <= np.minimum(1.0, m * raw) + 1e-15)  # never less powerful than Bonferroni
    assert np.all(adj >= raw - 1e-15)
    order = np.argsort(raw, kind="stable")
    assert np.all(np.diff(adj[np.argsort(-np.abs(res.pair_statistics), kind="stable")]) >= -1e-15)
    assert res.pvalue == pytest.approx(adj.min())
    if exact:  # with exact marginals it also never loses to Holm
        holm = adjust_pvalues(raw, method="holm")
        assert np.all(adj <= holm + 1e-12), (adj, holm, order)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(30, 80), k=st.integers(3, 4),
       shift=st.floats(0, 0.8), integer=st.booleans())
def test_monte_carlo_never_loses_to_bonferroni(seed, n, k, shift, integer) -> None:
    y = _data(seed, n, k=k, shift=shift, integer=integer)
    _check_dominance(westfall_young(y, n_resamples=999, rng=seed), exact=False)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 6), shift=st.floats(0, 2), integer=st.booleans())
def test_exact_never_loses_to_bonferroni_or_holm(seed, n, shift, integer) -> None:
    y = _data(seed, n, shift=shift, integer=integer)
    _check_dominance(westfall_young(y, method="exact"), exact=True)


def test_threads_and_seeds() -> None:
    y = _data(4, 300, shift=0.1)
    one = westfall_young(y, rng=7, n_resamples=5_000, _threads=1)
    two = westfall_young(y, rng=7, n_resamples=5_000, _threads=2)
    assert one == two
    assert westfall_young(y, rng=np.random.default_rng(7), n_resamples=5_000) == one
    assert westfall_young(y, rng=8, n_resamples=5_000) != one
    c1 = westfall_young(y, rng=7, n_resamples=5_000, _threads=1, procedure="closed")
    assert c1 == westfall_young(y, rng=7, n_resamples=5_000, _threads=2, procedure="closed")


def test_constant_rows_change_nothing_and_are_counted() -> None:
    y = _data(6, 5, integer=True)
    base = westfall_young(y, method="exact")
    more = westfall_young(np.vstack([y, np.full((3, 3), 2.0)]), method="exact")
    assert more.n_constant == 3 and more.n == 8
    assert more.raw_pvalues == base.raw_pvalues and more.adjusted_pvalues == base.adjusted_pvalues
    flat = westfall_young(np.ones((4, 3)))
    assert flat.pvalue == 1.0 and flat.adjusted_pvalues == (1.0, 1.0, 1.0)


def test_exact_is_invariant_to_affine_rescaling() -> None:
    y = _data(8, 6)
    a = westfall_young(y, method="exact")
    b = westfall_young(3.0 * y + 11.0, method="exact")
    np.testing.assert_allclose(a.adjusted_pvalues, b.adjusted_pvalues, rtol=1e-12)
    np.testing.assert_allclose(a.raw_pvalues, b.raw_pvalues, rtol=1e-12)


def test_result_fields_and_json() -> None:
    y = _data(1, 40, shift=1.0)
    res = westfall_young(y, n_resamples=999, rng=1)
    assert res.pairs == ((0, 1), (0, 2), (1, 2)) and res.k == 3 and res.n == 40
    np.testing.assert_allclose(res.pair_statistics, [(y[:, b] - y[:, a]).mean() for a, b in res.pairs])
    assert res.statistic == pytest.approx(max(abs(s) for s in res.pair_statistics))
    assert "no background matters" in res.null_hypothesis and res.pvalue_se > 0
    assert json.loads(json.dumps(res.to_dict()))["pairs"] == [[0, 1], [0, 2], [1, 2]]
    assert ipcausal.stats.westfall_young is westfall_young


def test_auto_picks_exact_when_small_and_exact_refuses_when_large() -> None:
    assert westfall_young(_data(1, 5)).method == "exact-enumeration"
    assert westfall_young(_data(1, 40), n_resamples=99, rng=0).method == "monte-carlo"
    with pytest.raises(ValueError, match="`method`='exact' is not feasible"):
        westfall_young(_data(1, 40), method="exact")


@pytest.mark.parametrize(("kwargs", "exc", "pattern"), [
    (dict(y="abc"), TypeError, "`y` must be a 2-D array"),
    (dict(y=[1.0, 2.0, 3.0]), ValueError, "`y` must be 2-D"),
    (dict(y=[[1.0], [2.0]]), ValueError, "`y` needs at least 2 backgrounds"),
    (dict(y=np.zeros((0, 3))), ValueError, "`y` needs at least one prompt"),
    (dict(y=[["a", "b"], ["c", "d"]]), TypeError, "`y` must hold numbers"),
    (dict(y=[[1, 2, 3], [4, np.nan, 6], [1, 1, 2], [np.inf, 0, 0]]), ValueError,
     r"`y` lacks a finite score .* 2 prompt row\(s\); rows \(by index\): \[1, 3\]"),
    (dict(pairs=[(0, 0)]), ValueError, "`pairs` entry .* compares a background with itself"),
    (dict(pairs=[(0, 1), (1, 0)]), ValueError, "`pairs` lists the pair"),
    (dict(pairs=[(0, 3)]), ValueError, "`pairs` index 3 is out of range"),
    (dict(pairs=[(0, 1.5)]), TypeError, "`pairs` must hold integer column indices"),
    (dict(pairs=[(0, 1, 2)]), ValueError, "`pairs` entries must be"),
    (dict(pairs=[]), ValueError, "`pairs` must not be empty"),
    (dict(pairs="01"), TypeError, "`pairs` must be a sequence"),
    (dict(alternative="bigger"), ValueError, "`alternative` must be one of"),
    (dict(method="fast"), ValueError, "`method` must be one of"),
    (dict(procedure="holm"), ValueError, "`procedure` must be one of"),
    (dict(n_resamples=0), ValueError, "`n_resamples` must be >= 1"),
    (dict(n_resamples=10.0), TypeError, "`n_resamples` must be an integer"),
    (dict(rng="seed", method="monte-carlo"), TypeError, "`rng` must be None"),
    (dict(rng=-1, method="exact", y=_data(0, 3)), TypeError, "`rng` must be None"),
])
def test_validation_messages(kwargs, exc, pattern) -> None:
    args = dict(y=_data(0, 10))
    args.update(kwargs)
    y = args.pop("y")
    with pytest.raises(exc, match=pattern):
        westfall_young(y, **args)


def test_too_many_backgrounds_for_the_tables() -> None:
    with pytest.raises(ValueError, match="`y` has 9 backgrounds: 362880 relabelings"):
        J._plan(9, 3)
    with pytest.raises(ValueError, match="`y` has 8 backgrounds: .* MiB of tables"):
        J._plan(8, 300)


def _essays() -> Path | None:
    """The released essay scores (``../shared/data``, from a checkout or a worktree), or None."""
    import os

    repo = Path(__file__).resolve().parents[2]
    bases = [Path(os.environ["IPCAUSAL_SHARED_DATA"])] if os.environ.get("IPCAUSAL_SHARED_DATA") else []
    bases += [repo.parent / "shared" / "data", repo.parent.parent / "shared" / "data"]
    for base in bases:
        d = base / "jiarui-liu-IP" / "case_2" / "aes_scores"
        if d.is_dir():
            return d
    return None


@pytest.mark.skipif(_essays() is None, reason="the released essay scores (../shared/data) are absent")
def test_released_essay_scores() -> None:
    cols = []
    for style in ("sae", "aae", "esl"):
        rows = [line.split(",") for line in (_essays() / f"gpt-4-1106-preview_{style}_results.txt").read_text().split()]
        vals = {int(float(i)): float(v) for i, v in rows}
        cols.append([vals[i] for i in sorted(vals)])
    y = np.array(cols).T
    assert y.shape == (518, 3)
    res = westfall_young(y, n_resamples=20_000, rng=0)
    _check_dominance(res, exact=False)
    assert res.pvalue < 1e-3 and res.adjusted_pvalues[0] < 1e-3 and res.adjusted_pvalues[2] < 1e-3
    closed = westfall_young(y, n_resamples=20_000, rng=0, procedure="closed")
    for (a, b), p in zip(closed.pairs, closed.raw_pvalues):  # its raw p: the pair's own sign-flip test
        exact = permutation_test(y[:, b] - y[:, a], method="exact").pvalue
        assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / 20_000) + 2e-4


def test_draws_stay_uniform_when_rejections_are_frequent() -> None:
    # k = 8: 40,320 relabelings per prompt, so 38 % of the 16-bit draws are rejected and redrawn
    y = np.random.default_rng(4).normal(size=(2, 8))
    y[1] = 0.0  # one informative prompt: the exact route lists its 40,320 relabelings
    ex = westfall_young(y, method="exact")
    mc = westfall_young(y, method="monte-carlo", n_resamples=20_000, rng=3)
    p_ex = np.array(ex.adjusted_pvalues)
    se = np.sqrt(p_ex * (1 - p_ex) / 20_000) + 1e-4
    assert np.all(np.abs(np.array(mc.adjusted_pvalues) - p_ex) < 4.5 * se)


def test_exact_is_invariant_to_the_order_of_prompts_and_backgrounds() -> None:
    y = _data(31, 6, shift=0.5)
    base = westfall_young(y, method="exact")
    rows = westfall_young(y[::-1], method="exact")
    np.testing.assert_allclose(rows.adjusted_pvalues, base.adjusted_pvalues, rtol=1e-12)
    # relabel the columns 0 ↔ 2: pair (0, 1) becomes (2, 1), and so on
    swapped = westfall_young(y[:, [2, 1, 0]], pairs=[(2, 1), (2, 0), (1, 0)], method="exact")
    np.testing.assert_allclose(swapped.adjusted_pvalues, base.adjusted_pvalues, rtol=1e-12)
    np.testing.assert_allclose(swapped.pair_statistics, base.pair_statistics, rtol=1e-12)
