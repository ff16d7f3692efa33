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

__all__ = ["counts_and_law", "counts_and_ends", "lattice_counts", "lattice_segments", "simd_ok", "BLOCK"]


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
    resample; ``total``, ``size``: Σy and n) are what :class:`ipcausal.stats.intervals.SubsetLaw`
    of kind ``"monte-carlo-inversion"`` reads.  (Internal: validated input.)
    """
    job = _Job(x, a, signs, k, bounds, n_resamples, seed, simd, threads)
    counts, s, v = job.block(0, n_resamples)
    if job.segs is not None and job.plan.simd:  # the exact integer counts of the AVX-512 popcount kernel
        counts = lattice_counts(job.segs, job.n_words, n_resamples, seed, job.plan) if need_counts else None
    return counts, dict(s=s, n=v, total=job.total, size=job.n, y=job.y)


#: resamples per block of :func:`counts_and_ends` (a multiple of the stream's chunk): 12 MB of (S_A, N_A)
BLOCK = 1 << 20


def counts_and_ends(x: np.ndarray, a: np.ndarray, signs: np.ndarray, k: np.ndarray | None,
                    bounds: tuple[float, float, float], n_resamples: int, seed: int, simd: bool | None,
                    j: int, threads: int | None = None) -> tuple[np.ndarray, tuple[float, float] | None]:
    """The counts of :func:`counts_and_law` and the Monte Carlo interval's ends (the j-th smallest
    lower and j-th largest upper end, as :func:`ipcausal.stats._kernels.mc_ends` gives them), in
    O(BLOCK + j) memory: the resamples run in blocks of ``BLOCK`` (the same sign vectors in the same
    order), and only the ends that can still be among the j most extreme are kept between blocks.
    ``j <= 0``: no finite end (``None``)."""
    job = _Job(x, a, signs, k, bounds, n_resamples, seed, simd, threads)
    counts = np.zeros(3, dtype=np.int64)
    keep_h = keep_l = np.zeros(0)
    cut_h = cut_l = np.inf  # keep −upper ends <= cut_h and lower ends <= cut_l
    ends = None
    for start in range(0, n_resamples, BLOCK):
        count = min(BLOCK, n_resamples - start)
        got, s, v = job.block(start, count)
        if got is not None:
            counts += got
        if j <= 0:
            continue
        if count == n_resamples:  # one block: the selection without holding every end
            ends = K.mc_ends(s, v, job.total, job.n, j)
            break
        hi, lo = K.mc_ends_all(s, v, job.total, job.n)
        keep_h, cut_h = _smallest(np.concatenate([keep_h, (-hi)[-hi <= cut_h]]), j)
        keep_l, cut_l = _smallest(np.concatenate([keep_l, lo[lo <= cut_l]]), j)
    if job.segs is not None and job.plan.simd:
        counts = lattice_counts(job.segs, job.n_words, n_resamples, seed, job.plan)
    if j > 0 and ends is None:
        ends = (-float(np.partition(keep_h, j - 1)[j - 1]), float(np.partition(keep_l, j - 1)[j - 1]))
    return counts, (None if ends is None else (float(ends[0]), float(ends[1])))


def _smallest(pool: np.ndarray, j: int) -> tuple[np.ndarray, float]:
    """The values of ``pool`` at or below its j-th smallest (all of them while it has fewer), and that cut."""
    if pool.size <= 2 * j:
        return pool, np.inf if pool.size < j else float(np.partition(pool, j - 1)[j - 1])
    cut = float(np.partition(pool, j - 1)[j - 1])
    return pool[pool <= cut], cut


class _Job:
    """One Monte Carlo pass's inputs, prepared once (sorted magnitudes, sign words, tables, the plan),
    run a block of resamples at a time (:meth:`block`)."""

    def __init__(self, x: np.ndarray, a: np.ndarray, signs: np.ndarray, k: np.ndarray | None,
                 bounds: tuple[float, float, float], n_resamples: int, seed: int, simd: bool | None,
                 threads: int | None) -> None:
        self.n = x.size
        self.y = x / float(np.abs(x).max())
        self.total = float(self.y.sum())
        order = np.argsort(a, kind="stable")
        self.a_s = np.ascontiguousarray(a[order])
        self.m = self.a_s.size
        self.n_words = (self.m + 63) // 64
        self.sg, self.mk = F.sign_words(signs[order] > 0)
        self.segs = lattice_segments(k, signs, order, self.n_words)
        self.k_top = float(k[order][-1]) if self.segs is not None else 1.0
        self.bounds, self.seed = bounds, seed
        self.plan = plan("lattice-fused" if self.segs is not None else "continuous-fused",
                         self.n_words * n_resamples, threads=threads, simd=simd)
        if self.plan.simd:
            self.tab, _ = K.nibble_tables(self.a_s)
        elif self.segs is None:
            self.tab, _ = K.word_tables(self.a_s)

    def block(self, start: int, count: int) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """Counts (``None`` on lattice data with AVX-512: the caller takes the popcount kernel's) and
        (S_A, N_A) of resamples ``start .. start + count − 1`` (``start`` a multiple of the chunk)."""
        p, m, n_zero, chunk0 = self.plan, self.m, self.n - self.m, start // K.CHUNK
        counts: np.ndarray | None
        if p.simd:
            counts, t, v = run(p, F.mc_subsets_simd, F.mc_subsets_simd_parallel, self.tab, self.sg, self.mk,
                               self.n_words, m, n_zero, *self.bounds, count, self.seed, chunk0)
            if self.segs is not None:
                counts = None
        elif self.segs is not None:  # portable: integer counts and (T, V) from one popcount pass
            seg_w, seg_m, seg_v, total, t_int = self.segs
            counts, t_i, v = run(p, F.mc_subsets_popcount, F.mc_subsets_popcount_parallel, seg_w, seg_m, seg_v,
                                 self.n_words, self.sg, self.mk, m, n_zero, total, t_int, count, self.seed, chunk0)
            t = t_i * (float(self.a_s[-1]) / self.k_top)  # T in units of max|Δ|
        else:  # portable: the byte-table pass gives T as mc_counts_table sums it
            t, v = run(p, K.mc_subsets, K.mc_subsets_parallel, self.tab, self.n_words, self.sg, m, n_zero, count,
                       self.seed, chunk0)
            xa, xg, xl = self.bounds
            counts = np.array([np.count_nonzero(np.abs(t) >= xa), np.count_nonzero(t >= xg),
                               np.count_nonzero(t <= xl)], dtype=np.int64)
        K.mc_split(t, v, self.total, self.n)  # t, v become S_A, N_A
        return counts, t, v
