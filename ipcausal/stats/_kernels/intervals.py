"""Kernels for confidence intervals by inverting the sign-flip test (:mod:`ipcausal.stats.intervals`).

A sign vector flips the subset A of the differences; what the inversion needs from it is the
pair (S_A, N_A) = (sum of the flipped values, their count).  Three sources of such pairs:

* :func:`class_subsets` — every subset, grouped by equal values (one entry per vector of
  counts b_v, with weight Π C(c_v, b_v)): the exact route for small n;
* :func:`mc_subsets` — the L resamples of the counter-based stream (:mod:`.stream`), the same
  sign vectors the Monte Carlo p-value kernels see on the same sorted magnitudes;
* :func:`lattice_spectrum` — for integer values, the characteristic function of (N_A, S_A)
  of a uniformly random subset on a grid, whose inverse FFT is their joint distribution;
  :func:`lattice_rows` keeps, per size N, that inverse as a short Fourier sum in S (the spectrum
  lives on a few columns), so that :func:`fourier_upper_mass` reads the tails P(N, S ≥ s) in
  closed form without the grid.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, uint64

from ipcausal.stats._kernels.stream import CHUNK, LANES, _fill_lane, _popcount, _seed_lanes

ZERO_STREAM = 0x6A09E667F3BCC909  # seed offset of the second stream that signs the zero differences


@njit(cache=True)
def class_subsets(vals, cnts):
    """All vectors of counts ``b`` (0 ≤ b_i ≤ cnts[i]): arrays ``S = Σ b_i vals[i]``, ``N = Σ b_i``,
    ``W = Π C(cnts[i], b_i)`` (float64, exact below 2**53).  Each S is summed in one fixed order
    (suffix sums), so equal subsets give bit-identical sums."""
    g = vals.shape[0]
    total = 1
    for i in range(g):
        total *= cnts[i] + 1
    s_out = np.empty(total, dtype=np.float64)
    n_out = np.empty(total, dtype=np.int64)
    w_out = np.empty(total, dtype=np.float64)
    b = np.zeros(g, dtype=np.int64)
    ssum = np.zeros(g + 1, dtype=np.float64)  # ssum[l] = Σ_{i ≥ l} b_i vals[i]
    nsum = np.zeros(g + 1, dtype=np.int64)
    wprod = np.ones(g + 1, dtype=np.float64)
    for idx in range(total):
        s_out[idx] = ssum[0]
        n_out[idx] = nsum[0]
        w_out[idx] = wprod[0]
        if idx == total - 1:
            break
        i = 0
        while b[i] == cnts[i]:
            b[i] = 0
            i += 1
        b[i] += 1
        for l in range(i, -1, -1):  # digits 0..i changed: refresh their suffix values
            ssum[l] = ssum[l + 1] + b[l] * vals[l]
            nsum[l] = nsum[l + 1] + b[l]
            c = cnts[l]
            k = b[l]
            binom = 1.0
            for j in range(min(k, c - k)):
                binom = binom * (c - j) / (j + 1)
            wprod[l] = wprod[l + 1] * (np.floor(binom + 0.5) if binom < 4.5e15 else binom)
    return s_out, n_out, w_out


@njit(cache=True)
def _mc_chunk(tab, n_words, sgn, m, zero_words, n_zero, seed, chunk, count, t_out, v_out, base):
    buf = np.empty(n_words, dtype=np.uint64)
    zbuf = np.empty(max(zero_words, 1), dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    zst = _seed_lanes(seed ^ ZERO_STREAM, chunk)
    for r in range(count):
        _fill_lane(buf, n_words, st, r % LANES)
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        agree = 0
        for j in range(n_words):
            w = buf[j]
            off = uint64(j) << uint64(11)
            a0 += tab[off + (w & uint64(255))]
            a1 += tab[off + uint64(256) + ((w >> uint64(8)) & uint64(255))]
            a2 += tab[off + uint64(512) + ((w >> uint64(16)) & uint64(255))]
            a3 += tab[off + uint64(768) + ((w >> uint64(24)) & uint64(255))]
            a0 += tab[off + uint64(1024) + ((w >> uint64(32)) & uint64(255))]
            a1 += tab[off + uint64(1280) + ((w >> uint64(40)) & uint64(255))]
            a2 += tab[off + uint64(1536) + ((w >> uint64(48)) & uint64(255))]
            a3 += tab[off + uint64(1792) + (w >> uint64(56))]
            bits = 64 if 64 * (j + 1) <= m else m - 64 * j
            mask = uint64(0xFFFFFFFFFFFFFFFF) if bits == 64 else (uint64(1) << uint64(bits)) - uint64(1)
            agree += np.int64(_popcount(~(w ^ sgn[j]) & mask))
        vz = 0
        if n_zero > 0:
            _fill_lane(zbuf, zero_words, zst, r % LANES)
            for j in range(zero_words):
                bits = 64 if 64 * (j + 1) <= n_zero else n_zero - 64 * j
                mask = uint64(0xFFFFFFFFFFFFFFFF) if bits == 64 else (uint64(1) << uint64(bits)) - uint64(1)
                vz += np.int64(_popcount(zbuf[j] & mask))
        t_out[base + r] = (a0 + a1) + (a2 + a3)
        v_out[base + r] = (2 * agree - m) + (2 * vz - n_zero)


@njit(cache=True)
def mc_subsets(tab, n_words, sgn, m, n_zero, n_resamples, seed, chunk0=0):
    """Per resample r: ``T[r] = Σ s_k a_k`` over the sorted non-zero magnitudes (the statistic
    the p-value kernels compute) and ``V[r] = Σ s_k sign_k`` over all n differences (zeros
    signed by a second stream, ``seed ^ ZERO_STREAM``).  ``sgn``: per word, bit j set when
    element 64 i + j is positive.  ``chunk0``: start at that chunk of the stream.  One thread."""
    t_out = np.empty(n_resamples, dtype=np.float64)
    v_out = np.empty(n_resamples, dtype=np.int32)
    zero_words = (n_zero + 63) // 64
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        _mc_chunk(tab, n_words, sgn, m, zero_words, n_zero, seed, chunk0 + c, count, t_out, v_out, c * CHUNK)
    return t_out, v_out


@njit(cache=True, parallel=True)
def mc_subsets_parallel(tab, n_words, sgn, m, n_zero, n_resamples, seed, chunk0=0):
    """As :func:`mc_subsets`, chunks spread over threads (identical result)."""
    t_out = np.empty(n_resamples, dtype=np.float64)
    v_out = np.empty(n_resamples, dtype=np.int32)
    zero_words = (n_zero + 63) // 64
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        _mc_chunk(tab, n_words, sgn, m, zero_words, n_zero, seed, chunk0 + c, count, t_out, v_out, c * CHUNK)
    return t_out, v_out


@njit(cache=True)
def mc_split(t, v, total, n):
    """In place: ``t`` → S_A = (total − T)/2 and ``v`` → N_A = (n − V)/2, the flipped set's sum and size."""
    for r in range(t.shape[0]):
        t[r] = 0.5 * (total - t[r])
        v[r] = (n - v[r]) // 2


