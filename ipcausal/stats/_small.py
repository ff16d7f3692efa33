"""numpy twins of four kernels, for tiny inputs: the same arithmetic in the same order, so the
results are bit-identical to the kernels' (tests compare them).

Why: the first call of any numba kernel in a process costs about half a second of CPU (numba
builds its typing registries, and its array math imports ``scipy.linalg``), more than everything
else ``ipcausal test`` does on a 10-pair file.  A run whose every call is tiny never pays it:

* :func:`enumeration_counts` — :func:`ipcausal.stats._kernels.exact_enumeration_counts` on
  :func:`~ipcausal.stats._kernels.byte_tables` (the exact p for n ≤ ``ENUMERATION_N``);
* :func:`class_subsets` — :func:`ipcausal.stats._kernels.class_subsets` (the exact interval's
  subsets, up to ``CLASS_SUBSETS`` count vectors);
* :func:`bonferroni` — :func:`ipcausal.stats._kernels.mt_elementwise` (families up to ``ELEMENTWISE``);
* :func:`boot_sums` — :func:`ipcausal.stats._kernels.boot_sums` (PB's bootstrap of a table of at
  most ``BOOT_ROWS`` rows): the counter-based stream (splitmix64 seeding, xoshiro256**, Lemire's
  bounded draws) written with numpy's wrapping uint64 arithmetic, every resample at once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["enumeration_counts", "class_subsets", "bonferroni", "boot_sums",
           "ENUMERATION_N", "CLASS_SUBSETS", "ELEMENTWISE", "BOOT_ROWS"]

ENUMERATION_N = 16  # 65,536 sign vectors
CLASS_SUBSETS = 1 << 14
ELEMENTWISE = 1024
BOOT_ROWS = 64

_U = np.uint64
_GOLDEN, _MIX1, _MIX2 = _U(0x9E3779B97F4A7C15), _U(0xBF58476D1CE4E5B9), _U(0x94D049BB133111EB)
_LOW32 = _U(0xFFFFFFFF)


def _byte_tables(a: np.ndarray) -> np.ndarray:
    n = a.shape[0]
    groups = (n + 7) // 8
    b = np.arange(256)
    tab = np.zeros((groups, 256))
    for g in range(groups):
        acc = np.zeros(256)
        for k in range(8):
            idx = 8 * g + k
            if idx < n:
                acc = np.where((b >> k) & 1 == 1, acc + a[idx], acc - a[idx])
        tab[g] = acc
    return tab


def enumeration_counts(a: np.ndarray, n: int, t_obs: float, eps: float) -> np.ndarray:
    """Counts over all 2**n sign vectors: |T*| >= |t| − eps, T* >= t − eps, T* <= t + eps."""
    tab = _byte_tables(a)
    masks = np.arange(1 << n)
    acc = np.zeros(masks.size)
    for g in range(tab.shape[0]):
        acc = acc + tab[g, (masks >> (8 * g)) & 255]
    return np.array([np.count_nonzero(np.abs(acc) >= abs(t_obs) - eps), np.count_nonzero(acc >= t_obs - eps),
                     np.count_nonzero(acc <= t_obs + eps)], dtype=np.int64)


def _binomials(c: int) -> np.ndarray:
    """C(c, k) for k = 0..c as the kernel forms them (product of ratios, rounded below 4.5e15)."""
    out = np.empty(c + 1)
    for k in range(c + 1):
        binom = 1.0
        for j in range(min(k, c - k)):
            binom = binom * (c - j) / (j + 1)
        out[k] = np.floor(binom + 0.5) if binom < 4.5e15 else binom
    return out


def class_subsets(vals: np.ndarray, cnts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(S, N, W)`` over every vector of counts (digit 0 fastest), summed in the kernel's order."""
    g = vals.shape[0]
    radix = np.asarray(cnts, dtype=np.int64) + 1
    total = int(np.prod(radix))
    idx = np.arange(total, dtype=np.int64)
    s = np.zeros(total)
    nn = np.zeros(total, dtype=np.int64)
    w = np.ones(total)
    place = np.concatenate([[1], np.cumprod(radix)[:-1]]).astype(np.int64)
    for lvl in range(g - 1, -1, -1):  # suffix sums: ssum[l] = ssum[l + 1] + b_l v_l
        b = (idx // place[lvl]) % radix[lvl]
        s = s + b * vals[lvl]
        nn = nn + b
        w = w * _binomials(int(cnts[lvl]))[b]
    return s, nn, w


def bonferroni(x: np.ndarray, fm: float, out: np.ndarray) -> bool:
    """``min(p · fm, 1)`` of flat ``x`` into ``out``; False if any p ∉ [0, 1] (or NaN)."""
    np.minimum(x * fm, 1.0, out=out)
    return bool(np.all((x >= 0.0) & (x <= 1.0)))


def _splitmix(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    state = state + _GOLDEN
    z = (state ^ (state >> _U(30))) * _MIX1
    z = (z ^ (z >> _U(27))) * _MIX2
    return state, z ^ (z >> _U(31))


def _rotl(x: np.ndarray, k: int) -> np.ndarray:
    return (x << _U(k)) | (x >> _U(64 - k))


def _words(seed: int, streams: np.ndarray, count: int) -> np.ndarray:
    """``(streams.size, count)``: the first ``count`` xoshiro256** words of each generator."""
    st = np.full(streams.shape, seed, dtype=np.uint64) ^ (streams.astype(np.uint64) * _MIX2)
    st, s0 = _splitmix(st)
    st, s1 = _splitmix(st)
    st, s2 = _splitmix(st)
    st, s3 = _splitmix(st)
    out = np.empty((streams.size, count), dtype=np.uint64)
    for i in range(count):
        out[:, i] = _rotl(s1 * _U(5), 7) * _U(9)
        t = s1 << _U(17)
        s2 = s2 ^ s0
        s3 = s3 ^ s1
        s1 = s1 ^ s2
        s0 = s0 ^ s3
        s2 = s2 ^ t
        s3 = _rotl(s3, 45)
    return out


def boot_sums(table: np.ndarray, n_resamples: int, seed: int, offset: int) -> np.ndarray:
    """As :func:`ipcausal.stats._kernels.boot_sums`: resample r draws ``table.shape[0]`` rows from
    generator ``offset + r`` and adds them in draw order."""
    n, cols = table.shape
    reject = (2**32 - n) % n
    streams = offset + np.arange(n_resamples, dtype=np.int64)
    spare = 8
    while True:  # enough 32-bit numbers for n accepted draws in every resample (rejections are rare)
        w = _words(seed, streams, (n + 1) // 2 + spare)
        x = np.empty((n_resamples, 2 * w.shape[1]), dtype=np.uint64)
        x[:, 0::2] = w & _LOW32
        x[:, 1::2] = w >> _U(32)
        m = x * _U(n)
        keep = (m & _LOW32) >= _U(reject)
        if int(keep.sum(axis=1).min()) >= n:
            break
        spare *= 4
    rank = np.cumsum(keep, axis=1)
    pos = np.argmax(rank[:, :, None] == np.arange(1, n + 1)[None, None, :], axis=1)  # j-th accepted number
    idx = (np.take_along_axis(m, pos, axis=1) >> _U(32)).astype(np.int64)
    acc = np.zeros((n_resamples, cols))
    for j in range(n):  # in draw order, as the kernel adds them
        acc = acc + table[idx[:, j]]
    return acc
