"""The numba kernels against plain numpy / brute-force references."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from ipcausal.stats import _kernels as K
from ipcausal.stats.permutation import _mc_counts, lattice_units

SIMD = [False, pytest.param(True, marks=pytest.mark.skipif(
    not K.simd_available(), reason="the AVX-512 kernels need a CPU with AVX-512F"))]


def _xoshiro_reference(seed: int, chunk: int, count: int) -> list[int]:
    """xoshiro256** seeded by splitmix64, in pure Python (the documented stream)."""
    mask = (1 << 64) - 1

    def rotl(x: int, k: int) -> int:
        return ((x << k) | (x >> (64 - k))) & mask

    st = (seed ^ (chunk * 0x94D049BB133111EB)) & mask
    s = []
    for _ in range(4):
        st = (st + 0x9E3779B97F4A7C15) & mask
        z = st
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        s.append(z ^ (z >> 31))
    out = []
    for _ in range(count):
        out.append(rotl((s[1] * 5) & mask, 7) * 9 & mask)
        t = (s[1] << 17) & mask
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
    return out


@pytest.mark.parametrize("seed,chunk", [(0, 0), (123, 7), (2**62 + 5, 1000)])
def test_random_stream_is_the_documented_xoshiro(seed: int, chunk: int) -> None:
    assert K.random_words(seed, chunk, 50).tolist() == _xoshiro_reference(seed, chunk, 50)


def test_random_bits_are_balanced() -> None:
    words = K.random_words(1, 0, 20_000)
    bits = np.unpackbits(words.view(np.uint8))
    # 1,280,000 bits: mean within 5 SE of 1/2; every bit position balanced too
    assert abs(bits.mean() - 0.5) < 5 * 0.5 / np.sqrt(bits.size)
    per_pos = bits.reshape(-1, 64).mean(axis=0)
    assert np.all(np.abs(per_pos - 0.5) < 5 * 0.5 / np.sqrt(20_000))


def test_tables_hold_signed_partial_sums() -> None:
    a = np.random.default_rng(0).random(13)
    tab, n_words = K.word_tables(a)
    assert n_words == 1 and tab.size == 8 * 256
    for b in (0, 1, 37, 255):
        signs = np.where([(b >> j) & 1 for j in range(8)], 1.0, -1.0)
        assert tab[256 + b] == pytest.approx(np.dot(signs[:5], a[8:13]))
        assert tab[b] == pytest.approx(np.dot(signs, a[:8]))
    assert np.all(tab[2 * 256:] == 0.0)  # padding groups
    assert np.allclose(K.byte_tables(a).ravel(), tab[: 2 * 256])


def _stream_signs(m: int, n_resamples: int, seed: int) -> np.ndarray:
    """The documented stream decoded in numpy (ipcausal.stats.null.stream_signs; no numba kernel involved)."""
    from ipcausal.stats.null import stream_signs

    return stream_signs(m, n_resamples, seed)


def _counts_by_numpy(a: np.ndarray, t_obs: float, n_resamples: int, seed: int) -> np.ndarray:
    a_s = np.sort(a, kind="stable")
    t = (2.0 * _stream_signs(a_s.size, n_resamples, seed) - 1.0) @ a_s
    eps = 1e-9 * a.sum()
    return np.array([np.sum(np.abs(t) >= abs(t_obs) - eps), np.sum(t >= t_obs - eps), np.sum(t <= t_obs + eps)])


@pytest.mark.parametrize("simd", SIMD)
@pytest.mark.parametrize("m", [3, 64, 65, 200])
def test_table_kernels_equal_numpy_decoding_of_the_stream(m: int, simd: bool) -> None:
    rng = np.random.default_rng(m)
    x = rng.normal(0.1, 1.0, m)
    a = np.abs(x) / np.abs(x).max()
    s = np.sign(x)
    # 5,000 is not a multiple of CHUNK or LANES: the last chunk ends inside a lane block
    got = _mc_counts(a, s, 5000, 99, k=None, threads=1, simd=simd)
    assert got.tolist() == _counts_by_numpy(a, float(s @ a), 5000, 99).tolist()


@pytest.mark.skipif(not K.simd_available(), reason="the AVX-512 kernels need a CPU with AVX-512F")
@pytest.mark.parametrize("m", [1, 17, 1650])
def test_simd_kernel_equals_portable_kernel(m: int) -> None:
    rng = np.random.default_rng(100 + m)
    x = rng.standard_t(3, m)
    a = np.abs(x) / np.abs(x).max()
    for seed in (0, 7, 2**62):
        for threads in (1, 2):
            simd = _mc_counts(a, np.sign(x), 20_011, seed, k=None, threads=threads, simd=True)
            port = _mc_counts(a, np.sign(x), 20_011, seed, k=None, threads=threads, simd=False)
            assert simd.tolist() == port.tolist()
    # lattice data: the AVX-512 popcount kernel against the portable one
    xl = rng.integers(-9, 10, m).astype(float)
    xl[xl == 0] = 1.0
    al = np.abs(xl) / 9.0
    k = lattice_units(al)
    simd = _mc_counts(al, np.sign(xl), 20_011, 3, k=k, threads=1, simd=True)
    assert simd.tolist() == _mc_counts(al, np.sign(xl), 20_011, 3, k=k, threads=1, simd=False).tolist()


def test_simd_tables_hold_signed_partial_sums_and_are_aligned() -> None:
    a = np.random.default_rng(3).random(70)
    tab, n_words = K.nibble_tables(a)
    assert n_words == 2 and tab.size == 2 * 16 * 16 and tab.ctypes.data % 64 == 0
    for g, b in ((0, 0), (0, 15), (3, 6), (17, 9)):
        signs = np.where([(b >> j) & 1 for j in range(4)], 1.0, -1.0)
        part = a[4 * g: 4 * g + 4]  # group 17 holds the last two magnitudes only
        assert tab[16 * g + b] == pytest.approx(np.dot(signs[: part.size], part))
    assert np.all(tab[16 * 18:] == 0.0)  # groups past the 70 magnitudes


def test_portable_kernels_can_be_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IPCAUSAL_PORTABLE_KERNELS", "1")
    assert K.simd_available() is False


@pytest.mark.parametrize("simd", SIMD)
@pytest.mark.parametrize("m", [10, 130, 1000])
def test_popcount_kernel_equals_table_kernel_on_lattice_data(m: int, simd: bool) -> None:
    rng = np.random.default_rng(m)
    x = rng.integers(1, 5, m) * rng.choice([-1.0, 1.0], m)
    a = np.abs(x) / 4.0
    k = lattice_units(a)
    assert k is not None
    pop = _mc_counts(a, np.sign(x), 9000, 5, k=k, threads=1, simd=simd)
    tab = _mc_counts(a, np.sign(x), 9000, 5, k=None, threads=1, simd=simd)
    assert pop.tolist() == tab.tolist()
    assert pop.tolist() == _counts_by_numpy(a, float(np.sign(x) @ a), 9000, 5).tolist()


@pytest.mark.parametrize("simd", SIMD)
@pytest.mark.parametrize("lattice", [True, False])
def test_serial_and_parallel_kernels_agree(lattice: bool, simd: bool) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(-4, 5, 700).astype(float) if lattice else rng.normal(size=700)
    x = x[x != 0]
    a = np.abs(x) / np.abs(x).max()
    k = lattice_units(a) if lattice else None
    one = _mc_counts(a, np.sign(x), 30_000, 11, k=k, threads=1, simd=simd)
    two = _mc_counts(a, np.sign(x), 30_000, 11, k=k, threads=2, simd=simd)
    assert one.tolist() == two.tolist()


def test_lattice_tail_equals_brute_force_and_dp() -> None:
    rng = np.random.default_rng(4)
    for _ in range(30):
        n = int(rng.integers(1, 13))
        k = rng.integers(1, 7, n)
        w = np.array([np.dot(b, k) for b in itertools.product([0, 1], repeat=n)])
        f = K.lattice_null(k)
        assert np.allclose(f, np.bincount(w, minlength=k.sum() + 1) / 2.0**n, rtol=1e-12, atol=0)
        for w0 in range(-1, int(k.sum()) + 2):
            assert K.lattice_tail(k, w0) == pytest.approx(np.mean(w >= w0), rel=1e-12, abs=0)


def test_lattice_tail_matches_dp_at_scale() -> None:
    rng = np.random.default_rng(8)
    k = rng.integers(1, 40, 400)
    f = K.lattice_null(k)
    total = int(k.sum())
    for w0 in np.linspace(total // 2, total, 25).astype(int):
        ref = f[w0:].sum()
        if ref > 1e-280:
            assert K.lattice_tail(k, int(w0)) == pytest.approx(ref, rel=1e-11)


def test_simd_compile_failure_falls_back_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    from ipcausal.stats import permutation as P

    def broken(*args: object) -> None:
        raise RuntimeError("LLVM cannot select vpermi2pd")

    P._simd.cache_clear()
    monkeypatch.setattr(K, "simd_available", lambda: True)
    monkeypatch.setattr(K, "mc_counts_simd", broken)
    try:
        with pytest.warns(RuntimeWarning, match="portable"):
            assert P._simd() is False
        x = np.random.default_rng(5).normal(size=300)
        a = np.abs(x) / np.abs(x).max()
        got = _mc_counts(a, np.sign(x), 3000, 1)  # the portable kernel, same stream
        assert got.tolist() == _counts_by_numpy(a, float(np.sign(x) @ a), 3000, 1).tolist()
    finally:
        P._simd.cache_clear()  # the next caller checks the real kernels again


# -- the numpy twins of tiny kernels (stats/_small.py): bit-identical, and no numba on a 10-pair run
def test_numpy_twins_give_the_kernels_results_bit_for_bit() -> None:
    from ipcausal.stats import _small as S

    rng = np.random.default_rng(0)
    for n in range(1, S.ENUMERATION_N + 1):
        a = np.abs(rng.standard_t(2, n))
        a /= a.max()
        t = float(rng.choice([-1, 1], n) @ a)
        eps = 1e-9 * a.sum()
        assert np.array_equal(S._byte_tables(a), K.byte_tables(a))
        assert np.array_equal(S.enumeration_counts(a, n, t, eps), K.exact_enumeration_counts(K.byte_tables(a), n, t, eps))
    for _ in range(30):
        g = int(rng.integers(1, 6))
        vals, cnts = np.sort(rng.normal(size=g)), rng.integers(1, 6, g).astype(np.int64)
        for x, y in zip(S.class_subsets(vals, cnts), K.class_subsets(vals, cnts)):
            assert np.array_equal(x, y)
    for n in (1, 2, 3, 7, 33, S.BOOT_ROWS):
        tab = rng.normal(size=(n, 4))
        for seed, off in ((0, 0), (2**62 + 5, 1234)):
            assert np.array_equal(S.boot_sums(tab, 300, seed, off), K.boot_sums(tab, 300, seed, off)), n
    x = rng.random(S.ELEMENTWISE)
    got, want = np.empty(x.size), np.empty(x.size)
    assert S.bonferroni(x, 7.0, got) is bool(K.mt_elementwise(x, 7.0, True, want)) is True
    assert np.array_equal(got, want)
    assert S.bonferroni(np.array([0.5, 1.5]), 2.0, np.empty(2)) is False


def test_a_ten_pair_test_loads_no_numba_and_scipy_only_for_its_mde(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = [{"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q",
             "score_i": k % 3, "score_j": (k * 7) % 4} for k in range(10)]
    path = tmp_path / "ten.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code = ("import sys, io, contextlib\nfrom ipcausal import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    cli.main(['test', {str(path)!r}, '--seed', '1'])\n"
            "print(sorted(m for m in ('numba', 'scipy', 'ipcausal.stats._kernels') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "['scipy']"  # the exact routes of 10 pairs ran on the numpy twins
    # scipy.stats is loaded for one thing: the MDE of each group (its non-central t power; issue 30),
    # about 0.55 s of import; numba and the kernels never are
