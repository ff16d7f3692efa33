"""compare_models: a brute-force listing of the within-pair model relabelings (whole clusters
too), equality with westfall_young on the same matrix (models in place of backgrounds), the
two-model case equal to permutation_test on D, the intervals, and every validation message."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from ipcausal.stats.joint import westfall_young
from ipcausal.stats.models import ModelComparisonResult, compare_models
from ipcausal.stats.permutation import permutation_test

TOL = 1e-9


def _stats(y: np.ndarray, fam, alternative: str) -> np.ndarray:
    """Oriented statistics Σ (Δ^a − Δ^b) per model pair of the (n, m) table y."""
    s = np.array([y[:, a].sum() - y[:, b].sum() for a, b in fam])
    return np.abs(s) if alternative == "two-sided" else (s if alternative == "greater" else -s)


def _brute(delta: np.ndarray, clusters=None, alternative: str = "two-sided"):
    """(raw, adjusted) p by listing every relabeling of the models, one permutation per cluster
    applied to every pair of that cluster (plain numpy on the pairs, no cluster sums)."""
    n, m = delta.shape
    units = np.arange(n) if clusters is None else np.unique(clusters, return_inverse=True)[1]
    n_units = int(units.max()) + 1
    fam = list(itertools.combinations(range(m), 2))
    obs = _stats(delta, fam, alternative)
    tol = TOL * np.ptp(delta, axis=1).sum()
    order = np.argsort(-obs, kind="stable")
    perms = list(itertools.permutations(range(m)))
    sd = np.zeros(len(fam))
    pooled = np.zeros(len(fam))
    total = 0
    for combo in itertools.product(perms, repeat=n_units):
        y = np.array([delta[p, list(combo[units[p]])] for p in range(n)])
        ts = _stats(y, fam, alternative)
        for i in range(len(fam)):
            if max(ts[order[j]] for j in range(i, len(fam))) >= obs[order[i]] - tol:
                sd[i] += 1
        s = np.array([y[:, a].sum() - y[:, b].sum() for a, b in fam])
        pool = np.abs(s) if alternative == "two-sided" else np.concatenate([s, -s])
        pooled += np.array([(pool >= obs[j] - tol).sum() for j in range(len(fam))]) / pool.size
        total += 1
    adj_sorted = np.minimum(np.maximum.accumulate(sd / total), 1.0)
    adj = np.empty(len(fam))
    adj[order] = adj_sorted
    raw = pooled / total
    return raw, np.maximum(adj, raw)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_matches_brute_force_listing(alternative):
    rng = np.random.default_rng(3)
    delta = rng.normal(size=(4, 3)) + np.array([0.0, 0.4, 1.0])
    res = compare_models(delta, method="exact", alternative=alternative)
    raw, adj = _brute(delta, alternative=alternative)
    assert res.method == "exact-enumeration"
    np.testing.assert_allclose(res.adjusted_pvalues, adj, rtol=1e-12)
    np.testing.assert_allclose(res.raw_pvalues, raw, rtol=1e-12)
    np.testing.assert_allclose(res.differences, [np.mean(delta[:, a] - delta[:, b]) for a, b in res_pairs(3)])


def res_pairs(m):
    return list(itertools.combinations(range(m), 2))


@pytest.mark.parametrize("clusters", [[0, 0, 1, 1, 2, 2], ["q1", "q2", "q2", "q3", "q3", "q3"]])
def test_clusters_are_relabelled_whole(clusters):
    rng = np.random.default_rng(5)
    delta = np.rint(3 * rng.normal(size=(6, 3)))
    res = compare_models(delta, clusters=clusters, method="exact")
    raw, adj = _brute(delta, clusters=np.asarray(clusters))
    np.testing.assert_allclose(res.adjusted_pvalues, adj, rtol=1e-12)
    np.testing.assert_allclose(res.raw_pvalues, raw, rtol=1e-12)
    assert res.unit == "clusters" and res.n_clusters == 3 and res.n == 6
    # relabelling pairs one by one would be a different (wrong) randomisation here
    _, adj_pairs = _brute(delta)
    assert not np.allclose(adj_pairs, adj)


def test_is_westfall_young_with_models_as_columns():
    rng = np.random.default_rng(11)
    delta = rng.normal(size=(40, 4)) + np.array([0.0, 0.0, 0.3, 0.8])
    res = compare_models(delta, models=list("ABCD"), rng=7, n_resamples=4_999)
    fam = res_pairs(4)
    gen = np.random.default_rng(7)
    for a, b in fam:  # the pair tests draw first, then the joint test
        permutation_test(delta[:, a] - delta[:, b], n_resamples=4_999, rng=gen)
    wy = westfall_young(delta, pairs=[(b, a) for a, b in fam], n_resamples=4_999, rng=gen)
    assert res.adjusted_pvalues == wy.adjusted_pvalues and res.raw_pvalues == wy.raw_pvalues
    assert res.pvalue == wy.pvalue == min(res.adjusted_pvalues)
    np.testing.assert_allclose(res.differences, wy.pair_statistics)  # (b, a): mean(y_a − y_b)
    assert res.pairs == tuple((x, y) for x, y in itertools.combinations("ABCD", 2))
    # never less powerful than Bonferroni on the same randomisation
    assert all(q <= min(1.0, 6 * p) + 1e-12 for p, q in zip(res.raw_pvalues, res.adjusted_pvalues))


@pytest.mark.parametrize("method", ["exact", "monte-carlo"])
def test_two_models_is_the_paired_test_of_d(method):
    rng = np.random.default_rng(2)
    delta = rng.integers(-3, 4, size=(80, 2)).astype(float)
    delta[:, 0] += rng.integers(0, 2, size=80)
    res = compare_models(delta, models=["A", "B"], method=method, rng=4, n_resamples=9_999)
    ref = permutation_test(delta[:, 0] - delta[:, 1], method=method, rng=np.random.default_rng(4), n_resamples=9_999)
    assert res.pvalue == ref.pvalue == res.adjusted_pvalues[0] == res.raw_pvalues[0] == res.pair_pvalues[0]
    assert (res.ci_low[0], res.ci_high[0]) == (ref.ci_low, ref.ci_high)
    assert res.method == ref.method and res.procedure == "paired sign-flip"
    assert res.differences[0] == pytest.approx(ref.statistic)


def test_two_models_with_equal_clusters_divide_the_cluster_interval():
    rng = np.random.default_rng(8)
    delta = rng.integers(-2, 3, size=(60, 2)).astype(float)
    clusters = np.repeat(np.arange(30), 2)
    res = compare_models(delta, clusters=clusters, method="exact")
    d = delta[:, 0] - delta[:, 1]
    sums = d.reshape(30, 2).sum(1)
    ref = permutation_test(sums, method="exact")
    assert res.pvalue == ref.pvalue
    assert res.ci_low[0] == pytest.approx(ref.ci_low / 2) and res.ci_high[0] == pytest.approx(ref.ci_high / 2)
    assert res.differences[0] == pytest.approx(d.mean())


def test_unequal_clusters_interval_inverts_the_cluster_test():
    rng = np.random.default_rng(9)
    sizes = rng.integers(1, 4, size=25)
    clusters = np.repeat(np.arange(25), sizes)
    n = clusters.size
    delta = np.column_stack([rng.normal(0.5, 1, n), rng.normal(0, 1, n)])
    res = compare_models(delta, clusters=clusters, n_resamples=2_000, rng=1)
    lo, hi = res.ci_low[0], res.ci_high[0]
    v = np.bincount(clusters, weights=delta[:, 0] - delta[:, 1])
    w = np.bincount(clusters).astype(float)

    def p(x):
        return permutation_test(v - w * x, n_resamples=2_000, rng=20241201).pvalue

    centre = v.sum() / w.sum()
    assert lo < centre < hi and p(centre) > 0.05
    step = 1e-3 * (hi - lo)
    assert p(lo + step) > 0.05 >= p(lo - 10 * step)
    assert p(hi - step) > 0.05 >= p(hi + 10 * step)
    assert "cluster-sum" in res.ci_method


def test_no_difference_under_h0_and_result_to_dict():
    rng = np.random.default_rng(1)
    base = rng.normal(size=(30, 1))
    delta = base + 0.3 * rng.normal(size=(30, 3))
    res = compare_models(delta, models=["x", "y", "z"], rng=0, n_resamples=1_999)
    assert isinstance(res, ModelComparisonResult)
    d = json.loads(json.dumps(res.to_dict()))
    assert d["models"] == ["x", "y", "z"] and len(d["adjusted_pvalues"]) == 3
    rows = res.rows()
    assert [(r["model_a"], r["model_b"]) for r in rows] == [("x", "y"), ("x", "z"), ("y", "z")]
    assert all(r["ci_low"] <= r["difference"] <= r["ci_high"] for r in rows)
    holm = np.minimum(1, np.maximum.accumulate(np.sort(res.pair_pvalues) * np.array([3, 2, 1])))
    assert sorted(res.pair_pvalues_holm) == pytest.approx(holm)
    assert "no model differs" in res.null_hypothesis


def test_monte_carlo_close_to_exact():
    rng = np.random.default_rng(4)
    delta = rng.normal(size=(7, 3)) + np.array([0.0, 0.0, 0.9])
    exact = compare_models(delta, method="exact")
    mc = compare_models(delta, method="monte-carlo", n_resamples=40_000, rng=2)
    se = np.sqrt(np.array(exact.adjusted_pvalues) * (1 - np.array(exact.adjusted_pvalues)) / 40_000)
    assert np.all(np.abs(np.array(mc.adjusted_pvalues) - exact.adjusted_pvalues) <= 5 * se + 2e-4)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(delta=[[1.0, 2.0, 3.0]]), ValueError, "at least 2 pairs"),
    (dict(delta=[[1.0], [2.0]]), ValueError, "at least 2 models"),
    (dict(delta=[1.0, 2.0]), ValueError, "must be 2-D"),
    (dict(delta=[[1.0, np.nan], [2.0, 1.0]]), ValueError, "every model answered"),
    (dict(delta=[["a", "b"], ["c", "d"]]), TypeError, "must hold numbers"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], models=["A"]), ValueError, "`models` must name each"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], models=["A", "A"]), ValueError, "names a model twice"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], models="AB"), TypeError, "`models` must be a sequence"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], clusters=[1]), ValueError, "one label per row"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], clusters=[1, 1]), ValueError, "one cluster"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], clusters="ab"), TypeError, "`clusters` must be a sequence"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], alternative="up"), ValueError, "`alternative` must be one of"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], method="fast"), ValueError, "`method` must be one of"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], procedure="x"), ValueError, "`procedure` must be one of"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], n_resamples=0), ValueError, "`n_resamples` must be >= 1"),
    (dict(delta=[[1.0, 2.0], [2.0, 1.0]], confidence_level=1.5), ValueError, "`confidence_level` must lie"),
])
def test_validation_messages(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        compare_models(**kwargs)


def test_numpy_route_for_many_models_agrees_with_the_kernel(monkeypatch):
    import ipcausal.stats.models as M

    rng = np.random.default_rng(6)
    delta = rng.normal(size=(6, 3)) + np.array([0.0, 0.5, 1.2])
    exact = compare_models(delta, method="exact")
    refs = {alt: compare_models(delta, method="exact", alternative=alt) for alt in ("two-sided", "greater")}
    monkeypatch.setattr(M, "_fits_kernel", lambda rows: False)
    for alternative, ref in refs.items():
        got = compare_models(delta, n_resamples=20_000, rng=3, alternative=alternative)
        assert got.method == "monte-carlo"
        p = np.array(ref.adjusted_pvalues)
        assert np.all(np.abs(np.array(got.adjusted_pvalues) - p) <= 5 * np.sqrt(p * (1 - p) / 20_000) + 5e-4)
        r = np.array(ref.raw_pvalues)
        assert np.all(np.abs(np.array(got.raw_pvalues) - r) <= 5 * np.sqrt(r * (1 - r) / 20_000) + 5e-4)
    assert exact.differences == got.differences
    with pytest.raises(ValueError, match="cannot be enumerated"):
        compare_models(delta, method="exact")


def test_nine_models_run_on_the_numpy_route():
    rng = np.random.default_rng(7)
    delta = rng.normal(size=(30, 9))
    delta[:, 8] += 1.5
    res = compare_models(delta, n_resamples=2_000, rng=1)
    assert res.method == "monte-carlo" and len(res.pairs) == 36
    worst = {p for p, q in zip(res.pairs, res.adjusted_pvalues) if q <= 0.05}
    assert worst and all("model 8" in p for p in worst)
