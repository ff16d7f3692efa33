"""When a kernel runs on more than one thread (shared by the tests that call the Monte Carlo kernels)."""

from __future__ import annotations

__all__ = ["PARALLEL_MIN_WORDS", "PARALLEL_MIN_WORDS_SIMD", "use_threads", "n_threads"]

# work (resamples x words of 64 signs) below which one thread is used: about 6 ms on one thread
# for either kernel.  A second thread halves that on an idle machine but can cost several times
# more when the other core is busy, so short jobs stay on the calling thread.
PARALLEL_MIN_WORDS = 1_250_000  # portable byte tables (n = 1,650: L >= 48,000)
PARALLEL_MIN_WORDS_SIMD = 4_000_000  # AVX-512 (n = 1,650: L >= 154,000)


def n_threads() -> int:
    """numba's thread count (the kernels' parallel width)."""
    import numba

    return int(numba.get_num_threads())


def use_threads(work: int, threads: int | None, min_work: int) -> bool:
    """Whether to run the parallel kernel: ``threads`` forces it (1: serial); else by the work."""
    if threads is not None:
        return threads > 1
    return work >= min_work and n_threads() > 1
