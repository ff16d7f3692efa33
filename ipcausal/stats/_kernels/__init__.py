"""Numba kernels (the only place that uses numba): sign-flip tests and p-value corrections.

All kernels take validated, contiguous arrays and plain integer seeds; ``docs/performance.md``
explains the design.  Modules: :mod:`.stream` (the random stream), :mod:`.tables` (portable Monte
Carlo kernels), :mod:`.simd` (AVX-512 Monte Carlo kernels), :mod:`.exact` (exact distributions),
:mod:`.multitest` (ranking kernels of :func:`ipcausal.stats.multitest.adjust_pvalues`),
:mod:`.intervals` (the laws that confidence intervals by test inversion read),
:mod:`.sequential` (betting e-processes and confidence sequences of :mod:`ipcausal.stats.sequential`;
its module docstring describes the state vector),
:mod:`.labels` (per-prompt background relabelings of :func:`ipcausal.stats.joint.westfall_young`),
:mod:`.splits` (side splits of :func:`ipcausal.stats.distribution.mmd_permutation_test`),
:mod:`.bootstrap` (the PB bootstrap: counter-based draws, summed by row or by row type), :mod:`.host` (the CPU model and numba's cache
folder, for the measured kernel choice of :mod:`ipcausal.stats._threads`).  Summary:

**Random stream.**  xoshiro256** (every bit of a 64-bit word becomes one sign, so the low bits
must be strong: not xoshiro256+).  Resamples come in chunks of ``CHUNK``; chunk ``c`` runs
``LANES`` = 16 generators, lane ``i`` seeded by splitmix64 of ``seed ^ (s * 0x94D049BB133111EB)``
with ``s = c * LANES + i``, so a chunk's counts depend only on ``(seed, c)`` and the totals are
identical on 1 or N threads.  Resample ``r`` of a chunk draws the next ``n_words = ceil(m / 64)``
words of lane ``r % LANES``; bit ``j`` of word ``i`` is the sign of element ``64 i + j``
(1 = +, 0 = −).  Every Monte Carlo kernel consumes this same stream, so on the same (sorted)
magnitudes they all see the same sign vectors.

**Continuous data, AVX-512** (:func:`.simd.mc_counts_simd`): 4-bit tables — a 16-entry float64 table of
signed partial sums per group of 4 elements is two zmm registers, and one ``vpermi2pd`` looks
up 8 lanes' nibbles at once; the 16 lanes' generators run as 8-lane vector code.  An LLVM
intrinsic (``simd._simd_block``) because LLVM does not emit these permutes from scalar code and
declines gathers on this CPU family.  Used when :func:`.simd.simd_available`.

**Continuous data, portable** (:func:`.tables.mc_counts_table`): byte tables — 8 elements per group, a
256-entry float64 table of the group's signed partial sums, one random byte = 8 signed adds in one
lookup; four accumulators hide the float-add latency.  Same sign vectors as the AVX-512 kernel;
the sums are added in another order, so a resample whose T* lies within rounding of the
threshold (itself widened by the tie tolerance) could count differently between the two.

**Lattice data** (:func:`.tables.mc_counts_popcount`): magnitudes are integers ``k`` sorted ascending, so
each distinct value occupies a contiguous bit range; the weight of the positive signs is
``W = Σ_v v · popcount(bits in range v)``: one popcount per (word, value) segment, exact
integer comparisons.

**Label permutations and side splits** (:mod:`.labels`, :mod:`.splits`): a resample reads the
same lanes, but each 64-bit word gives four 16-bit fields, and field i is turned into a uniform
integer below the range of group i (Lemire's multiply with rejection; a rejected field is
replaced by the low 16 bits of the lane's next word).  A group is a few prompts' joint
relabeling (P**group ≤ 256) or one pair's split; its contribution is one row of a table.

**Exact null on a lattice** (:func:`.exact.lattice_null`): dynamic programming with two buffers
(vectorizable), in counts rescaled by powers of two so no subnormals slow it down.
"""

from __future__ import annotations

from ipcausal.stats._kernels.bootstrap import (
    MAX_ROWS,
    boot_indices,
    boot_sums,
    boot_sums_parallel,
    boot_type_sums,
    boot_type_sums_parallel,
    draw_counts,
    gather_sums,
)
from ipcausal.stats._kernels.exact import exact_enumeration_counts, lattice_null, lattice_tail
from ipcausal.stats._kernels.host import cache_dir, host_cpu
from ipcausal.stats._kernels.intervals import (
    class_subsets,
    fourier_upper_mass,
    fourier_upper_mass_float,
    lattice_rows,
    lattice_spectrum,
    mc_subsets,
    mc_ends,
    mc_ends_all,
    mc_split,
    mc_subsets_parallel,
)
from ipcausal.stats._kernels.labels import (
    MAX_BOUND,
    bounded,
    closed_counts,
    closed_counts_parallel,
    closed_exact_counts,
    label_tables,
    wy_counts,
    wy_counts_parallel,
    wy_exact_counts,
)
from ipcausal.stats._kernels.multitest import (
    mt_check,
    mt_elementwise,
    mt_keys,
    mt_order,
    mt_scatter,
    mt_stepwise,
)
from ipcausal.stats._kernels.sequential import new_state_vector, seq_monitor_many, seq_update
from ipcausal.stats._kernels.simd import (
    aligned_empty,
    mc_counts_popcount_simd,
    mc_counts_popcount_simd_parallel,
    mc_counts_simd,
    mc_counts_simd_parallel,
    nibble_tables,
    segment_starts,
    simd_available,
)
from ipcausal.stats._kernels.splits import (
    split_counts,
    split_counts_direct,
    split_counts_parallel,
    split_exact_count,
    split_tables,
)
from ipcausal.stats._kernels.stream import CHUNK, LANES, random_words
from ipcausal.stats._kernels.tables import (
    byte_tables,
    mc_counts_popcount,
    mc_counts_popcount_parallel,
    mc_counts_table,
    mc_counts_table_parallel,
    popcount_segments,
    word_tables,
)

__all__ = [
    "CHUNK", "LANES", "random_words",
    "byte_tables", "word_tables", "mc_counts_table", "mc_counts_table_parallel",
    "popcount_segments", "mc_counts_popcount", "mc_counts_popcount_parallel",
    "aligned_empty", "nibble_tables", "mc_counts_simd", "mc_counts_simd_parallel",
    "segment_starts", "mc_counts_popcount_simd", "mc_counts_popcount_simd_parallel", "simd_available",
    "exact_enumeration_counts", "lattice_null", "lattice_tail",
    "class_subsets", "mc_subsets", "mc_subsets_parallel", "mc_split", "mc_ends", "mc_ends_all", "lattice_spectrum",
    "lattice_rows", "fourier_upper_mass", "fourier_upper_mass_float",
    "mt_check", "mt_elementwise", "mt_keys", "mt_order", "mt_scatter", "mt_stepwise",
    "new_state_vector", "seq_update", "seq_monitor_many",
    "MAX_BOUND", "bounded", "label_tables", "closed_counts", "closed_counts_parallel", "closed_exact_counts", "wy_counts", "wy_counts_parallel", "wy_exact_counts",
    "gather_sums", "draw_counts", "boot_sums", "boot_sums_parallel", "boot_type_sums", "boot_type_sums_parallel",
    "boot_indices", "MAX_ROWS",
    "split_tables", "split_counts", "split_counts_parallel", "split_exact_count", "split_counts_direct",
    "host_cpu", "cache_dir",
]
