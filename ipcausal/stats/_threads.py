"""Which Monte Carlo sign-flip kernel runs, and on how many threads: chosen by measurement.

Four *families* of work, each with the same variants (``"avx512:1"``, ``"avx512:2"``,
``"portable:1"``, … = kernel and thread count):

* ``"continuous"`` — the p's counts on continuous data (AVX-512 nibble tables or portable byte tables);
* ``"continuous-fused"`` — the p and the interval's (T, V) from one pass (same two kernels);
* ``"lattice"`` — the p's counts on lattice data (AVX-512 or portable popcount);
* ``"lattice-fused"`` — p and interval on lattice data (AVX-512: the nibble pass plus the AVX-512
  popcount counts; portable: one fused popcount pass).

Every variant of a family gives the same counts (the same counter-based stream; tests check it),
so the choice is about speed only.  ``ipcausal._warm`` (run by ``make install``) times every variant
on small calibration inputs (:mod:`ipcausal.stats._calibrate`) and writes the timings beside numba's
cache, keyed by CPU model, numba version and numba's thread count.  :func:`plan` reads them: it
predicts each variant's time at the job's size (piecewise linear in the work between the measured
sizes) and takes the fastest; a parallel variant must beat the best serial one by
``PARALLEL_MARGIN`` (a busy second core costs more than it gives).  Without a cache for this CPU,
the former rule: AVX-512 where it runs, a second thread from ``PARALLEL_MIN_WORDS*`` of work.

``IPCAUSAL_KERNEL`` forces a variant (for benchmarks): ``avx512`` or ``portable``, optionally with a
thread count, e.g. ``avx512:1``, ``portable:2``; ``auto`` (or unset) chooses.
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "PARALLEL_MIN_WORDS", "PARALLEL_MIN_WORDS_SIMD", "FAMILIES", "KERNELS", "Plan", "choose", "plan",
    "use_threads", "n_threads", "run", "forced", "cache_file", "cache_key", "load_timings", "reset", "simd_ok",
]

# the former rule (no measurement for this CPU): work (resamples x words of 64 signs) below which
# one thread is used, about 6 ms on one thread of the Intel machine the kernels were written on
PARALLEL_MIN_WORDS = 1_250_000  # portable byte tables (n = 1,650: L >= 48,000)
PARALLEL_MIN_WORDS_SIMD = 4_000_000  # AVX-512 (n = 1,650: L >= 154,000)

FAMILIES = ("continuous", "continuous-fused", "lattice", "lattice-fused")
KERNELS = ("avx512", "portable")
PARALLEL_MARGIN = 0.05  # a parallel variant is taken only when predicted >= 5 % faster than serial
CACHE_NAME = "ipcausal-kernel-choice.json"
CACHE_FORMAT = 1
ENV = "IPCAUSAL_KERNEL"


@dataclass(frozen=True)
class Plan:
    """One variant: ``kernel`` (``"avx512"`` / ``"portable"``), ``threads`` (1: the serial kernel)
    and where the choice came from (``"forced"``, ``"measured"``, ``"rule"``)."""

    kernel: str
    threads: int
    source: str = "rule"

    @property
    def simd(self) -> bool:
        return self.kernel == "avx512"

    @property
    def parallel(self) -> bool:
        return self.threads > 1

    @property
    def name(self) -> str:
        return f"{self.kernel}:{self.threads}"


@functools.cache
def simd_ok() -> bool:
    """Whether the AVX-512 kernels run here (checked once: CPU flags, then one tiny call each)."""
    from ipcausal.stats import _kernels as K

    if not K.simd_available():
        return False
    try:  # compiling the intrinsics is the real test (an LLVM without them fails)
        tab, n_words = K.nibble_tables(np.ones(3))
        K.mc_counts_simd(tab, n_words, 0.0, 0.0, 0.0, 16, 1)
        seg = K.popcount_segments(np.ones(3, dtype=np.int64))
        K.mc_counts_popcount_simd(K.segment_starts(seg[0], 1), seg[1], seg[2], 1, 3, 3, 16, 1)
    except Exception as exc:  # depends on the CPU and LLVM (tested by monkeypatching)
        import warnings

        warnings.warn(f"AVX-512 kernel unavailable ({exc}); using the portable one",
                      RuntimeWarning, stacklevel=3)
        return False
    return True


def n_threads() -> int:
    """numba's thread count (the kernels' parallel width)."""
    import numba

    return int(numba.get_num_threads())


def use_threads(work: int, threads: int | None, min_work: int) -> bool:
    """Whether to run the parallel kernel: ``threads`` forces it (1: serial); else by the work (the former rule)."""
    if threads is not None:
        return threads > 1
    return work >= min_work and n_threads() > 1


def run(p: Plan, serial: Any, parallel: Any, *args: Any) -> Any:
    """Call ``serial(*args)`` or, for a parallel plan, ``parallel(*args)`` on ``p.threads`` threads."""
    if not p.parallel:
        return serial(*args)
    import numba

    most = int(numba.config.NUMBA_NUM_THREADS)
    if most < 2:  # numba has one thread: the parallel kernel would run serially anyway
        return serial(*args)
    now = numba.get_num_threads()
    want = max(2, min(p.threads, most))
    if want == now:
        return parallel(*args)
    numba.set_num_threads(want)
    try:
        return parallel(*args)
    finally:
        numba.set_num_threads(now)


# ---------------------------------------------------------------------------------------------
def _parse_variant(text: str) -> tuple[str, int | None]:
    kernel, _, threads = text.strip().lower().partition(":")
    kernel = {"avx-512": "avx512", "simd": "avx512"}.get(kernel, kernel)
    if kernel not in KERNELS:
        raise ValueError(f"`{ENV}` must be 'auto', 'avx512' or 'portable', optionally with ':THREADS' "
                         f"(e.g. 'avx512:1'), got {text!r}")
    if not threads:
        return kernel, None
    if not threads.isdigit() or int(threads) < 1:
        raise ValueError(f"`{ENV}`: the thread count after ':' must be a positive integer, got {text!r}")
    return kernel, int(threads)


def forced() -> tuple[str, int | None] | None:
    """``(kernel, threads or None)`` from ``IPCAUSAL_KERNEL``, or ``None`` for ``auto``/unset."""
    text = os.environ.get(ENV, "").strip()
    if text.lower() in ("", "auto"):
        return None
    return _parse_variant(text)


def _predict(work: list[float], seconds: list[float], at: float) -> float:
    """Piecewise-linear time at ``at`` through the measured points (the end segments extended)."""
    pts = sorted(zip(work, seconds))
    if len(pts) == 1:
        w, t = pts[0]
        return t * at / w if w > 0 else t
    for (w0, t0), (w1, t1) in zip(pts, pts[1:]):
        if at <= w1 or (w1, t1) == pts[-1]:
            slope = max((t1 - t0) / (w1 - w0), 0.0) if w1 > w0 else 0.0
            return max(t0 + slope * (at - w0), 0.0)
    return pts[-1][1]  # pragma: no cover - the loop always returns


def choose(timings: dict[str, Any], family: str, work: float, *, kernels: tuple[str, ...] = KERNELS,
           max_threads: int | None = None, parallel: bool | None = None) -> Plan | None:
    """The fastest predicted variant of ``family`` at ``work`` from recorded ``timings``, or ``None``.

    ``timings``: ``{"families": {family: {"work": [w, ...], "seconds": {"avx512:1": [t, ...], ...}}}}``
    (what :mod:`ipcausal.stats._calibrate` writes; a variant may hold ``None`` where it was not
    run).  Only ``kernels``, thread counts up to ``max_threads`` and, when ``parallel`` is given,
    only serial (``False``) or only parallel (``True``) variants are considered.  A parallel
    variant wins only when it is predicted ``PARALLEL_MARGIN`` faster than the best serial one.

    Examples
    --------
    >>> t = {"families": {"continuous": {"work": [2.6e6], "seconds": {
    ...     "avx512:1": [3.31e-3], "avx512:2": [31.96e-3], "portable:1": [17.84e-3], "portable:2": [42.98e-3]}}}}
    >>> choose(t, "continuous", 2.6e6).name  # the Intel figures of issue 33
    'avx512:1'
    """
    fam = (timings.get("families") or {}).get(family)
    if not fam:
        return None
    work_points = [float(w) for w in fam.get("work", [])]
    best: dict[bool, tuple[float, Plan]] = {}
    for name, secs in (fam.get("seconds") or {}).items():
        try:
            kernel, threads = _parse_variant(name)
        except ValueError:
            continue
        if kernel not in kernels or threads is None or (max_threads is not None and threads > max_threads):
            continue
        if parallel is not None and (threads > 1) != parallel:
            continue
        if secs is None or len(secs) != len(work_points) or any(s is None or not math.isfinite(s) for s in secs):
            continue
        t = _predict(work_points, [float(s) for s in secs], float(work))
        key = threads > 1
        cand = (t, Plan(kernel, threads, "measured"))
        if key not in best or (t, kernel != "avx512", threads) < (best[key][0], best[key][1].kernel != "avx512",
                                                                  best[key][1].threads):
            best[key] = cand
    if not best:
        return None
    if True in best and (False not in best or best[True][0] < (1.0 - PARALLEL_MARGIN) * best[False][0]):
        return best[True][1]
    return best[False][1]


# ---------------------------------------------------------------------------------------------
def cache_key() -> str:
    """``CPU model / LLVM CPU name | numba version | numba's thread count``: what a timing is valid for."""
    import numba

    from ipcausal.stats._kernels import host_cpu

    return f"{host_cpu()} | numba {numba.__version__} | {int(numba.config.NUMBA_NUM_THREADS)} threads"


