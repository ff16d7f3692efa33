"""Shared helpers for the benchmarks: timing with repeats, peak memory, machine description."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any


def timeit(fn: Callable[[], Any], repeats: int = 7, warmup: int = 1) -> dict[str, Any]:
    """Median, min and max wall time (seconds) of ``fn()`` over ``repeats`` runs, and its last value."""
    value = None
    for _ in range(warmup):
        value = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return {"median": statistics.median(times), "min": min(times), "max": max(times), "n": repeats, "value": value}


def fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_row(t: dict[str, Any]) -> str:
    return f"{fmt_time(t['median'])} ({fmt_time(t['min'])}–{fmt_time(t['max'])}, n={t['n']})"


def run_python(code: str, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    """Run ``code`` in a fresh interpreter; return its stdout (raises on failure)."""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                         env=dict(os.environ, **(env or {})))
    if res.returncode != 0:
        raise RuntimeError(res.stderr[-2000:])
    return res.stdout


def machine() -> dict[str, str]:
    """CPU model and counts (lscpu), load, library versions, date."""
    info: dict[str, str] = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            key, _, val = line.partition(":")
            if key.strip() in ("Model name", "CPU(s)", "Thread(s) per core", "L2 cache", "L3 cache", "Flags"):
                val = val.strip()
                if key.strip() == "Flags":
                    val = " ".join(f for f in val.split() if f.startswith(("avx512f", "avx2", "popcnt", "bmi2")))
                info[key.strip()] = val
    except (OSError, subprocess.SubprocessError):
        info["Model name"] = platform.processor() or "unknown"
    try:
        info["load average (1, 5, 15 min)"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        pass
    import numba
    import numpy
    import scipy

    versions = {"python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
                "numba": numba.__version__}
    for name in ("statsmodels", "pandas"):
        try:
            versions[name] = __import__(name).__version__
        except ImportError:
            versions[name] = "not installed"
    import ipcausal

    versions["ipcausal"] = ipcausal.__version__
    info["versions"] = ", ".join(f"{k} {v}" for k, v in versions.items())
    info["date"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    info["numba threads"] = str(numba.get_num_threads())
    info["kernel auto chose"] = kernel_choice()
    return info


def kernel_choice(n: int = 1650, n_resamples: int = 100_000) -> str:
    """Which Monte Carlo variant ``auto`` runs per family at n differences and L resamples, and
    where the choice came from (the warm-up's timings for this CPU, an ``IPCAUSAL_KERNEL`` override,
    or the former rule)."""
    from ipcausal.stats import _threads as T

    work = (n + 63) // 64 * n_resamples
    picks = {fam: T.plan(fam, work) for fam in T.FAMILIES}
    timings = T.load_timings()
    src = next(iter(picks.values())).source
    if src == "measured" and timings is not None:
        where = f"measured by the warm-up {timings.get('measured_at', '?')} at load {timings.get('load', '?')}"
    elif src == "forced":
        where = f"forced by IPCAUSAL_KERNEL={os.environ.get('IPCAUSAL_KERNEL')}"
    else:
        where = "the former rule (no timings for this CPU)"
    text = ", ".join(f"{fam} {p.name}" for fam, p in picks.items())
    return f"{text} (n = {n:,}, L = {n_resamples:,}; {where})"


def load() -> str:
    """The 1, 5 and 15 minute load averages, as text."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def interleaved(fns: dict[str, Callable[[], Any]], repeats: int = 7, warmup: int = 1) -> dict[str, dict[str, Any]]:
    """Like :func:`timeit` for several callables at once, interleaved in a shuffled order each round (a
    burst of load from another process touches them all alike): per name, min, median and max
    seconds and the last value."""
    values: dict[str, Any] = {}
    for name, fn in fns.items():
        for _ in range(warmup):
            values[name] = fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    order = random.Random(0)  # a fresh order each round: no callable always follows the same one
    for _ in range(repeats):       # (a two-thread run leaves the next call a busy second core)
        for name in order.sample(names, len(names)):
            t0 = time.perf_counter()
            values[name] = fns[name]()
            times[name].append(time.perf_counter() - t0)
    return {name: {"median": statistics.median(ts), "min": min(ts), "max": max(ts), "n": repeats, "value": values[name]}
            for name, ts in times.items()}
