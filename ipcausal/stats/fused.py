"""The Monte Carlo p-value and its inverted interval from one kernel pass (SPEC §8).

For the L sign vectors s of the counter-based stream, the two-sided statistic of Δ − δ is
A_s − δ B_s with A_s = Σ s_k Δ_k and B_s = Σ s_k; the p-value needs only A_s.  The kernels of
:mod:`ipcausal.stats._kernels.fused` return, in the pass that counts the p-value's exceedances,
T = A_s (in units of max|Δ|) and V = Σ s_k sign(Δ_k) (a popcount per word), from which
:func:`ipcausal.stats._kernels.mc_split` gives each resample's pair of subset means; the interval's
ends are order statistics of those L breakpoints (``np.partition``: O(L), no bisection, no
second O(n · L) pass).  The counts are the ones the p-value kernels give (same T, same tally);
the interval is the one :mod:`ipcausal.stats.intervals` builds from
:func:`ipcausal.stats._kernels.mc_subsets`, up to the order in which T's additions are rounded.
"""

from __future__ import annotations

import numpy as np

from ipcausal.stats import _kernels as K
from ipcausal.stats._kernels import fused as F
from ipcausal.stats._threads import PARALLEL_MIN_WORDS, PARALLEL_MIN_WORDS_SIMD, use_threads
from ipcausal.stats.intervals import SubsetLaw
from ipcausal.stats.permutation import lattice_segments

__all__ = ["counts_and_law"]


def counts_and_law(x: np.ndarray, a: np.ndarray, signs: np.ndarray, k: np.ndarray | None, bounds: tuple[float, float, float],
                   n_resamples: int, seed: int, simd: bool, threads: int | None = None) -> tuple[np.ndarray, SubsetLaw]:
    """Monte Carlo counts ``[#|T*| >= |t|, #T* >= t, #T* <= t]`` and the law of (S_A, N_A).

    ``x``: all n differences; ``a``: the non-zero magnitudes / max|Δ| (order of ``x``); ``signs``
    their signs; ``k``: their lattice units or ``None``; ``bounds``: the p-value's thresholds
    (tolerance included) for continuous data; ``simd``: whether the AVX-512 kernel runs here.
    The counts come from the kernel :func:`ipcausal.stats.permutation._mc_counts` would use, so
    they are the same: with AVX-512 the nibble pass gives (T, V) and, on lattice data, the
    AVX-512 popcount kernel (a twentieth of the nibble pass) the exact integer counts; without
    AVX-512 one portable pass gives both (popcount on lattice data, byte tables otherwise).
    (Internal: validated input.)
    """
    n = x.size
    scale = float(np.abs(x).max())
    y = x / scale
    order = np.argsort(a, kind="stable")
    a_s = np.ascontiguousarray(a[order])
    m = a_s.size
    n_zero = n - m
    n_words = (m + 63) // 64
    sg, mk = F.sign_words(signs[order] > 0)
    t = None
    segs = lattice_segments(k, signs, order, n_words)
    if segs is not None and not simd:  # portable: integer counts and (T, V) from one popcount pass
        seg_w, seg_m, seg_v, total, t_int = segs
        work = (seg_w.size + 2 * n_words) * n_resamples // 2
        kern = F.mc_subsets_popcount_parallel if use_threads(work, threads, PARALLEL_MIN_WORDS) \
            else F.mc_subsets_popcount
        counts, t_i, v = kern(seg_w, seg_m, seg_v, n_words, sg, mk, m, n_zero, total, t_int, n_resamples, seed)
        t = t_i * (float(a_s[-1]) / float(k[order][-1]))  # T in units of max|Δ|
    if t is None and simd:
        tab, n_words = K.nibble_tables(a_s)
        parallel = use_threads(n_words * n_resamples, threads, PARALLEL_MIN_WORDS_SIMD)
        kern = F.mc_subsets_simd_parallel if parallel else F.mc_subsets_simd
        counts, t, v = kern(tab, sg, mk, n_words, m, n_zero, *bounds, n_resamples, seed)
    elif t is None:  # portable: the byte-table pass gives T as mc_counts_table sums it
        tab, n_words = K.word_tables(a_s)
        kern = K.mc_subsets_parallel if use_threads(n_words * n_resamples, threads, PARALLEL_MIN_WORDS) \
            else K.mc_subsets
        t, v = kern(tab, n_words, sg, m, n_zero, n_resamples, seed)
        xa, xg, xl = bounds
        counts = np.array([np.count_nonzero(np.abs(t) >= xa), np.count_nonzero(t >= xg),
                           np.count_nonzero(t <= xl)], dtype=np.int64)
    if segs is not None and simd:  # the AVX-512 popcount kernel's exact integer counts (≈ 1/20 of the pass)
        from ipcausal.stats.permutation import _mc_counts

        counts = _mc_counts(a, signs, n_resamples, seed, k=k, threads=threads, simd=True)
    hi, lo = K.mc_split(t, v, float(y.sum()), n)  # t, v become S_A, N_A
    law = SubsetLaw("monte-carlo-inversion", scale, n, float(y.mean()), dict(s=t, n=v, lo=lo, hi=hi, y=y))
    return counts, law