def cache_file() -> Path:
    """Where the timings live: the folder numba caches the kernels in (``NUMBA_CACHE_DIR`` or the
    package's ``__pycache__``, else numba's user-wide cache folder)."""
    from ipcausal.stats._kernels import cache_dir

    return cache_dir() / CACHE_NAME


@functools.cache
def load_timings() -> dict[str, Any] | None:
    """This CPU's recorded timings (``None`` when absent, unreadable, or written for another CPU/numba)."""
    try:
        data = json.loads(cache_file().read_text(encoding="utf-8"))
        entry = data.get("entries", {}).get(cache_key()) if data.get("format") == CACHE_FORMAT else None
    except (OSError, ValueError, AttributeError):
        return None
    return entry if isinstance(entry, dict) else None


@functools.lru_cache(maxsize=4096)
def _measured(family: str, work: int, kernels: tuple[str, ...], max_threads: int, parallel: bool | None) -> Plan | None:
    """:func:`choose` on this CPU's timings, remembered (it runs on every Monte Carlo call)."""
    timings = load_timings()
    if timings is None:
        return None
    return choose(timings, family, work, kernels=kernels, max_threads=max_threads, parallel=parallel)


def reset() -> None:
    """Forget the timings read and the choices made (after a calibration, or in tests)."""
    load_timings.cache_clear()
    _measured.cache_clear()


