"""Simultaneous rank sets (``ipcausal.stats.ranks``): the critical value against a brute-force
enumeration, the rank sets and tie letters against their definitions, clusters, the seeded joint
coverage on a small setting (the full calibration is ``benchmarks/calib_ranks.py``), and messages.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ipcausal.stats.ranks import rank_sets, simultaneous_intervals, tie_letters


def _brute_critical(delta: np.ndarray, contrasts: np.ndarray, level: float) -> float:
    """The studentized max-|t| quantile over every sign vector, written out loop by loop."""
    n = delta.shape[0]
    x = delta @ contrasts                      # per pair, per contrast
    r = x - x.mean(0)
    maxima = []
    for signs in itertools.product((-1.0, 1.0), repeat=n):
        y = np.asarray(signs)[:, None] * r
        t = [abs(y[:, c].sum()) / math.sqrt(((y[:, c] - y[:, c].mean()) ** 2).sum()) for c in range(x.shape[1])]
        maxima.append(max(t))
    maxima.sort()
    return maxima[math.ceil(level * len(maxima)) - 1]


def test_critical_value_is_the_enumerated_studentized_max_t() -> None:
    rng = np.random.default_rng(3)
    delta = rng.normal(size=(9, 3)) + np.array([0.0, 1.0, -0.5])
    res = rank_sets(delta, by="signed", confidence_level=0.9)
    assert res.method == "exact-enumeration" and res.n_resamples is None
    cont = np.array([[1, 1, 0], [-1, 0, 1], [0, -1, -1]], dtype=float)  # columns: A−B, A−C, B−C
    assert res.critical_value == pytest.approx(_brute_critical(delta, cont, 0.9), rel=1e-12)
    theta = delta.mean(0)
    for i, (a, b) in enumerate([(0, 1), (0, 2), (1, 2)]):
        d = delta[:, a] - delta[:, b]
        half = res.critical_value * math.sqrt(((d - d.mean()) ** 2).sum()) / 9
        assert (res.diff_low[i], res.diff_high[i]) == pytest.approx((theta[a] - theta[b] - half,
                                                                     theta[a] - theta[b] + half))
    # many pairs: drawn sign vectors, seeded, close to the same law's quantile
    big = rng.normal(size=(300, 3))
    one, two = rank_sets(big, rng=5), rank_sets(big, rng=5)
    assert one.method == "monte-carlo" and one.n_resamples == 10_000 and one == two


def test_rank_sets_follow_the_decided_comparisons() -> None:
    rng = np.random.default_rng(0)
    far = rng.normal(scale=0.1, size=(60, 4)) + np.array([0.0, 5.0, -10.0, 0.02])
    res = rank_sets(far, models=["A", "B", "C", "D"], rng=0)
    # by size: C (|−10|) first, B second, A and D (0 and 0.02) cannot be told apart
    assert [r["rank_set"] for r in res.rows()] == ["3–4", "2", "1", "3–4"]
    assert res.tie_groups == ("c", "b", "a", "c") and res.groups == (("C",), ("B",), ("A", "D"))
    signed = rank_sets(far, models=["A", "B", "C", "D"], by="signed", rng=0)
    assert [r["rank_set"] for r in signed.rows()] == ["2–3", "1", "4", "2–3"] and signed.sum_low == ()
    assert signed.order == ("A<B", "A>C", "—", "B>C", "B>D", "C<D")
    same = np.repeat(rng.normal(size=(30, 1)), 3, axis=1)  # three models with identical Δ: nothing separates
    tied = rank_sets(same)
    assert tied.rank_low == (1, 1, 1) and tied.rank_high == (3, 3, 3) and tied.tie_groups == ("a", "a", "a")
    # every set is the definition: 1 + #{decided above}, m − #{decided below}
    for r in (res, signed):
        above = {tuple(o.split(">")) for o in r.order if ">" in o} | {tuple(o.split("<")[::-1]) for o in r.order
                                                                      if "<" in o}
        for j, name in enumerate(r.models):
            assert r.rank_low[j] == 1 + sum((k, name) in above for k in r.models)
            assert r.rank_high[j] == len(r.models) - sum((name, k) in above for k in r.models)


def test_tie_letters_are_the_maximal_cliques() -> None:
    rng = np.random.default_rng(1)
    for _ in range(30):
        m = 6
        sep = np.triu(rng.random((m, m)) < 0.4, 1)
        sep = sep | sep.T
        letters, cliques = tie_letters(sep, rng.normal(size=m))
        brute = [set(c) for k in range(1, m + 1) for c in itertools.combinations(range(m), k)
                 if not any(sep[a, b] for a, b in itertools.combinations(c, 2))]
        maximal = sorted(sorted(c) for c in brute if not any(c < d for d in brute))
        assert sorted(cliques) == maximal
        for a, b in itertools.combinations(range(m), 2):  # a shared letter exactly when not separated
            assert bool(set(letters[a]) & set(letters[b])) == (not sep[a, b])


def test_clusters_of_equal_size_are_their_sums() -> None:
    rng = np.random.default_rng(2)
    delta = np.repeat(rng.normal(size=(12, 3)), 2, axis=0) + 0.3 * rng.normal(size=(24, 3))
    labels = np.repeat(np.arange(12), 2)
    res = rank_sets(delta, clusters=labels, by="signed")
    means = delta.reshape(12, 2, 3).mean(1)  # one row per cluster: the same per-pair means
    plain = rank_sets(means, by="signed")
    assert res.unit == "clusters" and res.n_clusters == 12 and res.n == 24
    assert res.critical_value == pytest.approx(plain.critical_value, rel=1e-12)
    assert res.diff_low == pytest.approx(plain.diff_low) and res.diff_high == pytest.approx(plain.diff_high)
    v = delta.reshape(12, 2, 3).sum(1)
    est, lo, hi, *_ = simultaneous_intervals(v, np.full(12, 2.0), np.eye(3), level=0.95, n_resamples=10_000, rng=0)
    assert est == pytest.approx(delta.mean(0)) and np.all(lo < est) and np.all(est < hi)


def test_joint_coverage_seeded_small() -> None:
    """The promise at n = 8 pairs, exact sign vectors: 300 seeded datasets, every true rank in its set."""
    theta = np.array([0.0, 0.0, 1.5, -2.0])
    low = np.array([3, 3, 2, 1])  # by size: -2 first, 1.5 second, the two zeros tie for 3-4
    high = np.array([4, 4, 2, 1])
    cover = 0
    for d in range(300):
        rng = np.random.default_rng([7, d])
        delta = np.round(theta + rng.normal(size=(8, 1)) + rng.normal(size=(8, 4)))
        r = rank_sets(delta)
        cover += bool(np.all(np.array(r.rank_low) <= low) and np.all(np.array(r.rank_high) >= high))
    assert cover / 300 >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 300)


def test_too_few_units_separate_nothing() -> None:
    """Five pairs: an exact sign-flip test of one pair of models cannot reach 0.05, so neither do the sets."""
    delta = np.array([[0.0, 5.0, -9.0]] * 5) + np.arange(5.0)[:, None] * np.array([0.1, 0.2, 0.3])
    res = rank_sets(delta)
    assert res.rank_low == (1, 1, 1) and res.rank_high == (3, 3, 3) and res.critical_value == math.inf
    assert rank_sets(np.vstack([delta, delta[:1] + 0.05])).rank_low != (1, 1, 1)  # six: the test can decide


def test_rank_sets_messages() -> None:
    with pytest.raises(ValueError, match=r"`by` must be one of"):
        rank_sets(np.zeros((4, 2)), by="size")
    with pytest.raises(ValueError, match=r"`delta` needs at least 2 models"):
        rank_sets(np.zeros((4, 1)))
    with pytest.raises(ValueError, match=r"`models` must name each of the 3 columns"):
        rank_sets(np.zeros((4, 3)), models=["a", "b"])
    with pytest.raises(ValueError, match=r"`confidence_level`"):
        rank_sets(np.zeros((4, 2)), confidence_level=1.5)
    with pytest.raises(ValueError, match=r"`clusters` puts every pair in one cluster"):
        rank_sets(np.zeros((4, 2)), clusters=[1, 1, 1, 1])


def test_compare_runs_ranks_leave_the_comparisons_as_they_were() -> None:
    import ipcausal
    from ipcausal.stats.ranks import RANK_SEED
    from ipcausal.study.compare import compare_runs

    rng = np.random.default_rng(4)
    shift = {"A": 0.0, "B": 0.0, "C": 1.0, "D": -2.5}
    runs = {m: ipcausal.PairSet.from_records(
        {"pair_id": f"p{k}", "background_i": "US", "background_j": "UK", "x_i": "q", "x_j": "q'", "score_i": 0.0,
         "score_j": float(s + rng.normal())} for k in range(80)) for m, s in shift.items()}
    plain = compare_runs(runs, rng=1, n_resamples=2_000)["US vs UK"]
    ranked = compare_runs(runs, rng=1, n_resamples=2_000, ranks=True)["US vs UK"]
    order = np.argsort([f"p{k}" for k in range(80)])  # compare_runs takes the common pairs in id order
    delta = np.column_stack([runs[m].deltas for m in shift])[order]
    direct = rank_sets(delta, models=list(shift), rng=RANK_SEED)  # by size: the orientation does not matter
    assert plain.ranks is None and ranked.ranks.critical_value == pytest.approx(direct.critical_value)
    assert (ranked.ranks.rank_low, ranked.ranks.rank_high, ranked.ranks.tie_groups) == \
        (direct.rank_low, direct.rank_high, direct.tie_groups)
    assert np.abs(ranked.ranks.estimates) == pytest.approx(np.abs(direct.estimates))
    assert ranked.adjusted_pvalues == plain.adjusted_pvalues and ranked.pair_pvalues == plain.pair_pvalues
    assert ranked.ranks.rows()[3]["rank_set"] == "1"  # D: |−2.5| is the largest
    with pytest.raises(TypeError, match=r"`ranks` must be True or False"):
        compare_runs(runs, ranks="yes")
