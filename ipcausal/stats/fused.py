"""The Monte Carlo p-value and its inverted interval from one kernel pass (SPEC §8).

For the L sign vectors s of the counter-based stream, the two-sided statistic of Δ − δ is
A_s − δ B_s with A_s = Σ s_k Δ_k and B_s = Σ s_k; the p-value needs only A_s.  The kernels of
:mod:`ipcausal.stats._kernels.fused` return, in the pass that counts the p-value's exceedances,
T = A_s (in units of max|Δ|) and V = Σ s_k sign(Δ_k) (a popcount per word), from which
:func:`ipcausal.stats._kernels.mc_split` gives each resample's flipped set (S_A, N_A); the
interval's ends are order statistics of the L breakpoints, the two subset means of each resample
(:func:`ipcausal.stats._kernels.mc_ends`: O(L), no bisection, no second O(n · L) pass).  The counts are the ones the p-value kernels give (same T, same tally);
the interval is the one :mod:`ipcausal.stats.intervals` builds from
:func:`ipcausal.stats._kernels.mc_subsets`, up to the order in which T's additions are rounded.
"""

from __future__ import annotations

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats._threads import Plan, plan, run, simd_ok

K = lazy_module("ipcausal.stats._kernels")  # numba is imported on the first kernel call
F = lazy_module("ipcausal.stats._kernels.fused")

__all__ = ["counts_and_law", "lattice_counts", "lattice_segments", "simd_ok"]


def lattice_segments(k: np.ndarray | None, signs: np.ndarray, order: np.ndarray,
                     n_words: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int] | None:
    """Popcount segments of the sorted lattice units, Σk and the observed T = Σ sign·k, or
    ``None`` when the popcount kernels do not apply (no lattice, Σk too large, too many segments)."""
    if k is None or int(k.sum()) >= 2**61:
        return None
    k_s = np.ascontiguousarray(k[order], dtype=np.int64)
    seg_w, seg_m, seg_v, _ = K.popcount_segments(k_s)
    if seg_w.size > 8 * n_words:
        return None
    return seg_w, seg_m, seg_v, int(k_s.sum()), int(np.dot(signs[order].astype(np.int64), k_s))


def lattice_counts(segs: tuple[np.ndarray, np.ndarray, np.ndarray, int, int], n_words: int, n_resamples: int,
                   seed: int, p: Plan) -> np.ndarray:
    """The popcount kernels' exact integer counts for :func:`lattice_segments` ``segs`` on plan ``p``."""
    seg_w, seg_m, seg_v, total, t_int = segs
    if p.simd:
        return run(p, K.mc_counts_popcount_simd, K.mc_counts_popcount_simd_parallel, K.segment_starts(seg_w, n_words),
                   seg_m, seg_v, n_words, total, t_int, n_resamples, seed)
    return run(p, K.mc_counts_popcount, K.mc_counts_popcount_parallel, seg_w, seg_m, seg_v, n_words, total, t_int,
               n_resamples, seed)


def counts_and_law(x: np.ndarray, a: np.ndarray, signs: np.ndarray, k: np.ndarray | None,
                   bounds: tuple[float, float, float], n_resamples: int, seed: int, simd: bool | None,
                   threads: int | None = None, need_counts: bool = True,
                   ) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
    """Monte Carlo counts ``[#|T*| >= |t|, #T* >= t, #T* <= t]`` and the data of the law of (S_A, N_A).

    ``x``: all n differences; ``a``: the non-zero magnitudes / max|Δ| (order of ``x``); ``signs``
    their signs; ``k``: their lattice units or ``None``; ``bounds``: the p-value's thresholds
    (tolerance included) for continuous data.  The variant (``simd``/``threads`` force one, else
    :func:`ipcausal.stats._threads.plan` of the ``"continuous-fused"`` or ``"lattice-fused"``
    family): with AVX-512 the nibble pass gives (T, V) and, for continuous data, the counts; on
    lattice data the AVX-512 popcount kernel adds the exact integer counts (a second, cheap pass;
    skipped when ``need_counts`` is false, and the counts are then ``None``); portable, one pass
    gives both (popcount on lattice data, byte tables otherwise).  The counts are the ones
    :func:`ipcausal.stats.permutation._mc_counts` gives.  The data (``s``, ``n``: S_A, N_A per
    resample; ``total``, ``size``: Σy and n)
    are what :class:`ipcausal.stats.intervals.SubsetLaw` of kind ``"monte-carlo-inversion"``
    reads.  (Internal: validated input.)
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
    segs = lattice_segments(k, signs, order, n_words)
    p = plan("lattice-fused" if segs is not None else "continuous-fused", n_words * n_resamples,
             threads=threads, simd=simd)
    counts: np.ndarray | None
    if p.simd:
        tab, n_words = K.nibble_tables(a_s)
        counts, t, v = run(p, F.mc_subsets_simd, F.mc_subsets_simd_parallel, tab, sg, mk, n_words, m, n_zero,
                           *bounds, n_resamples, seed)
        if segs is not None:  # the exact integer counts of the AVX-512 popcount kernel
            counts = lattice_counts(segs, n_words, n_resamples, seed, p) if need_counts else None
    elif segs is not None:  # portable: integer counts and (T, V) from one popcount pass
        seg_w, seg_m, seg_v, total, t_int = segs
        counts, t_i, v = run(p, F.mc_subsets_popcount, F.mc_subsets_popcount_parallel, seg_w, seg_m, seg_v,
                             n_words, sg, mk, m, n_zero, total, t_int, n_resamples, seed)
        t = t_i * (float(a_s[-1]) / float(k[order][-1]))  # T in units of max|Δ|
    else:  # portable: the byte-table pass gives T as mc_counts_table sums it
        tab, n_words = K.word_tables(a_s)
        t, v = run(p, K.mc_subsets, K.mc_subsets_parallel, tab, n_words, sg, m, n_zero, n_resamples, seed)
        xa, xg, xl = bounds
        counts = np.array([np.count_nonzero(np.abs(t) >= xa), np.count_nonzero(t >= xg),
                           np.count_nonzero(t <= xl)], dtype=np.int64)
    K.mc_split(t, v, float(y.sum()), n)  # t, v become S_A, N_A
    return counts, dict(s=t, n=v, total=float(y.sum()), size=n, y=y)