def _rule(work: int, kernel: str) -> Plan:
    """The rule used before measurement: AVX-512 where it runs; a second thread from a fixed work."""
    least = PARALLEL_MIN_WORDS_SIMD if kernel == "avx512" else PARALLEL_MIN_WORDS
    return Plan(kernel, n_threads() if (work >= least and n_threads() > 1) else 1, "rule")


def plan(family: str, work: int, *, threads: int | None = None, simd: bool | None = None) -> Plan:
    """The variant that runs ``work`` (resamples x 64-sign words) of ``family``.

    ``simd`` / ``threads`` given by the caller (tests, benchmarks) win; then ``IPCAUSAL_KERNEL``;
    then this CPU's measured timings; then the former rule.  ``simd=None`` means: AVX-512 allowed
    where it runs (:func:`simd_ok`); ``threads``: 1 the serial kernel, 2+ the parallel one.
    """
    usable = simd is not False and simd_ok()
    kernels: tuple[str, ...] = ("avx512",) if simd else (KERNELS if usable else ("portable",))
    env = forced() if simd is None else None
    if env is not None:
        if env[0] == "avx512" and not usable:
            raise ValueError(f"`{ENV}`={os.environ.get(ENV)!r} asks for the AVX-512 kernels, but they do not run "
                             "here (no AVX-512F, IPCAUSAL_PORTABLE_KERNELS set, or numba compiles for a named CPU)")
        kernels = (env[0],)
        threads = env[1] if threads is None else threads
    if threads is not None:
        threads = max(1, int(threads))
        if len(kernels) == 1:
            return Plan(kernels[0], threads, "forced")
    if load_timings() is not None:
        got = _measured(family, int(work), kernels, n_threads(), None if threads is None else threads > 1)
        if got is not None:
            return got if threads is None else Plan(got.kernel, threads, "forced")
    if threads is not None:
        return Plan(kernels[0], threads, "forced")
    return _rule(work, kernels[0])
