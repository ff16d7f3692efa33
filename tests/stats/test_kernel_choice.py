"""The measured kernel choice (issue 33): the choosing code on recorded timings (the Intel and AMD
figures of the issue included), its precedence and validation, the timings file, and the same
counts from every variant.  No wall-clock assertion: the timings here are recorded numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ipcausal import permutation_test
from ipcausal.stats import _calibrate as C
from ipcausal.stats import _threads as T
from ipcausal.stats.permutation import _mc_counts, lattice_units

W = 26 * 100_000  # n = 1,650 (26 words of 64 signs) x L = 100,000


def _one_point(family: str, **ms: float) -> dict:
    return {"families": {family: {"work": [W], "seconds": {k.replace("_", ":"): [v / 1e3] for k, v in ms.items()}}}}


def test_intel_figures_choose_avx512_on_one_thread_and_portable_popcount() -> None:
    # benchmarks/RESULTS.md, Intel Xeon @ 2.80GHz, 2026-11-30 / 12-02 (the figures issue 33 quotes)
    cont = _one_point("continuous", avx512_1=3.31, avx512_2=31.96, portable_1=17.84, portable_2=42.98)
    assert T.choose(cont, "continuous", W).name == "avx512:1"
    lat = _one_point("lattice", avx512_1=5.95, portable_1=3.12)
    got = T.choose(lat, "lattice", W)
    assert got.name == "portable:1" and got.source == "measured"
    for timings, fam in ((cont, "continuous"), (lat, "lattice")):  # auto is the fastest recorded variant
        secs = timings["families"][fam]["seconds"]
        assert secs[T.choose(timings, fam, W).name][0] == min(v[0] for v in secs.values())


def test_amd_figures_choose_two_threads_and_portable_popcount() -> None:
    # issue 33, AMD EPYC (Zen 4), load about 1: the p alone 4.52 ms on one thread, 2.37 ms on two
    cont = _one_point("continuous", avx512_1=4.52, avx512_2=2.37)
    assert T.choose(cont, "continuous", W).name == "avx512:2"
    assert T.choose(cont, "continuous", W, max_threads=1).name == "avx512:1"  # numba limited to one thread
    assert T.choose(cont, "continuous", W, parallel=False).name == "avx512:1"
    lat = _one_point("lattice", avx512_1=10.24, portable_1=6.52)
    assert T.choose(lat, "lattice", W).name == "portable:1"
    assert T.choose(lat, "lattice", W, kernels=("avx512",)).name == "avx512:1"


def test_a_second_thread_needs_its_margin_and_pays_only_past_the_crossover() -> None:
    # serial 1.6 ns a word; parallel 0.5 ms to start, then 0.8 ns a word: equal near 6.6e5 words
    work = [2e5, 3e6]
    timings = {"families": {"continuous": {"work": work, "seconds": {
        "avx512:1": [1.6e-9 * w for w in work], "avx512:2": [5e-4 + 0.8e-9 * w for w in work]}}}}
    assert T.choose(timings, "continuous", 2e5).name == "avx512:1"
    assert T.choose(timings, "continuous", 6.5e5).name == "avx512:1"  # faster by less than the margin
    assert T.choose(timings, "continuous", 1e6).name == "avx512:2"
    assert T.choose(timings, "continuous", 3e7).name == "avx512:2"  # extrapolated past the measured sizes
    assert T.choose(timings, "lattice", 1e6) is None  # no timings for that family
    broken = {"families": {"continuous": {"work": work, "seconds": {"avx512:1": [None, 1.0], "bogus:1": [1, 1]}}}}
    assert T.choose(broken, "continuous", 1e6) is None


@pytest.fixture()
def timings_file(tmp_path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    path = tmp_path / T.CACHE_NAME
    monkeypatch.setattr(T, "cache_file", lambda: path)
    monkeypatch.delenv(T.ENV, raising=False)
    T.reset()
    yield path
    T.reset()


def test_plan_reads_this_cpus_timings_and_falls_back_to_the_rule(timings_file) -> None:  # type: ignore[no-untyped-def]
    assert T.load_timings() is None and T.plan("continuous", W).source == "rule"
    entry = {"families": {f: {"work": [W], "seconds": {"portable:1": [1e-3], "avx512:1": [2e-3]}}
                          for f in T.FAMILIES}}
    timings_file.write_text(json.dumps({"format": T.CACHE_FORMAT, "entries": {"another CPU | numba 0 | 2 threads": entry}}))
    T.reset()
    assert T.load_timings() is None  # written for another CPU: ignored
    C._write(entry)
    T.reset()
    got = T.plan("lattice", W)
    assert (got.kernel, got.threads, got.source) == ("portable", 1, "measured")
    assert json.loads(timings_file.read_text())["entries"]["another CPU | numba 0 | 2 threads"] == entry  # kept
    timings_file.write_text("{not json")
    T.reset()
    assert T.plan("lattice", W).source == "rule"


def test_callers_and_ipcausal_kernel_force_a_variant(timings_file, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(T, "simd_ok", lambda: True)
    assert T.plan("continuous", W, simd=False, threads=1) == T.Plan("portable", 1, "forced")
    monkeypatch.setenv(T.ENV, "portable:2")
    assert T.plan("continuous", W) == T.Plan("portable", 2, "forced")
    assert T.plan("continuous", W, simd=True, threads=1) == T.Plan("avx512", 1, "forced")  # the caller wins
    monkeypatch.setenv(T.ENV, "AVX512")
    assert T.plan("continuous", 10).kernel == "avx512"
    monkeypatch.setenv(T.ENV, "auto")
    assert T.plan("continuous", 10).source == "rule"
    for bad, match in (("gpu", "`IPCAUSAL_KERNEL` must be 'auto', 'avx512' or 'portable'"),
                       ("portable:0", "thread count after ':' must be a positive integer"),
                       ("avx512:two", "thread count after ':' must be a positive integer")):
        monkeypatch.setenv(T.ENV, bad)
        with pytest.raises(ValueError, match=match):
            T.plan("continuous", W)
    monkeypatch.setattr(T, "simd_ok", lambda: False)
    monkeypatch.setenv(T.ENV, "avx512:1")
    with pytest.raises(ValueError, match="asks for the AVX-512 kernels, but they do not run here"):
        T.plan("continuous", W)


def test_calibration_writes_every_family_and_variant(timings_file) -> None:  # type: ignore[no-untyped-def]
    entry = C.calibrate(rounds=1, sizes=(256, 512), n=130)
    names = C.variants(T.simd_ok(), T.n_threads())
    assert set(entry["families"]) == set(T.FAMILIES) and entry["rounds"] == 1
    for fam in T.FAMILIES:
        secs = entry["families"][fam]["seconds"]
        assert set(secs) == set(names) and all(len(v) == 2 and min(v) > 0 for v in secs.values())
        assert entry["families"][fam]["work"] == [3 * 256, 3 * 512]
    assert T.load_timings() == json.loads(timings_file.read_text())["entries"][T.cache_key()]
    assert set(C.describe(entry).values()) <= set(names)


def test_every_variant_gives_the_same_counts_and_p(monkeypatch: pytest.MonkeyPatch) -> None:
    names = C.variants(T.simd_ok(), max(2, T.n_threads()))
    rng = np.random.default_rng(33)
    cont = rng.normal(0.1, 1.0, 700)
    lat = rng.integers(-4, 5, 700).astype(float)
    results = {}
    for v in names:
        monkeypatch.setenv(T.ENV, v)
        for name, d in (("continuous", cont), ("lattice", lat)):
            nz = d[d != 0]
            a = np.abs(nz) / np.abs(nz).max()
            k = lattice_units(a) if name == "lattice" else None
            res = permutation_test(d, method="monte-carlo", n_resamples=9_000, rng=4)
            results.setdefault(name, []).append((_mc_counts(a, np.sign(nz), 9_000, 17, k=k).tolist(), res.pvalue,
                                                 res.ci_low, res.ci_high))
    for name, rows in results.items():
        counts, ps = {tuple(r[0]) for r in rows}, {r[1] for r in rows}
        assert len(counts) == 1 and len(ps) == 1, (name, rows)
        lo, hi = rows[0][2], rows[0][3]  # T summed in another order by the AVX-512 and byte-table kernels
        assert all(r[2] == pytest.approx(lo, rel=1e-12) and r[3] == pytest.approx(hi, rel=1e-12) for r in rows)
