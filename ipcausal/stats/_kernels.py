"""Numba kernels for the paired sign-flip tests (the only module that uses numba).

All kernels take validated, contiguous arrays and plain integer seeds; ``docs/performance.md``
explains the design.  Summary:

**Random stream.**  xoshiro256** (every bit of a 64-bit word becomes one sign, so the low bits
must be strong: not xoshiro256+).  Resamples come in chunks of ``CHUNK``; chunk ``c`` is seeded
by splitmix64 of ``seed ^ (c * 0x94D049BB133111EB)``, so a chunk's counts depend only on
``(seed, c)`` and the totals are identical on 1 or N threads.  Within a chunk, resample ``r``
draws ``n_words = ceil(m / 64)`` words; bit ``j`` of word ``i`` is the sign of element
``64 i + j`` (1 = +, 0 = −).  Both Monte Carlo kernels consume this same stream, so on the same
(sorted) magnitudes they see the same sign vectors.

**Continuous data** (:func:`mc_counts_table`): byte tables — 8 elements per group, a 256-entry
float64 table of the group's signed partial sums, one random byte = 8 signed adds in one
lookup; four accumulators hide the float-add latency.  (Measured alternatives — int32 tables,
float32 tables, 16-bit tables, byte views of the words — were slower or no faster: integer
reductions get auto-vectorized into slow gathers, and 16-bit tables overflow the L2 cache.)

**Lattice data** (:func:`mc_counts_popcount`): magnitudes are integers ``k`` sorted ascending, so
each distinct value occupies a contiguous bit range; the weight of the positive signs is
``W = Σ_v v · popcount(bits in range v)``: one popcount per (word, value) segment, exact
integer comparisons.

**Exact null on a lattice** (:func:`lattice_null`): dynamic programming with two buffers
(vectorizable), in counts rescaled by powers of two so no subnormals slow it down.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, types, uint64
from numba.extending import intrinsic

CHUNK = 2048  # resamples per counter-based chunk (fixed: it defines the random stream)

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
def _seed_chunk(seed, chunk):
    st = uint64(seed) ^ (uint64(chunk) * _MIX2)
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


def random_words(seed: int, chunk: int, count: int) -> np.ndarray:
    """The first ``count`` words of chunk ``chunk`` (reference for tests and docs)."""
    return _random_words(np.int64(seed), np.int64(chunk), np.int64(count))


@njit(cache=True)
def _random_words(seed, chunk, count):
    s0, s1, s2, s3 = _seed_chunk(seed, chunk)
    buf = np.empty(count, dtype=np.uint64)
    _fill(buf, count, s0, s1, s2, s3)
    return buf


# ---------------------------------------------------------------------------------------------
# tables
@njit(cache=True)
def byte_tables(a):
    """Signed partial sums, float64: ``tab[g, b] = Σ_j ±a[8g + j]`` (+ where bit j of b is 1)."""
    n = a.shape[0]
    groups = (n + 7) // 8
    tab = np.zeros((groups, 256), dtype=np.float64)
    for g in range(groups):
        for b in range(256):
            acc = 0.0
            for k in range(8):
                idx = 8 * g + k
                if idx < n:
                    if (b >> k) & 1:
                        acc += a[idx]
                    else:
                        acc -= a[idx]
            tab[g, b] = acc
    return tab


@njit(cache=True)
def word_tables(a):
    """Flat float64 byte tables padded to whole 64-bit words (8 groups per word).

    ``tab[(g << 8) | b]`` is as in :func:`byte_tables`; padding groups are all zero.
    Returns ``(tab, n_words)``.
    """
    n = a.shape[0]
    n_words = (n + 63) // 64
    groups = 8 * n_words
    x = np.zeros(groups * 8, dtype=np.float64)
    for i in range(n):
        x[i] = a[i]
    tab = np.empty(groups * 256, dtype=np.float64)
    for g in range(groups):
        for b in range(256):
            acc = 0.0
            for k in range(8):
                if (b >> k) & 1:
                    acc += x[8 * g + k]
                else:
                    acc -= x[8 * g + k]
            tab[(g << 8) | b] = acc
    return tab, n_words


# ---------------------------------------------------------------------------------------------
# Monte Carlo, continuous data
@njit(cache=True)
def _table_chunk(tab, n_words, xa, xg, xl, seed, chunk, count):
    buf = np.empty(n_words, dtype=np.uint64)
    s0, s1, s2, s3 = _seed_chunk(seed, chunk)
    ge_abs = 0
    ge = 0
    le = 0
    for _ in range(count):
        s0, s1, s2, s3 = _fill(buf, n_words, s0, s1, s2, s3)
        # four accumulators break the 4-cycle float-add latency chain; unsigned indices
        # skip numba's negative-index wraparound
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for j in range(n_words):
            w = buf[j]
            base = uint64(j) << uint64(11)
            a0 += tab[base + (w & uint64(255))]
            a1 += tab[base + uint64(256) + ((w >> uint64(8)) & uint64(255))]
            a2 += tab[base + uint64(512) + ((w >> uint64(16)) & uint64(255))]
            a3 += tab[base + uint64(768) + ((w >> uint64(24)) & uint64(255))]
            a0 += tab[base + uint64(1024) + ((w >> uint64(32)) & uint64(255))]
            a1 += tab[base + uint64(1280) + ((w >> uint64(40)) & uint64(255))]
            a2 += tab[base + uint64(1536) + ((w >> uint64(48)) & uint64(255))]
            a3 += tab[base + uint64(1792) + (w >> uint64(56))]
        t = (a0 + a1) + (a2 + a3)
        if abs(t) >= xa:
            ge_abs += 1
        if t >= xg:
            ge += 1
        if t <= xl:
            le += 1
    return ge_abs, ge, le


@njit(cache=True)
def mc_counts_table(tab, n_words, xa, xg, xl, n_resamples, seed):
    """Counts of |T*| >= xa, T* >= xg, T* <= xl over ``n_resamples`` resamples (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    out = np.zeros(3, dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _table_chunk(tab, n_words, xa, xg, xl, seed, c, count)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out


@njit(cache=True, parallel=True)
def mc_counts_table_parallel(tab, n_words, xa, xg, xl, n_resamples, seed):
    """As :func:`mc_counts_table`, chunks spread over threads (identical result)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _table_chunk(tab, n_words, xa, xg, xl, seed, c, count)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0)


# ---------------------------------------------------------------------------------------------
# Monte Carlo, lattice data
def popcount_segments(k_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(word index, bit mask, value) per segment of equal values in ascending integer ``k``."""
    n = k_sorted.size
    n_words = (n + 63) // 64
    starts = np.flatnonzero(np.r_[True, k_sorted[1:] != k_sorted[:-1]])
    ends = np.r_[starts[1:], n]
    seg_w, seg_m, seg_v = [], [], []
    for s, e, v in zip(starts.tolist(), ends.tolist(), k_sorted[starts].tolist()):
        for wi in range(s // 64, (e - 1) // 64 + 1):
            lo = max(s, 64 * wi) - 64 * wi
            hi = min(e, 64 * wi + 64) - 64 * wi  # bits lo..hi-1
            mask = ((1 << hi) - 1) ^ ((1 << lo) - 1)
            seg_w.append(wi)
            seg_m.append(mask)
            seg_v.append(int(v))
    return (np.array(seg_w, dtype=np.int64), np.array(seg_m, dtype=np.uint64),
            np.array(seg_v, dtype=np.int64), n_words)


@njit(cache=True)
def _pop_chunk(seg_w, seg_m, seg_v, n_words, total, t_int, seed, chunk, count):
    buf = np.empty(n_words, dtype=np.uint64)
    s0, s1, s2, s3 = _seed_chunk(seed, chunk)
    n_seg = seg_w.shape[0]
    t_abs = abs(t_int)
    ge_abs = 0
    ge = 0
    le = 0
    for _ in range(count):
        s0, s1, s2, s3 = _fill(buf, n_words, s0, s1, s2, s3)
        w = np.int64(0)
        for i in range(n_seg):
            w += seg_v[i] * np.int64(_popcount(buf[seg_w[i]] & seg_m[i]))
        t = 2 * w - total
        if abs(t) >= t_abs:
            ge_abs += 1
        if t >= t_int:
            ge += 1
        if t <= t_int:
            le += 1
    return ge_abs, ge, le


@njit(cache=True)
def mc_counts_popcount(seg_w, seg_m, seg_v, n_words, total, t_int, n_resamples, seed):
    """Counts of |T*| >= |t|, T* >= t, T* <= t for integer lattice data (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    out = np.zeros(3, dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _pop_chunk(seg_w, seg_m, seg_v, n_words, total, t_int, seed, c, count)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out


@njit(cache=True, parallel=True)
def mc_counts_popcount_parallel(seg_w, seg_m, seg_v, n_words, total, t_int, n_resamples, seed):
    """As :func:`mc_counts_popcount`, chunks spread over threads (identical result)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _pop_chunk(seg_w, seg_m, seg_v, n_words, total, t_int, seed, c, count)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0)


# ---------------------------------------------------------------------------------------------
# exact
@njit(cache=True)
def exact_enumeration_counts(tab, n, t_obs, eps):
    """Counts over all 2**n sign vectors (n <= 30): |T*| >= |t|, T* >= t, T* <= t."""
    groups = tab.shape[0]
    total = 1 << n
    t_abs = abs(t_obs)
    out = np.zeros(3, dtype=np.int64)
    for mask in range(total):
        acc = 0.0
        m = mask
        for g in range(groups):
            acc += tab[g, m & 255]
            m >>= 8
        if abs(acc) >= t_abs - eps:
            out[0] += 1
        if acc >= t_obs - eps:
            out[1] += 1
        if acc <= t_obs + eps:
            out[2] += 1
    return out


@njit(cache=True)
def lattice_null(k):
    """Null distribution of W = sum of the k's whose sign is +, each sign fair and independent.

    ``k`` holds positive integers; returns f with ``f[w] = P(W = w)`` for w = 0..sum(k).
    Entries below about 1e-300 (far tails past double range) come out as 0.
    """
    ks = np.sort(k)  # small steps first keeps the running support short
    total = 0
    for i in range(ks.shape[0]):
        total += ks[i]
    f = np.zeros(total + 1, dtype=np.float64)
    g = np.zeros(total + 1, dtype=np.float64)
    f[0] = 1.0
    cur = 0
    log2scale = 0  # f holds counts * 2**log2scale
    for i in range(ks.shape[0]):
        ki = ks[i]
        for w in range(ki):
            g[w] = f[w]
        for w in range(ki, cur + 1):
            g[w] = f[w] + f[w - ki]
        for w in range(max(cur + 1, ki), cur + ki + 1):
            g[w] = f[w - ki]
        cur += ki
        f, g = g, f
        log2scale -= 1
        if (i & 31) == 31:  # renormalize: keep the peak near 1, flush dust to 0
            peak = 0.0
            for w in range(cur + 1):
                peak = max(peak, f[w])
            e = np.int64(np.floor(np.log2(peak)))
            fac = 2.0 ** (-e)
            for w in range(cur + 1):
                v = f[w] * fac
                f[w] = v if v > 1e-300 else 0.0
            log2scale += e
    fac = 2.0 ** log2scale
    for w in range(total + 1):
        f[w] = f[w] * fac if f[w] > 0.0 else 0.0
    return f


@njit(cache=True)
def _binom_half_pmf(c):
    """P(B = j), B ~ Binomial(c, 1/2), j = 0..c (lgamma at the mode, then exact ratios)."""
    out = np.zeros(c + 1, dtype=np.float64)
    mode = c // 2
    out[mode] = math.exp(math.lgamma(c + 1.0) - math.lgamma(mode + 1.0) - math.lgamma(c - mode + 1.0)
                         - c * math.log(2.0))
    for j in range(mode, c):
        out[j + 1] = out[j] * (c - j) / (j + 1.0)
        if out[j + 1] < 1e-300:
            out[j + 1] = 0.0
            break
    for j in range(c - mode, c + 1):  # symmetry: P(B = j) = P(B = c - j)
        out[c - j] = out[j]
    return out


@njit(cache=True)
def _class_convolution(vals, cnts):
    """Distribution of Σ_c v_c · B_c, B_c ~ Binomial(n_c, 1/2) independent (stride convolutions)."""
    total = 0
    for i in range(vals.shape[0]):
        total += vals[i] * cnts[i]
    f = np.zeros(total + 1, dtype=np.float64)
    g = np.zeros(total + 1, dtype=np.float64)
    f[0] = 1.0
    cur = 0
    for i in range(vals.shape[0]):
        v = vals[i]
        b = _binom_half_pmf(cnts[i])
        for w in range(cur + v * cnts[i] + 1):
            g[w] = 0.0
        for j in range(cnts[i] + 1):
            bj = b[j]
            if bj == 0.0:
                continue
            off = v * j
            for w in range(cur + 1):
                g[off + w] += f[w] * bj
        cur += v * cnts[i]
        for w in range(cur + 1):
            x = g[w]
            f[w] = x if x > 1e-300 else 0.0
    return f


@njit(cache=True)
def lattice_tail(k, w0):
    """P(W >= w0), W = Σ of the k's whose sign is +, signs fair and independent (exact).

    Equal values are grouped (a Binomial(count, 1/2) at stride value), the groups are split in
    two halves of balanced support, each half's distribution is built by stride convolutions,
    and the tail is ``Σ_x f_A(x) · P(W_B >= w0 - x)``.  Terms below 1e-300 are dropped.
    """
    ks = np.sort(k)
    n = ks.shape[0]
    vals = np.empty(n, dtype=np.int64)
    cnts = np.empty(n, dtype=np.int64)
    nc = 0
    for i in range(n):
        if nc > 0 and vals[nc - 1] == ks[i]:
            cnts[nc - 1] += 1
        else:
            vals[nc] = ks[i]
            cnts[nc] = 1
            nc += 1
    order = np.argsort(-(vals[:nc] * cnts[:nc]))
    side = np.zeros(nc, dtype=np.int64)
    load_a = 0
    load_b = 0
    for idx in order:  # greedy balance of the two halves' supports
        if load_a <= load_b:
            load_a += vals[idx] * cnts[idx]
        else:
            side[idx] = 1
            load_b += vals[idx] * cnts[idx]
    na = 0
    for i in range(nc):
        na += side[i] == 0
    va = np.empty(na, dtype=np.int64)
    ca = np.empty(na, dtype=np.int64)
    vb = np.empty(nc - na, dtype=np.int64)
    cb = np.empty(nc - na, dtype=np.int64)
    ia = 0
    ib = 0
    for i in range(nc):
        if side[i] == 0:
            va[ia] = vals[i]
            ca[ia] = cnts[i]
            ia += 1
        else:
            vb[ib] = vals[i]
            cb[ib] = cnts[i]
            ib += 1
    fa = _class_convolution(va, ca)
    fb = _class_convolution(vb, cb)
    # survival of W_B: sb[y] = P(W_B >= y), y = 0..len(fb)
    nb = fb.shape[0]
    sb = np.zeros(nb + 1, dtype=np.float64)
    for y in range(nb - 1, -1, -1):
        sb[y] = sb[y + 1] + fb[y]
    p = 0.0
    for x in range(fa.shape[0]):
        fx = fa[x]
        if fx == 0.0:
            continue
        y = w0 - x
        if y <= 0:
            p += fx
        elif y < nb:
            p += fx * sb[y]
    return p
