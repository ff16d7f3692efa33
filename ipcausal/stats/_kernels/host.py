"""This machine as the kernel choice sees it: the CPU model and where numba caches the kernels."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import llvmlite.binding as llvm


def host_cpu() -> str:
    """``model name / LLVM CPU name`` (e.g. ``AMD EPYC / znver4``): what kernel timings are valid for."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    model = line.partition(":")[2].strip()
                    break
    except OSError:
        pass
    return f"{model or platform.processor() or platform.machine() or 'unknown CPU'} / {llvm.get_host_cpu_name()}"


def cache_dir() -> Path:
    """The folder numba writes the kernels' cached machine code to (``NUMBA_CACHE_DIR``, the
    package's ``__pycache__``, or numba's user-wide cache folder when that is read-only)."""
    from ipcausal.stats._kernels.tables import mc_counts_table

    try:
        path = Path(mc_counts_table._cache._cache_path)  # numba's own choice of folder for this module
    except AttributeError:  # pragma: no cover - a numba without that attribute
        path = Path(os.environ.get("NUMBA_CACHE_DIR") or Path(__file__).parent / "__pycache__")
    path.mkdir(parents=True, exist_ok=True)
    return path
