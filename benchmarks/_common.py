"""Shared helpers for the benchmarks: timing with repeats, peak memory, machine description."""

from __future__ import annotations

import datetime as _dt
import os
import platform
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
    return info
