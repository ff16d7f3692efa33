"""AVX-512 Monte Carlo kernels: 16 resamples at a time, written as LLVM intrinsics."""

from __future__ import annotations

import os

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from ipcausal.stats._kernels.stream import CHUNK, LANES, _seed_lanes, _tally

_F8 = ir.VectorType(ir.DoubleType(), 8)
_I8 = ir.VectorType(ir.IntType(64), 8)
_I64 = ir.IntType(64)


def _splat(v: int) -> ir.Constant:
    return ir.Constant(_I8, [v] * 8)


def _ir_load_state(builder: ir.IRBuilder, svec: ir.Value) -> list[list[ir.Value]]:
    """Both octets' xoshiro states (``state`` layout of :func:`_simd_block`) into allocas."""
    return [[cgutils.alloca_once_value(builder, builder.load(
        builder.gep(svec, [ir.Constant(_I64, 4 * p + i)]), align=8)) for i in range(4)] for p in range(2)]


def _ir_store_state(builder: ir.IRBuilder, svec: ir.Value, st: list[list[ir.Value]]) -> None:
    for p in range(2):
        for i in range(4):
            builder.store(builder.load(st[p][i]), builder.gep(svec, [ir.Constant(_I64, 4 * p + i)]), align=8)


def _ir_xoshiro(builder: ir.IRBuilder, st: list[ir.Value]) -> ir.Value:
    """One xoshiro256** step on 8 lanes: returns rotl(s1 * 5, 7) * 9 and updates ``st``."""
    s0, s1, s2, s3 = (builder.load(x) for x in st)
    x5 = builder.add(builder.shl(s1, _splat(2)), s1)
    rot = builder.or_(builder.shl(x5, _splat(7)), builder.lshr(x5, _splat(57)))
    word = builder.add(builder.shl(rot, _splat(3)), rot)
    t = builder.shl(s1, _splat(17))
    s2 = builder.xor(s2, s0)
    s3 = builder.xor(s3, s1)
    s1 = builder.xor(s1, s2)
    s0 = builder.xor(s0, s3)
    s2 = builder.xor(s2, t)
    s3 = builder.or_(builder.shl(s3, _splat(45)), builder.lshr(s3, _splat(19)))
    for x, v in zip(st, (s0, s1, s2, s3)):
        builder.store(v, x)
    return word


def _ir_nibble_word(builder: ir.IRBuilder, tvec: ir.Value, index: ir.Value, words: list[ir.Value],
                    acc: list[list[ir.Value]], perm: ir.Function) -> None:
    """Add word ``index``'s 16 nibble look-ups (both octets' ``words``) into the accumulators ``acc``."""
    g0 = builder.mul(index, ir.Constant(_I64, 32))  # 16 tables × 2 halves per word
    for nib in range(16):
        off = builder.add(g0, ir.Constant(_I64, 2 * nib))
        lo = builder.load(builder.gep(tvec, [off]), align=8)
        hi = builder.load(builder.gep(tvec, [builder.add(off, ir.Constant(_I64, 1))]), align=8)
        for p in range(2):
            idx = builder.lshr(words[p], _splat(4 * nib)) if nib else words[p]
            a = acc[p][nib % 2]  # vpermi2pd reads the low 4 bits of each index lane
            builder.store(builder.fadd(builder.load(a), builder.call(perm, [lo, idx, hi])), a)


@intrinsic
def _simd_block(typingctx, tab, n_words, state, out):
    """T* of the next ``LANES`` resamples: ``out[i]`` for lane ``i`` (AVX-512F only).

    ``state``: uint64[64], octet ``p`` (lanes 8p..8p+7) at ``32 p``: s0[8], s1[8], s2[8], s3[8];
    ``tab``: :func:`nibble_tables` (64-byte aligned for speed; the loads are correct at any
    alignment).  Per word: both octets' xoshiro256** steps as 8-lane vector ops, then for each
    nibble one ``vpermi2pd`` per octet looks up 8 lanes at once in the 16-entry table (two zmm
    loads shared by the octets); two accumulators per octet.
    """
    sig = types.void(tab, n_words, state, out)

    def codegen(context, builder, signature, args):
        tab_v, nw, st_v, out_v = args
        tptr = context.make_array(signature.args[0])(context, builder, tab_v).data
        sptr = context.make_array(signature.args[2])(context, builder, st_v).data
        optr = context.make_array(signature.args[3])(context, builder, out_v).data
        perm = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_F8, [_F8, _I8, _F8]), "llvm.x86.avx512.vpermi2var.pd.512")
        svec = builder.bitcast(sptr, _I8.as_pointer())
        ovec = builder.bitcast(optr, _F8.as_pointer())
        tvec = builder.bitcast(tptr, _F8.as_pointer())
        st = _ir_load_state(builder, svec)
        acc = [[cgutils.alloca_once_value(builder, ir.Constant(_F8, [0.0] * 8)) for _ in range(2)]
               for _ in range(2)]
        with cgutils.for_range(builder, nw) as loop:
            words = [_ir_xoshiro(builder, st[p]) for p in range(2)]
            _ir_nibble_word(builder, tvec, loop.index, words, acc, perm)
        _ir_store_state(builder, svec, st)
        for p in range(2):
            total = builder.fadd(builder.load(acc[p][0]), builder.load(acc[p][1]))
            builder.store(total, builder.gep(ovec, [ir.Constant(_I64, p)]), align=8)
        return context.get_dummy_value()

    return sig, codegen


