"""Interval outcomes at scale (issue 23): the grouped-binomial FFT, the one-pass Monte Carlo
interval, the streamed null summary, the chunked PB bootstrap, and the memory bound."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ipcausal import permutation_test, personalization_bias
from ipcausal.stats import _kernels as K
from ipcausal.stats import intervals as I
from ipcausal.stats import permutation as P
from ipcausal.stats.grouped import pmf, tail
from ipcausal.stats.null import MC_DRAWS, _replay, null_distribution, stream_signs


# -- the grouped-binomial FFT ----------------------------------------------------------------
@pytest.mark.parametrize("values", [(1,), (1, 2), (1, 2, 3, 4, 5), (2, 3, 7), (1, 10, 100), (5, 6)])
def test_fft_tail_equals_the_dp_within_its_certified_bound(values: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(values))
    for n in (17, 300, 2000):
        k = rng.choice(values, size=n).astype(np.int64)
        total = int(k.sum())
        for w0 in sorted({1, total // 2, total // 2 + 1, int(0.55 * total), int(0.75 * total), total - 1, total}):
            p, bound = tail(k, w0)
            exact = K.lattice_tail(k, w0)
            assert abs(p - exact) <= bound + 16 * n * 2.0**-53 * exact, (values, n, w0)  # the DP rounds too (~n ulps)
            assert bound <= 1e-10 * max(exact, 1e-300) + 1e-10  # the bound is small: relative in the tail
            if exact > 1e-250:
                assert p == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize("n", [1, 5, 9, 14])
def test_fft_tail_equals_brute_force_enumeration(n: int) -> None:
    k = np.random.default_rng(n).integers(1, 6, n).astype(np.int64)
    weights = np.array([sum(kk for kk, s in zip(k, bits) if s) for bits in itertools.product((0, 1), repeat=n)])
    for w0 in range(0, int(k.sum()) + 2):
        p, bound = tail(k, w0)
        exact = np.count_nonzero(weights >= w0) / 2.0**n
        assert abs(p - exact) <= bound + 1e-300
    f = pmf(k)
    assert np.allclose(f * 2.0**n, np.bincount(weights, minlength=k.sum() + 1), atol=1e-9)


def test_auto_takes_the_fft_route_beyond_the_dp_and_never_below_the_exact_p() -> None:
    rng = np.random.default_rng(3)
    n = 8000  # 8,000 x ~16,000 units: past the DP's auto limit (5e7 cells), below its hard one (4e8)
    d = (rng.integers(1, 7, n) - rng.integers(1, 7, n)).astype(float) + (rng.random(n) < 0.05)
    res = permutation_test(d)
    assert res.method == "exact-lattice-fft" and res.n_resamples is None
    assert res.ci_method == "exact-lattice-inversion"
    ref = permutation_test(d, method="exact")  # the DP still runs here (below 4e8 cells): the same p
    assert ref.method == "exact-lattice"
    # both carry a certified rounding bound above the exact p (the DP's is ~4e-12 relative here)
    assert res.pvalue >= ref.pvalue * (1 - 1e-11) and res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    for alt in ("greater", "less"):
        one = permutation_test(d, alternative=alt)
        assert one.method == "exact-lattice-fft"
        assert one.pvalue == pytest.approx(permutation_test(d, alternative=alt, method="exact").pvalue, rel=1e-9)
    null = null_distribution(d, res)
    assert null.label.startswith("exact null (grouped binomials, FFT)") and sum(null.weights) == pytest.approx(1.0)


def test_exact_beyond_the_dp_uses_the_fft_instead_of_refusing() -> None:
    rng = np.random.default_rng(8)
    d = (rng.integers(1, 7, 300_000) - rng.integers(1, 7, 300_000)).astype(float)
    res = permutation_test(d, method="exact")
    assert res.method == "exact-lattice-fft" and 0.0 < res.pvalue <= 1.0


# -- the Monte Carlo interval from the p-value's own pass ------------------------------------
def _old_mc(d: np.ndarray, seed: int, big_l: int = 20_000) -> tuple[int, float, float]:
    """Today's two passes: the p-value kernel's count, then the interval from mc_subsets."""
    absd = np.abs(d)
    a = absd[absd > 0] / absd.max()
    counts = P._mc_counts(a, np.sign(d[absd > 0]), big_l, seed, k=P.lattice_units(a))
    lo, hi = I._mc_law(d / absd.max(), d.size, float(absd.max()), 0.0, big_l, seed).interval(0.95)
    return int(counts[0]), lo, hi


@pytest.mark.parametrize("kind", ["continuous", "continuous-zeros", "lattice"])
def test_one_pass_interval_equals_the_mc_subsets_interval(kind: str) -> None:
    rng = np.random.default_rng(21)
    d = {"continuous": rng.normal(0.1, 1, 1650),
         "continuous-zeros": np.r_[rng.normal(0.1, 1, 500), np.zeros(70)],
         "lattice": (rng.integers(1, 7, 900) - rng.integers(1, 7, 900)).astype(float)}[kind]
    for seed in (1, 99):
        res = permutation_test(d, method="monte-carlo", n_resamples=20_000, rng=seed)
        b, lo, hi = _old_mc(d, res.seed)
        assert res.pvalue == (b + 1) / 20_001  # the same count: the p did not move
        assert res.ci_low == pytest.approx(lo, rel=1e-12, abs=1e-15)
        assert res.ci_high == pytest.approx(hi, rel=1e-12, abs=1e-15)


def test_portable_kernel_gives_the_same_p_and_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    d = np.random.default_rng(4).normal(0.05, 1, 700)
    fast = permutation_test(d, method="monte-carlo", n_resamples=5000, rng=3)
    monkeypatch.setattr(P, "_simd", lambda: False)
    slow = permutation_test(d, method="monte-carlo", n_resamples=5000, rng=3)
    assert slow.pvalue == fast.pvalue
    assert slow.ci_low == pytest.approx(fast.ci_low, rel=1e-12) and slow.ci_high == pytest.approx(fast.ci_high, rel=1e-12)


# -- the streamed null summary -----------------------------------------------------------------
def _replay_matrix(a: np.ndarray, seed: int, draws: int) -> np.ndarray:
    """The former replay (reference): decode the stream into a draws x n sign matrix, multiply."""
    a_s = np.sort(a, kind="stable")
    out = []
    for start in range(0, draws, K.CHUNK):
        bits = stream_signs(a_s.size, min(K.CHUNK, draws - start), seed, start_chunk=start // K.CHUNK)
        out.append((2.0 * bits - 1.0) @ a_s)
    return np.concatenate(out)


@pytest.mark.parametrize("m", [1, 63, 64, 65, 1000])
def test_streamed_replay_equals_the_matrix_replay(m: int) -> None:
    a = np.random.default_rng(m).random(m) + 0.01
    for seed in (0, 12345):
        fast = _replay(a, seed, MC_DRAWS)
        ref = _replay_matrix(a, seed, MC_DRAWS)
        assert fast.shape == ref.shape == (MC_DRAWS,)
        assert np.allclose(fast, ref, rtol=1e-12, atol=1e-12 * a.sum())
    d = np.random.default_rng(1).normal(0.1, 1, 300)
    res = permutation_test(d, method="monte-carlo", rng=5)
    got = null_distribution(d, res)
    a = np.abs(d) / np.abs(d).max()
    want = np.histogram(_replay_matrix(a, res.seed, MC_DRAWS) * np.abs(d).max() / d.size, bins=60)
    assert np.allclose(got.x, want[1], rtol=1e-12) and list(got.weights) == want[0].tolist()


# -- PB: the former draws (bootstrap='numpy') as the one-matrix bootstrap --------------------------------------------
def _pb_reference(v: np.ndarray, b: np.ndarray, c: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float]:
    """The former cluster bootstrap (weights matrix of every resample x cluster), written out."""
    gen = np.random.default_rng(seed)
    labels = sorted(set(b))
    ids = np.unique(c.astype(str), return_inverse=True)[1]
    n_c = ids.max() + 1
    draws = gen.integers(0, n_c, size=(n_resamples, n_c))
    weights = np.stack([np.bincount(row, minlength=n_c) for row in draws]).astype(float)
    boot = np.stack([(weights @ np.bincount(ids[b == lab], weights=v[b == lab], minlength=n_c))
                     / (weights @ np.bincount(ids[b == lab], minlength=n_c)) for lab in labels], axis=1)
    dist = np.sqrt(np.var(boot, axis=1))
    return tuple(np.quantile(dist[np.isfinite(dist)], [0.025, 0.975]))  # type: ignore[return-value]


def test_chunked_cluster_bootstrap_draws_what_the_matrix_did(monkeypatch: pytest.MonkeyPatch) -> None:
    import ipcausal.stats.summary as S

    rng = np.random.default_rng(6)
    n = 3000
    v = rng.integers(1, 7, n).astype(float)
    b = np.array(["AAE", "ESL", "SAE"])[rng.integers(0, 3, n)]
    c = np.array([f"q{i}" for i in rng.integers(0, 700, n)])
    monkeypatch.setattr(S, "_CHUNK_DRAWS", 5000)  # several chunks of rows
    res = personalization_bias(v, b, clusters=c, n_resamples=300, rng=11, bootstrap="numpy")  # the former draws
    lo, hi = _pb_reference(v, b, c, 300, 11)
    assert res.ci_low == pytest.approx(lo, rel=1e-12) and res.ci_high == pytest.approx(hi, rel=1e-12)


# -- memory: no draws x n matrix ----------------------------------------------------------------
def test_peak_memory_of_test_on_1e5_interval_pairs_stays_far_below_the_sign_matrix(tmp_path) -> None:  # type: ignore[no-untyped-def]
    n = 100_000  # three groups of ~33,000: the former replay held 4,096 x 33,000 float64 = 1.1 GB per group
    script = textwrap.dedent(f"""
        import json, resource, numpy as np, pandas as pd
        import ipcausal
        rng = np.random.default_rng(0)
        n = {n}
        bg = np.array(["SAE", "AAE", "ESL"])
        pairs = [("SAE", "AAE"), ("SAE", "ESL"), ("AAE", "ESL")]
        which = rng.integers(0, 3, n)
        df = pd.DataFrame({{"pair_id": [f"p{{i}}" for i in range(n)],
                           "background_i": [pairs[w][0] for w in which], "background_j": [pairs[w][1] for w in which],
                           "score_i": rng.integers(1, 7, n).astype(float), "score_j": rng.integers(1, 7, n).astype(float),
                           "model": "m", "x_i": "q", "x_j": "q"}})
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rep = ipcausal.test(df, design=ipcausal.Design(outcome="interval"), method="monte-carlo", n_resamples=4096)
        print(json.dumps({{"base": base, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    matrix_kib = MC_DRAWS * (n // 3) * 8 / 1024  # one group's draws x n float64 sign matrix (1.0 GiB)
    # measured: about 0.27 of it with the streamed replay (the rest of ipcausal.test: frames, PB),
    # 0.53 with the former replay, which held half the matrix (one chunk of 2,048 draws) at a time
    assert got["peak"] - got["base"] < 0.4 * matrix_kib, got


@pytest.mark.parametrize("lattice", [False, True])
def test_blocked_monte_carlo_interval_equals_the_one_pass_interval(lattice: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # permutation_test holds O(BLOCK + j) ends: with blocks of 2 chunks the same sign vectors give the
    # same counts and the same order statistics, bit for bit, as one pass over every resample
    import ipcausal.stats.fused as FU

    rng = np.random.default_rng(12)
    d = rng.integers(-4, 5, 900).astype(float) if lattice else rng.normal(0.1, 1, 900)
    whole = {level: permutation_test(d, method="monte-carlo", n_resamples=20_000, rng=8, confidence_level=level)
             for level in (0.95, 0.5)}
    monkeypatch.setattr(FU, "BLOCK", 2 * K.CHUNK)  # 20,000 resamples: five blocks, the last one short
    for level, ref in whole.items():
        blocked = permutation_test(d, method="monte-carlo", n_resamples=20_000, rng=8, confidence_level=level)
        assert blocked.pvalue == ref.pvalue
        assert (blocked.ci_low, blocked.ci_high) == (ref.ci_low, ref.ci_high)