@njit(cache=True, inline="always")
def _ends(s_a, n_a, total, n):
    """One resample's ends (max and min of the two sides' means; ±inf when A is empty or everything).
    Branch-free, so that a pass over the resamples pipelines its divisions."""
    edge = (n_a == 0) | (n_a == n)
    ma = s_a / (1.0 if edge else np.float64(n_a))
    mb = (total - s_a) / (1.0 if edge else np.float64(n - n_a))
    return (np.inf if edge else max(ma, mb)), (-np.inf if edge else min(ma, mb))


@njit(cache=True)
def mc_ends_all(s, nn, total, n):
    """Every resample's upper and lower end (:func:`_ends`)."""
    hi = np.empty(s.shape[0])
    lo = np.empty(s.shape[0])
    for r in range(s.shape[0]):
        hi[r], lo[r] = _ends(s[r], nn[r], total, n)
    return hi, lo


@njit(cache=True)
def _select(s, nn, total, n, j):
    hi, lo = mc_ends_all(s, nn, total, n)
    return -np.partition(-hi, j - 1)[j - 1], np.partition(lo, j - 1)[j - 1]


@njit(cache=True)
def _beyond(s, nn, total, n, cut_h, cut_l):
    """Per resample, bit 0: its upper end is ≥ ``cut_h``; bit 1: its lower end is ≤ ``cut_l``
    (no data-dependent store, so LLVM vectorizes the divisions)."""
    flags = np.empty(s.shape[0], dtype=np.uint8)
    for r in range(s.shape[0]):
        h, l_ = _ends(s[r], nn[r], total, n)
        flags[r] = np.uint8(h >= cut_h) | (np.uint8(l_ <= cut_l) << np.uint8(1))
    return flags