def aligned_empty(n: int) -> np.ndarray:
    """An uninitialised float64 array of ``n`` whose data start on a 64-byte boundary."""
    raw = np.empty(n + 8, dtype=np.float64)
    off = (-raw.ctypes.data % 64) // 8
    return raw[off:off + n]


@njit(cache=True)
def fill_nibble_tables(a, tab):
    """4-bit tables into ``tab`` (``16 · 16 · n_words`` floats): entry ``16 g + b`` is
    ``Σ_j ±a[4g + j]`` (+ where bit j of b is 1), groups past ``a`` all zero."""
    n = a.shape[0]
    for g in range(tab.shape[0] // 16):
        for b in range(16):
            acc = 0.0
            for j in range(4):
                idx = 4 * g + j
                if idx < n:
                    if (b >> j) & 1:
                        acc += a[idx]
                    else:
                        acc -= a[idx]
            tab[16 * g + b] = acc


def nibble_tables(a: np.ndarray) -> tuple[np.ndarray, int]:
    """64-byte-aligned 4-bit tables of the magnitudes ``a`` for :func:`mc_counts_simd`."""
    n_words = (a.shape[0] + 63) // 64
    tab = aligned_empty(256 * n_words)
    fill_nibble_tables(a, tab)
    return tab, n_words


@njit(cache=True)
def _simd_chunk(tab, n_words, xa, xg, xl, seed, chunk, count):
    state = _seed_lanes(seed, chunk)
    t = np.empty(LANES, dtype=np.float64)
    ge_abs = 0
    ge = 0
    le = 0
    for q in range(0, count, LANES):
        _simd_block(tab, n_words, state, t)
        for i in range(min(LANES, count - q)):
            a, g, l_ = _tally(t[i], xa, xg, xl)
            ge_abs += a
            ge += g
            le += l_
    return ge_abs, ge, le


@njit(cache=True)
def mc_counts_simd(tab, n_words, xa, xg, xl, n_resamples, seed):
    """As :func:`mc_counts_table` with :func:`nibble_tables` on AVX-512 (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    out = np.zeros(3, dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _simd_chunk(tab, n_words, xa, xg, xl, seed, c, count)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out


@njit(cache=True, parallel=True)
def mc_counts_simd_parallel(tab, n_words, xa, xg, xl, n_resamples, seed):
    """As :func:`mc_counts_simd`, chunks spread over threads (identical result)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _simd_chunk(tab, n_words, xa, xg, xl, seed, c, count)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0)


def simd_available() -> bool:
    """True when numba compiles for this machine's CPU and that CPU has AVX-512F."""
    from numba.core import config

    if os.environ.get("IPCAUSAL_PORTABLE_KERNELS", "") not in ("", "0"):
        return False
    if config.CPU_NAME not in (None, "host"):
        return False
    return bool(llvm.get_host_cpu_features().get("avx512f", False))


