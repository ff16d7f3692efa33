"""One Monte Carlo pass for the p-value *and* its inverted interval (:mod:`ipcausal.stats.intervals`).

For a fixed sign vector s the statistic of Δ − δ is A_s − δ B_s (A_s = Σ s_k Δ_k, B_s = Σ s_k):
the interval needs, per resample, T = Σ s_k a_k (what the p-value kernels already compute) and
V = Σ s_k sign(Δ_k) (one popcount per word of the agreement between the drawn signs and the data's
signs; the zero differences are signed by a second stream, ``seed ^ ZERO_STREAM``, as in
:func:`.intervals.mc_subsets`).  These kernels return the p-value's counts and (T, V) together, so
the interval costs a popcount per word instead of a second pass over the data.  ``chunk0`` starts
the pass at chunk ``chunk0`` of the stream (a block of a longer run: the resamples are those of the
whole run, in the whole run's order).

* :func:`mc_subsets_simd` — the AVX-512 nibble-table kernel (:mod:`.simd`) with the agreement
  popcount added to the same loop: the same T, so the same counts, as :func:`.simd.mc_counts_simd`.
* :func:`mc_subsets_popcount` — lattice data: W = Σ_v v · popcount per segment (exact integers, the
  same counts as :func:`.tables.mc_counts_popcount`) and V.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, prange, types, uint64
from numba.core import cgutils
from numba.extending import intrinsic

from ipcausal.stats._kernels.intervals import ZERO_STREAM
from ipcausal.stats._kernels.simd import (
    _F8,
    _I8,
    _I64,
    _ir_load_state,
    _ir_nibble_word,
    _ir_store_state,
    _ir_xoshiro,
    _splat_value,
)
from ipcausal.stats._kernels.stream import CHUNK, LANES, _fill_lane, _popcount, _seed_lanes, _tally
from ipcausal.stats._kernels.tables import _segment_weight


@intrinsic
def _simd_block_tv(typingctx, tab, sg, mk, n_words, state, out, out_v):
    """As :func:`.simd._simd_block` (T* of the next ``LANES`` resamples into ``out``), plus
    ``out_v[i]`` = number of elements whose drawn sign agrees with the data's (``sg``: per word,
    the data's positive signs; ``mk``: the word's valid bits)."""
    sig = types.void(tab, sg, mk, n_words, state, out, out_v)

    def codegen(context, builder, signature, args):
        tab_v, sg_v, mk_v, nw, st_v, out_a, outv_a = args
        tptr = context.make_array(signature.args[0])(context, builder, tab_v).data
        sgptr = context.make_array(signature.args[1])(context, builder, sg_v).data
        mkptr = context.make_array(signature.args[2])(context, builder, mk_v).data
        sptr = context.make_array(signature.args[4])(context, builder, st_v).data
        optr = context.make_array(signature.args[5])(context, builder, out_a).data
        ovptr = context.make_array(signature.args[6])(context, builder, outv_a).data
        perm = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_F8, [_F8, _I8, _F8]), "llvm.x86.avx512.vpermi2var.pd.512")
        ctpop = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I8, [_I8]), "llvm.ctpop.v8i64")
        svec = builder.bitcast(sptr, _I8.as_pointer())
        ovec = builder.bitcast(optr, _F8.as_pointer())
        ovvec = builder.bitcast(ovptr, _I8.as_pointer())
        tvec = builder.bitcast(tptr, _F8.as_pointer())
        st = _ir_load_state(builder, svec)
        acc = [[cgutils.alloca_once_value(builder, ir.Constant(_F8, [0.0] * 8)) for _ in range(2)]
               for _ in range(2)]
        agree = [cgutils.alloca_once_value(builder, ir.Constant(_I8, [0] * 8)) for _ in range(2)]
        ones = ir.Constant(_I8, [-1] * 8)
        with cgutils.for_range(builder, nw) as loop:
            words = [_ir_xoshiro(builder, st[p]) for p in range(2)]
            _ir_nibble_word(builder, tvec, loop.index, words, acc, perm)
            sgw = _splat_value(builder, builder.load(builder.gep(sgptr, [loop.index])))
            mkw = _splat_value(builder, builder.load(builder.gep(mkptr, [loop.index])))
            for p in range(2):
                same = builder.and_(builder.xor(builder.xor(words[p], sgw), ones), mkw)
                builder.store(builder.add(builder.load(agree[p]), builder.call(ctpop, [same])), agree[p])
        _ir_store_state(builder, svec, st)
        for p in range(2):
            total = builder.fadd(builder.load(acc[p][0]), builder.load(acc[p][1]))
            builder.store(total, builder.gep(ovec, [ir.Constant(_I64, p)]), align=8)
            builder.store(builder.load(agree[p]), builder.gep(ovvec, [ir.Constant(_I64, p)]), align=8)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, inline="always")
def _zero_signs(zbuf, zero_words, n_zero, zst, lane):
    """Σ s_k over the zero differences of one resample (their own stream, lane ``lane``)."""
    _fill_lane(zbuf, zero_words, zst, lane)
    vz = 0
    for j in range(zero_words):
        bits = 64 if 64 * (j + 1) <= n_zero else n_zero - 64 * j
        mask = uint64(0xFFFFFFFFFFFFFFFF) if bits == 64 else (uint64(1) << uint64(bits)) - uint64(1)
        vz += np.int64(_popcount(zbuf[j] & mask))
    return 2 * vz - n_zero


@njit(cache=True)
def _simd_tv_chunk(tab, sg, mk, n_words, m, n_zero, xa, xg, xl, seed, chunk, count, t_out, v_out, base):
    state = _seed_lanes(seed, chunk)
    zero_words = (n_zero + 63) // 64
    zst = _seed_lanes(seed ^ ZERO_STREAM, chunk)
    zbuf = np.empty(max(zero_words, 1), dtype=np.uint64)
    t = np.empty(LANES, dtype=np.float64)
    agree = np.empty(LANES, dtype=np.int64)
    ge_abs = 0
    ge = 0
    le = 0
    for q in range(0, count, LANES):
        _simd_block_tv(tab, sg, mk, n_words, state, t, agree)
        for i in range(min(LANES, count - q)):
            a, g, l_ = _tally(t[i], xa, xg, xl)
            ge_abs += a
            ge += g
            le += l_
            vz = _zero_signs(zbuf, zero_words, n_zero, zst, i) if n_zero > 0 else 0
            t_out[base + q + i] = t[i]
            v_out[base + q + i] = (2 * agree[i] - m) + vz
    return ge_abs, ge, le


@njit(cache=True)
def mc_subsets_simd(tab, sg, mk, n_words, m, n_zero, xa, xg, xl, n_resamples, seed, chunk0=0):
    """Counts ``[#|T*| >= xa, #T* >= xg, #T* <= xl]`` (as :func:`.simd.mc_counts_simd`) and, per
    resample, T and V (as :func:`.intervals.mc_subsets`, T summed in the nibble kernel's order)."""
    t_out = np.empty(n_resamples, dtype=np.float64)
    v_out = np.empty(n_resamples, dtype=np.int32)
    out = np.zeros(3, dtype=np.int64)
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _simd_tv_chunk(tab, sg, mk, n_words, m, n_zero, xa, xg, xl, seed, chunk0 + c, count, t_out, v_out,
                           c * CHUNK)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out, t_out, v_out


@njit(cache=True, parallel=True)
def mc_subsets_simd_parallel(tab, sg, mk, n_words, m, n_zero, xa, xg, xl, n_resamples, seed, chunk0=0):
    """As :func:`mc_subsets_simd`, chunks spread over threads (identical result)."""
    t_out = np.empty(n_resamples, dtype=np.float64)
    v_out = np.empty(n_resamples, dtype=np.int32)
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _simd_tv_chunk(tab, sg, mk, n_words, m, n_zero, xa, xg, xl, seed, chunk0 + c, count, t_out, v_out,
                           c * CHUNK)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0), t_out, v_out


@njit(cache=True)
def _pop_tv_chunk(seg_w, seg_m, seg_v, n_words, sg, mk, m, n_zero, total, t_int, seed, chunk, count,
                  w_out, v_out, base):
    buf = np.empty(n_words, dtype=np.uint64)
    st = _seed_lanes(seed, chunk)
    zero_words = (n_zero + 63) // 64
    zst = _seed_lanes(seed ^ ZERO_STREAM, chunk)
    zbuf = np.empty(max(zero_words, 1), dtype=np.uint64)
    t_abs = abs(t_int)
    ge_abs = 0
    ge = 0
    le = 0
    for r in range(count):
        _fill_lane(buf, n_words, st, r % LANES)
        w = _segment_weight(buf, seg_w, seg_m, seg_v)
        agree = 0
        for j in range(n_words):
            agree += np.int64(_popcount(~(buf[j] ^ sg[j]) & mk[j]))
        t = 2 * w - total
        a, g, l_ = _tally(t, t_abs, t_int, t_int)
        ge_abs += a
        ge += g
        le += l_
        vz = _zero_signs(zbuf, zero_words, n_zero, zst, r % LANES) if n_zero > 0 else 0
        w_out[base + r] = t
        v_out[base + r] = (2 * agree - m) + vz
    return ge_abs, ge, le


@njit(cache=True)
def mc_subsets_popcount(seg_w, seg_m, seg_v, n_words, sg, mk, m, n_zero, total, t_int, n_resamples, seed,
                        chunk0=0):
    """Counts as :func:`.tables.mc_counts_popcount` and, per resample, the integer T = 2W − Σk and V."""
    t_out = np.empty(n_resamples, dtype=np.int64)
    v_out = np.empty(n_resamples, dtype=np.int32)
    out = np.zeros(3, dtype=np.int64)
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _pop_tv_chunk(seg_w, seg_m, seg_v, n_words, sg, mk, m, n_zero, total, t_int, seed, chunk0 + c, count,
                          t_out, v_out, c * CHUNK)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out, t_out, v_out


@njit(cache=True, parallel=True)
def mc_subsets_popcount_parallel(seg_w, seg_m, seg_v, n_words, sg, mk, m, n_zero, total, t_int, n_resamples,
                                 seed, chunk0=0):
    """As :func:`mc_subsets_popcount`, chunks spread over threads (identical result)."""
    t_out = np.empty(n_resamples, dtype=np.int64)
    v_out = np.empty(n_resamples, dtype=np.int32)
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _pop_tv_chunk(seg_w, seg_m, seg_v, n_words, sg, mk, m, n_zero, total, t_int, seed, chunk0 + c, count,
                          t_out, v_out, c * CHUNK)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0), t_out, v_out


def sign_words(positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per 64-bit word: the bits of the positive elements and the mask of valid bits."""
    m = positive.size
    n_words = (m + 63) // 64
    bits = np.zeros(64 * n_words, dtype=np.uint8)
    bits[:m] = positive
    valid = np.zeros(64 * n_words, dtype=np.uint8)
    valid[:m] = 1
    sg = np.packbits(bits, bitorder="little").view(np.uint64)
    mk = np.packbits(valid, bitorder="little").view(np.uint64)
    return np.ascontiguousarray(sg), np.ascontiguousarray(mk)
