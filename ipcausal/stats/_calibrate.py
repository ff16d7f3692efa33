"""Timing every Monte Carlo kernel variant on this CPU, for the measured choice of :mod:`._threads`.

:func:`calibrate` (run by ``python -m ipcausal._warm``, i.e. by ``make install``) times each family's
variants — AVX-512 (where it runs) and portable kernels, on 1 thread and on 2, 4, … up to numba's
thread count — on small calibration inputs: n = 1,650 differences (continuous, and ratings on
−4..4 for the lattice families) at two sizes, L = 16,384 and 65,536 resamples (short jobs: on a
busy machine fewer of them lose their core half-way).  The rounds are interleaved in a shuffled
order, so a burst of load from another process touches every variant alike, and each variant
keeps its lower quartile (the third best of nine rounds): robust to rounds that lost their core
to another process, yet it still shows a parallel variant that waits for a busy core most of the
time.  ``ROUNDS`` rounds, or ``MIN_ROUNDS`` once ``BUDGET_S`` seconds
have passed (a loaded machine).  The timings go to the cache file of
:func:`ipcausal.stats._threads.cache_file` (beside numba's cache), under this CPU's
:func:`ipcausal.stats._threads.cache_key`; other CPUs' entries in the file are kept.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ipcausal._jsonio import write_json
from ipcausal.stats import _threads as T

__all__ = ["calibrate", "measure", "variants", "describe", "CAL_N", "CAL_SIZES"]

CAL_N = 1650  # differences of the calibration inputs (26 words of 64 signs)
CAL_SIZES = (16_384, 65_536)  # resamples: short jobs, so that fewer of them lose their core mid-way
ROUNDS = 9
MIN_ROUNDS = 5
BUDGET_S = 10.0


def variants(simd: bool, max_threads: int) -> list[str]:
    """Variant names to time: each kernel on 1 thread and on 2, 4, … and ``max_threads`` threads."""
    counts = [1] + sorted({t for t in (2, 4, 8, 16, 32, 64) if t < max_threads} | ({max_threads} - {1}))
    kernels = ("avx512", "portable") if simd else ("portable",)
    return [f"{k}:{t}" for k in kernels for t in counts]


def _jobs(n: int) -> dict[str, Callable[[str, int], Any]]:
    """Per family, ``job(variant, L)``: one call of that family's kernel on the calibration input."""
    from ipcausal.stats.fused import counts_and_ends
    from ipcausal.stats.permutation import _mc_counts, lattice_units

    rng = np.random.default_rng(33)
    x = rng.normal(0.05, 1.0, n)
    a = np.abs(x) / np.abs(x).max()
    s = np.sign(x)
    xl = rng.integers(-4, 5, n).astype(float)
    nz = xl != 0
    al = np.abs(xl[nz]) / 4.0
    sl = np.sign(xl[nz])
    k = lattice_units(al)
    t_c = float(s @ a)
    bounds = (abs(t_c) - 1e-9, t_c - 1e-9, t_c + 1e-9)

    def parse(v: str) -> tuple[bool, int]:
        kernel, threads = T._parse_variant(v)
        return kernel == "avx512", int(threads or 1)

    def cont(v: str, big_l: int) -> Any:
        simd, th = parse(v)
        return _mc_counts(a, s, big_l, 1, threads=th, simd=simd)

    def cont_fused(v: str, big_l: int) -> Any:
        simd, th = parse(v)
        return counts_and_ends(x, a, s, None, bounds, big_l, 1, simd, big_l // 40, threads=th)

    def lat(v: str, big_l: int) -> Any:
        simd, th = parse(v)
        return _mc_counts(al, sl, big_l, 1, k=k, threads=th, simd=simd)

    def lat_fused(v: str, big_l: int) -> Any:
        simd, th = parse(v)
        return counts_and_ends(xl, al, sl, k, (0.0, 0.0, 0.0), big_l, 1, simd, big_l // 40, threads=th)

    return {"continuous": cont, "continuous-fused": cont_fused, "lattice": lat, "lattice-fused": lat_fused}


def measure(*, rounds: int = ROUNDS, sizes: tuple[int, ...] = CAL_SIZES, n: int = CAL_N,
            families: tuple[str, ...] = T.FAMILIES) -> dict[str, Any]:
    """Median seconds of every variant of every family at each size (one entry of the cache file)."""
    from ipcausal.stats.fused import simd_ok

    simd = simd_ok()
    names = variants(simd, T.n_threads())
    jobs = _jobs(n)
    cells = [(f, v, big_l) for f in families for v in names for big_l in sizes]
    for f, v, big_l in cells:  # compile (or load) every kernel and touch its memory once
        jobs[f](v, min(big_l, 4096))
    times: dict[tuple[str, str, int], list[float]] = {c: [] for c in cells}
    order = np.random.default_rng(0)
    start = time.perf_counter()
    for r in range(rounds):
        if r >= min(MIN_ROUNDS, rounds) and time.perf_counter() - start > BUDGET_S:
            break
        for i in order.permutation(len(cells)):
            f, v, big_l = cells[i]
            t0 = time.perf_counter()
            jobs[f](v, big_l)
            times[(f, v, big_l)].append(time.perf_counter() - t0)
    n_words = (n + 63) // 64
    fams: dict[str, Any] = {}
    for f in families:
        fams[f] = {"work": [n_words * big_l for big_l in sizes],
                   "seconds": {v: [_quartile(times[(f, v, big_l)]) for big_l in sizes] for v in names},
                   "best": {v: [min(times[(f, v, big_l)]) for big_l in sizes] for v in names}}
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - platform without a load average
        load = []
    done = len(next(iter(times.values())))
    return {"families": fams, "n": n, "sizes": list(sizes), "rounds": done, "load": load,
            "measured_at": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def _quartile(ts: list[float]) -> float:
    """The lower quartile of a few timings (the second smallest of four to seven)."""
    ts = sorted(ts)
    return ts[min(len(ts) - 1, len(ts) // 4)]


def _write(entry: dict[str, Any]) -> None:
    path = T.cache_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != T.CACHE_FORMAT or not isinstance(data.get("entries"), dict):
            data = {}
    except (OSError, ValueError, AttributeError):
        data = {}
    data = {"format": T.CACHE_FORMAT, "entries": {**data.get("entries", {}), T.cache_key(): entry}}
    write_json(path, data)  # atomic (ipcausal._jsonio)


def calibrate(*, rounds: int = ROUNDS, sizes: tuple[int, ...] = CAL_SIZES, n: int = CAL_N,
              write: bool = True) -> dict[str, Any]:
    """Measure (:func:`measure`), store under this CPU's key (``write``) and return the entry."""
    entry = measure(rounds=rounds, sizes=sizes, n=n)
    if write:
        _write(entry)
        T.reset()
    return entry


def describe(entry: dict[str, Any], n: int = CAL_N, n_resamples: int = 100_000) -> dict[str, str]:
    """Per family, the variant ``auto`` takes at ``n`` differences and ``n_resamples`` from ``entry``."""
    work = (n + 63) // 64 * n_resamples
    out = {}
    for f in T.FAMILIES:
        got = T.choose(entry, f, work, max_threads=T.n_threads())
        out[f] = got.name if got is not None else "(not measured)"
    return out