@intrinsic
def _simd_pop_block(typingctx, seg_start, seg_m, seg_v, n_words, state, out):
    """W of the next ``LANES`` resamples on lattice data: ``out[i]`` for lane ``i`` (AVX-512F).

    Segments of word ``k`` are ``seg_start[k] .. seg_start[k + 1] - 1`` (:func:`segment_starts`);
    per segment, ``W += v · popcount(word & mask)`` on 8 lanes at once (``vpopcntq``).
    """
    sig = types.void(seg_start, seg_m, seg_v, n_words, state, out)

    def codegen(context, builder, signature, args):
        ss_v, sm_v, sv_v, nw, st_v, out_v = args
        arrays = [context.make_array(signature.args[i])(context, builder, v).data
                  for i, v in ((0, ss_v), (1, sm_v), (2, sv_v), (4, st_v), (5, out_v))]
        ss_ptr, sm_ptr, sv_ptr, sptr, optr = arrays
        svec = builder.bitcast(sptr, _I8.as_pointer())
        ovec = builder.bitcast(optr, _I8.as_pointer())
        st = _ir_load_state(builder, svec)
        ctpop = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I8, [_I8]), "llvm.ctpop.v8i64")
        acc = [cgutils.alloca_once_value(builder, ir.Constant(_I8, [0] * 8)) for _ in range(2)]
        with cgutils.for_range(builder, nw) as loop:
            words = [_ir_xoshiro(builder, st[p]) for p in range(2)]
            first = builder.load(builder.gep(ss_ptr, [loop.index]))
            last = builder.load(builder.gep(ss_ptr, [builder.add(loop.index, ir.Constant(_I64, 1))]))
            with cgutils.for_range(builder, builder.sub(last, first)) as seg:
                j = builder.add(first, seg.index)
                mask = _splat_value(builder, builder.load(builder.gep(sm_ptr, [j])))
                val = _splat_value(builder, builder.load(builder.gep(sv_ptr, [j])))
                for p in range(2):
                    bits = builder.call(ctpop, [builder.and_(words[p], mask)])
                    builder.store(builder.add(builder.load(acc[p]), builder.mul(val, bits)), acc[p])
        _ir_store_state(builder, svec, st)
        for p in range(2):
            builder.store(builder.load(acc[p]), builder.gep(ovec, [ir.Constant(_I64, p)]), align=8)
        return context.get_dummy_value()

    return sig, codegen


def _splat_value(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """An i64 broadcast to the 8 lanes of a vector."""
    vec = builder.insert_element(ir.Constant(_I8, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(vec, ir.Constant(_I8, ir.Undefined), ir.Constant(ir.VectorType(ir.IntType(32), 8), [0] * 8))


def segment_starts(seg_w: np.ndarray, n_words: int) -> np.ndarray:
    """``starts[k]``: index of the first segment of word ``k`` (segments sorted by word)."""
    return np.searchsorted(seg_w, np.arange(n_words + 1)).astype(np.int64)


@njit(cache=True)
def _simd_pop_chunk(seg_start, seg_m, seg_v, n_words, total, t_int, seed, chunk, count):
    state = _seed_lanes(seed, chunk)
    w = np.empty(LANES, dtype=np.int64)
    t_abs = abs(t_int)
    ge_abs = 0
    ge = 0
    le = 0
    for q in range(0, count, LANES):
        _simd_pop_block(seg_start, seg_m, seg_v, n_words, state, w)
        for i in range(min(LANES, count - q)):
            t = 2 * w[i] - total
            a, g, l_ = _tally(t, t_abs, t_int, t_int)
            ge_abs += a
            ge += g
            le += l_
    return ge_abs, ge, le


@njit(cache=True)
def mc_counts_popcount_simd(seg_start, seg_m, seg_v, n_words, total, t_int, n_resamples, seed):
    """As :func:`mc_counts_popcount` on AVX-512, 16 resamples at a time (one thread)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    out = np.zeros(3, dtype=np.int64)
    for c in range(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _simd_pop_chunk(seg_start, seg_m, seg_v, n_words, total, t_int, seed, c, count)
        out[0] += r[0]
        out[1] += r[1]
        out[2] += r[2]
    return out


@njit(cache=True, parallel=True)
def mc_counts_popcount_simd_parallel(seg_start, seg_m, seg_v, n_words, total, t_int, n_resamples, seed):
    """As :func:`mc_counts_popcount_simd`, chunks spread over threads (identical result)."""
    n_chunks = (n_resamples + CHUNK - 1) // CHUNK
    per = np.zeros((n_chunks, 3), dtype=np.int64)
    for c in prange(n_chunks):
        count = min(CHUNK, n_resamples - c * CHUNK)
        r = _simd_pop_chunk(seg_start, seg_m, seg_v, n_words, total, t_int, seed, c, count)
        per[c, 0] = r[0]
        per[c, 1] = r[1]
        per[c, 2] = r[2]
    return per.sum(axis=0)