@njit(cache=True)
def mc_ends(s, nn, total, n, j):
    """The Monte Carlo interval's ends from the resamples' (S_A, N_A): the j-th largest of the
    per-resample upper ends and the j-th smallest of the lower ends (1-based j; the ends as
    :func:`_ends` gives them).  Exact order statistics without holding every end: a pass over
    every 16th resample sets cuts well past the j-th; a vectorized pass flags the resamples
    beyond a cut (about 2 j of them); only their ends are kept and partitioned.  When fewer
    than j pass a cut, every end is partitioned."""
    big_l = s.shape[0]
    if big_l < 4096 or j > big_l // 8:
        return _select(s, nn, total, n, j)
    m = (big_l + 15) // 16
    sh = np.empty(m)
    sl = np.empty(m)
    for i in range(m):
        h, l_ = _ends(s[16 * i], nn[16 * i], total, n)
        sh[i] = -h
        sl[i] = l_
    rank = min(m - 1, (2 * j) // 16 + 16)
    cut_h = -np.partition(sh, rank)[rank]  # keep hi >= cut_h
    cut_l = np.partition(sl, rank)[rank]  # keep lo <= cut_l
    flags = _beyond(s, nn, total, n, cut_h, cut_l)
    k = 0
    for r in range(big_l):
        k += flags[r] != 0
    idx = np.empty(k + 1, dtype=np.int64)  # the flagged resamples, compacted branch-free (O(j) memory;
    k = 0                                      # the spare last slot takes the writes past the last one)
    for r in range(big_l):
        idx[k] = r
        k += flags[r] != 0
    ch = np.empty(k + 1)
    cl = np.empty(k + 1)
    nh = 0
    nl = 0
    for q in range(k):
        r = idx[q]
        f = flags[r]
        h, l_ = _ends(s[r], nn[r], total, n)
        ch[nh] = -h
        nh += f & 1
        cl[nl] = l_
        nl += f >> 1
    if nh < j or nl < j:  # an unlucky sample
        return _select(s, nn, total, n, j)
    return -np.partition(ch[:nh], j - 1)[j - 1], np.partition(cl[:nl], j - 1)[j - 1]


@njit(cache=True, inline="always")
def _ipow(x, k):
    r = 1.0
    while k > 0:
        if k & 1:
            r *= x
        x *= x
        k >>= 1
    return r


@njit(cache=True)
def lattice_spectrum(vals, cnts, m1, m2, floor, cap=1 << 30):
    """Half spectrum ``X[k1, k2] = E exp(-i(ω1 N + ω2 S))``, ω = 2πk/M, of a uniformly random
    subset's size N and sum S (``vals`` integers, ``cnts`` their multiplicities), for
    ``numpy.fft.irfft2(X, s=(m1, m2))`` (which gives the distribution of (N mod m1, S mod m2)).

    X = exp(-i(n ω1 + Σ c v ω2)/2) · Π_v cos((ω1 + v ω2)/2)^{c_v}.  Values are taken in the
    order given (put the largest counts first): once |X| < ``floor`` the point is set to 0,
    which moves every cell of the inverse transform by less than ``floor``.  Most of the grid
    is below the floor: a value with |cos φ|^c < floor alone kills a point, and φ moves
    linearly along a row, so a row jumps straight to the next k2 where each of the first few
    values could be alive again.  Returns ``(X, cols, n_cols)``: only the columns that hold a live
    point, at most ``cap`` of them, in the order found (``X[:, c]`` is column ``cols[c]`` of the
    half spectrum; the others are all zero); ``n_cols > cap`` says that some were left out."""
    h2 = m2 // 2 + 1
    width = min(h2, cap)
    out = np.zeros((m1, width), dtype=np.complex128)
    cols = np.zeros(width, dtype=np.int64)
    where = np.full(h2, -1, dtype=np.int64)  # half-spectrum column -> its place in out
    n_cols = 0
    g = vals.shape[0]
    n = 0
    ssum = 0.0
    for i in range(g):
        n += cnts[i]
        ssum += vals[i] * cnts[i]
    # the values that steer the jumps (non-zero value: φ moves along a row) and their reach β
    n_f = 0
    fv = np.zeros(4)
    fb = np.zeros(4)
    for i in range(g):
        if vals[i] != 0.0 and n_f < 4:
            fv[n_f] = vals[i]
            fb[n_f] = math.acos(min(1.0, floor ** (1.0 / cnts[i]))) * (1.0 + 1e-9) + 1e-12
            n_f += 1
    for k1 in range(m1):
        w1 = 2.0 * math.pi * k1 / m1
        dead = False
        for i in range(g):  # a zero value's factor is constant along the row
            if vals[i] == 0.0 and abs(_ipow(math.cos(0.5 * w1), cnts[i])) < floor:
                dead = True
        if dead:
            continue
        k2 = 0
        while k2 < h2:
            w2 = 2.0 * math.pi * k2 / m2
            skip = 0
            for f in range(n_f):
                phi = 0.5 * (w1 + fv[f] * w2)
                r = phi - math.pi * math.floor(phi / math.pi)  # in [0, π)
                beta = fb[f]
                if r > beta and r < math.pi - beta:
                    step = math.pi * abs(fv[f]) / m2
                    need = (math.pi - beta - r) if fv[f] > 0 else (r - beta)
                    s = np.int64(math.ceil(need / step))
                    skip = max(skip, max(s, 1))
            if skip > 0:
                k2 += skip
                continue
            prod = 1.0
            for i in range(g):
                prod *= _ipow(math.cos(0.5 * (w1 + vals[i] * w2)), cnts[i])
                if abs(prod) < floor:
                    prod = 0.0
                    break
            if prod != 0.0:
                if where[k2] < 0:
                    if n_cols < width:
                        cols[n_cols] = k2
                        where[k2] = n_cols
                    n_cols += 1
                if where[k2] >= 0:
                    ph = -0.5 * (n * w1 + ssum * w2)
                    out[k1, where[k2]] = prod * complex(math.cos(ph), math.sin(ph))
            k2 += 1
    return out, cols, n_cols


@njit(cache=True)
def lattice_rows(head, kcols, n_lo, s_lo, m1, m2, f2):
    """Each row of the lattice law as a short Fourier sum, for tails without the (f1, f2) grid.

    ``head``: ``ifft(X, axis=0)`` of the live columns ``kcols`` (ascending, starting with 0) of the
    half spectrum, so that the periodic law is P(N ≡ a, S ≡ b) = (1/f2) Σ_k w_k Re(head[a, k] ω^{kb}),
    ω = e^{2πi/f2}, w = 1 for the columns 0 and f2/2, else 2.  For the m1 rows N = n_lo + i and the m2
    columns S = s_lo + j of the box, the row's tail T(i, j) = Σ_{j' = j}^{m2-1} P(N, S = s_lo + j') is a
    geometric sum per k: T(i, j) = (d_i (m2 − j) + Σ_{k≠0} w_k Re(A_ik ω^{kj}) − c_i) / f2 with
    A_ik = head[a, k] ω^{k s_lo} / (1 − ω^k), c_i = Σ_k w_k Re(A_ik ω^{k m2}), d_i = Re head[a, 0].
    Returns ``(are, aim, c, d, wts, rc, rs, t0, steps)``: A's parts, c, d, the weights, the f2 roots
    ω^q, each row's whole mass T(i, 0), and the gaps between consecutive live columns."""
    f1, kk = head.shape
    rc = np.empty(f2)
    rs = np.empty(f2)
    for q in range(f2):
        th = 2.0 * math.pi * q / f2
        rc[q] = math.cos(th)
        rs[q] = math.sin(th)
    wts = np.full(kk, 2.0)
    steps = np.zeros(kk, dtype=np.int64)
    for c in range(kk):
        if kcols[c] == 0 or 2 * kcols[c] == f2:
            wts[c] = 1.0
        if c > 0:
            steps[c] = kcols[c] - kcols[c - 1]
    are = np.zeros((m1, kk))
    aim = np.zeros((m1, kk))
    c_ = np.zeros(m1)
    d = np.zeros(m1)
    t0 = np.zeros(m1)
    for i in range(m1):
        a = (n_lo + i) % f1
        d[i] = head[a, 0].real
        acc = 0.0
        whole = 0.0
        for c in range(1, kk):
            k = kcols[c]
            th = 2.0 * math.pi * k / f2
            sh = math.sin(0.5 * th)
            den = complex(2.0 * sh * sh, -math.sin(th))  # 1 − ω^k, accurately
            q = (k * (s_lo % f2)) % f2
            z = head[a, c] * complex(rc[q], rs[q]) / den
            are[i, c] = z.real
            aim[i, c] = z.imag
            q2 = (k * (m2 % f2)) % f2
            acc += wts[c] * (z.real * rc[q2] - z.imag * rs[q2])
            whole += wts[c] * z.real
        c_[i] = acc
        t0[i] = (d[i] * m2 + whole - acc) / f2
    return are, aim, c_, d, wts, rc, rs, t0, steps


@njit(cache=True, inline="always")
def _fourier_tail(rows, i, j, m2, f2):
    """T(i, j) of :func:`lattice_rows` (``rows`` its result), j clamped to [0, m2] (T(i, m2) = 0)."""
    are, aim, c, d, wts, rc, rs, _, steps = rows
    if j < 0:
        j = 0
    if j >= m2:
        return 0.0
    acc = 0.0
    jq = j % f2
    q = 0  # (k · j) mod f2 for the current live column k
    for col in range(1, are.shape[1]):
        st = steps[col]
        if st == 1:
            q += jq
            if q >= f2:
                q -= f2
        else:
            q = (q + st * jq) % f2
        acc += wts[col] * (are[i, col] * rc[q] - aim[i, col] * rs[q])
    return (d[i] * (m2 - j) + acc - c[i]) / f2


@njit(cache=True, inline="always")
def _fourier_row_mass(rows, i, j, m2, f2, mirror):
    if mirror:
        return rows[7][i] - _fourier_tail(rows, i, j, m2, f2)
    return _fourier_tail(rows, i, j, m2, f2)


@njit(cache=True)
def fourier_upper_mass(rows, m2, f2, n_lo, s_lo, num, den, strict, mirror):
    """Σ over the rows N of P(N, S ≥ num·N/den) (``strict``: S > num·N/den), integer thresholds,
    from the rows of :func:`lattice_rows`.  ``mirror``: the same for −S, i.e.
    P(N, S ≤ −num·N/den) (strict: <), from the same rows."""
    acc = 0.0
    for i in range(rows[0].shape[0]):
        q = num * (n_lo + i)
        if not mirror:
            s = q // den + 1 if strict else -((-q) // den)
            acc += _fourier_row_mass(rows, i, s - s_lo, m2, f2, False)
        else:
            s = (-q) // den + 1 if not strict else -(q // den)
            acc += _fourier_row_mass(rows, i, s - s_lo, m2, f2, True)
    return acc


@njit(cache=True)
def fourier_upper_mass_float(rows, m2, f2, n_lo, s_lo, delta, tol, mirror):
    """As :func:`fourier_upper_mass` for a real threshold: S − δN ≥ −tol (mirror: −S − δN ≥ −tol)."""
    acc = 0.0
    for i in range(rows[0].shape[0]):
        nn = n_lo + i
        if not mirror:
            s = np.int64(math.ceil(delta * nn - tol))
            acc += _fourier_row_mass(rows, i, s - s_lo, m2, f2, False)
        else:
            s = np.int64(math.floor(-delta * nn + tol)) + 1
            acc += _fourier_row_mass(rows, i, s - s_lo, m2, f2, True)
    return acc
