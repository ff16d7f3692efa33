"""Input validation shared by every layer (errors name the parameter in backticks).

A leaf of the package (it imports nothing of ipcausal), so that the statistics, the study layer,
the scorers and the builders check their arguments with the same functions; the statistics reach
it through :mod:`ipcausal._validate` as well.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["ALTERNATIVES", "MAX_RESAMPLES", "as_array", "as_sample", "choice", "positive_int", "mean_sd", "open_unit",
           "finite_real", "as_generator", "int_seed", "seed_from", "available_memory", "check_fits"]

ALTERNATIVES = ("two-sided", "greater", "less")
#: Largest number of resamples accepted: p = (b + 1)/(L + 1) stays exact in float64 and the
#: kernels' 64-bit counters cannot overflow.
MAX_RESAMPLES = 2**53 - 1


def as_array(x: Any, name: str, what: str) -> np.ndarray:
    """``numpy.asarray(x)`` with errors that name ``name`` (ragged input, huge integers).

    ``what`` says what ``x`` should be ("a 1-D array of numbers"); numbers come back as
    float64 (integers beyond the float range raise ``ValueError``), anything else unchanged.
    """
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` must be {what}, got a string")
    try:
        arr = np.asarray(x)
    except ValueError:  # numpy: "setting an array element with a sequence ... inhomogeneous shape"
        raise ValueError(f"`{name}` is ragged (its rows differ in length, or numbers are mixed with "
                         f"lists); it must be {what}") from None
    except Exception as exc:
        raise TypeError(f"`{name}` must be {what} ({type(exc).__name__}: {exc})") from None
    if arr.dtype == object:
        if any(isinstance(v, (list, tuple, np.ndarray)) for v in arr.flat):
            raise ValueError(f"`{name}` is ragged (its rows differ in length, or numbers are mixed with "
                             f"lists); it must be {what}")
        try:
            arr = arr.astype(np.float64)
        except OverflowError:
            raise ValueError(f"`{name}` holds an integer too large for a float (beyond ±1.8e308)") from None
        except (TypeError, ValueError):
            raise TypeError(f"`{name}` must hold numbers only") from None
    return arr


def as_sample(x: Any, name: str, *, min_size: int = 2) -> np.ndarray:
    """A 1-D float64 array of finite values with at least ``min_size`` entries."""
    arr = as_array(x, name, "a 1-D array of numbers")
    if arr.dtype.kind in "USb" or arr.dtype.kind not in "iuf":
        if arr.dtype.kind == "b":
            arr = arr.astype(np.float64)
        else:
            raise TypeError(f"`{name}` must hold numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D, got an array of shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"`{name}` needs at least {min_size} values, got {arr.size}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"`{name}` must be finite; NaN or inf at index {np.flatnonzero(bad)[:5].tolist()}")
    return arr


def choice(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"`{name}` must be one of {', '.join(repr(a) for a in allowed)}; got {value!r}")
    return value


def positive_int(value: Any, name: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"`{name}` must be at most {maximum:,}, got {value:,}")
    return int(value)


def mean_sd(x: np.ndarray) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1) of finite ``x`` without overflow.

    Values near the float maximum make ``x.sum()`` overflow although the mean is finite (and
    squares overflow from 1e154, or vanish below 1e-162), so outside [1e-100, 1e100] both are
    computed on ``x / max|x|`` and scaled back; inside, exactly as numpy computes them.
    """
    scale = float(np.max(np.abs(x))) if x.size else 0.0
    if scale == 0.0 or 1e-100 <= scale <= 1e100:
        return float(x.mean()), (float(x.std(ddof=1)) if x.size > 1 else 0.0)
    y = x / scale
    return float(y.mean()) * scale, (float(y.std(ddof=1)) * scale if x.size > 1 else 0.0)


def open_unit(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a number in (0, 1), got {type(value).__name__}")
    v = float(value)
    if not 0.0 < v < 1.0:
        raise ValueError(f"`{name}` must lie in (0, 1), got {value}")
    return v


def finite_real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(float(value)):
        raise ValueError(f"`{name}` must be a finite number, got {value!r}")
    return float(value)


def as_generator(rng: Any) -> np.random.Generator:
    """``rng`` (int | Generator | None) as a numpy Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0):
        return np.random.default_rng(None if rng is None else int(rng))
    raise TypeError(f"`rng` must be None, a non-negative int or a numpy.random.Generator, got {rng!r}")


def int_seed(rng: Any) -> int:
    """An integer seed from ``rng``: the int itself, else one drawn from the Generator (``None``: fresh).

    For seeds that leave the package (a backend's sampling seed, a seed recorded beside a result):
    ``rng=5`` gives 5, so an int ``rng`` means what a ``seed=5`` meant.

    Examples
    --------
    >>> import numpy as np
    >>> int_seed(5), 0 <= int_seed(np.random.default_rng(0)) < 2**31 - 1
    (5, True)
    """
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return int(rng)
    return int(as_generator(rng).integers(2**31 - 1))


def seed_from(rng: Any) -> int:
    """A 63-bit integer seed drawn from ``rng`` (for the counter-based kernels)."""
    return int(as_generator(rng).integers(0, 2**63 - 1))


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``; else free pages; else ``None``)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os

        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def _gb(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def check_fits(n_resamples: int, bytes_each: int, what: str, name: str = "n_resamples",
               available: int | None = None) -> None:
    """Refuse, before allocating, ``n_resamples`` arrays of ``bytes_each`` bytes per resample that
    would not fit in 80 % of the available memory; the message gives the largest count that fits.

    Examples
    --------
    >>> check_fits(10**6, 48, "the Monte Carlo law", available=2**30)   # 48 MB of 1 GiB: fine
    >>> check_fits(10**9, 48, "the Monte Carlo law", available=2**30)
    Traceback (most recent call last):
    ...
    ValueError: `n_resamples` (--resamples) = 1,000,000,000 does not fit in memory: the Monte Carlo law needs about 44.7 GiB (48 bytes per resample) and 1.0 GiB is available; at most 17,895,697 fit
    """
    avail = available_memory() if available is None else available
    if avail is None:
        return
    need = float(n_resamples) * bytes_each
    room = 0.8 * avail
    if need > room:
        raise ValueError(f"`{name}` (--resamples) = {n_resamples:,} does not fit in memory: {what} needs about "
                         f"{_gb(need)} ({bytes_each} bytes per resample) and {_gb(avail)} is available; at most "
                         f"{int(room // bytes_each):,} fit")
