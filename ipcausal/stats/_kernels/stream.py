"""The counter-based random stream shared by every Monte Carlo kernel (see the package docstring)."""

from __future__ import annotations

import numpy as np
from numba import njit, types, uint64
from numba.extending import intrinsic

CHUNK = 2048  # resamples per counter-based chunk (fixed: it defines the random stream)
LANES = 16  # generators per chunk; resample r of a chunk reads lane r % LANES (fixed, too)

_GOLDEN = uint64(0x9E3779B97F4A7C15)
_MIX1 = uint64(0xBF58476D1CE4E5B9)
_MIX2 = uint64(0x94D049BB133111EB)


@intrinsic
def _popcount(typingctx, x):
    """Hardware popcount of a uint64 (llvm.ctpop)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(cache=True, inline="always")
def _splitmix(state):
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> uint64(30))) * _MIX1
    z = (z ^ (z >> uint64(27))) * _MIX2
    return state, z ^ (z >> uint64(31))


@njit(cache=True, inline="always")
def _seed_stream(seed, stream):
    st = uint64(seed) ^ (uint64(stream) * _MIX2)
    st, s0 = _splitmix(st)
    st, s1 = _splitmix(st)
    st, s2 = _splitmix(st)
    st, s3 = _splitmix(st)
    return s0, s1, s2, s3


@njit(cache=True, inline="always")
def _fill(buf, n_words, s0, s1, s2, s3):
    """Draw ``n_words`` xoshiro256** words into ``buf``; returns the new state."""
    for i in range(n_words):
        buf[i] = _rotl(s1 * uint64(5), 7) * uint64(9)
        t = s1 << uint64(17)
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = _rotl(s3, 45)
    return s0, s1, s2, s3


def random_words(seed: int, stream: int, count: int) -> np.ndarray:
    """The first ``count`` words of generator ``stream`` (lane i of chunk c is stream
    ``c * LANES + i``; reference for tests and docs)."""
    return _random_words(np.int64(seed), np.int64(stream), np.int64(count))


@njit(cache=True)
def _random_words(seed, stream, count):
    s0, s1, s2, s3 = _seed_stream(seed, stream)
    buf = np.empty(count, dtype=np.uint64)
    _fill(buf, count, s0, s1, s2, s3)
    return buf



@njit(cache=True, inline="always")
def _seed_lanes(seed, chunk):
    """The states of the ``LANES`` generators of ``chunk``, as a flat uint64 array of ``4 * LANES``.

    Octet-major, the layout the AVX-512 kernels load as vectors: word ``k`` of lane ``i``'s
    state sits at ``32 * (i // 8) + 8 * k + i % 8``.
    """
    st = np.empty(4 * LANES, dtype=np.uint64)
    for i in range(LANES):
        base = 32 * (i >> 3) + (i & 7)
        s0, s1, s2, s3 = _seed_stream(seed, chunk * LANES + i)
        st[base] = s0
        st[base + 8] = s1
        st[base + 16] = s2
        st[base + 24] = s3
    return st


@njit(cache=True, inline="always")
def _fill_lane(buf, n_words, st, i):
    """Next ``n_words`` words of lane ``i`` into ``buf`` (the lane's state in ``st`` is updated)."""
    base = 32 * (i >> 3) + (i & 7)
    s0, s1, s2, s3 = _fill(buf, n_words, st[base], st[base + 8], st[base + 16], st[base + 24])
    st[base] = s0
    st[base + 8] = s1
    st[base + 16] = s2
    st[base + 24] = s3


@njit(cache=True, inline="always")
def _tally(t, xa, xg, xl):
    """One resample's contribution to the counts ``(|t| >= xa, t >= xg, t <= xl)``."""
    return np.int64(abs(t) >= xa), np.int64(t >= xg), np.int64(t <= xl)
