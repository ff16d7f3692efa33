"""This CPU's choice of Monte Carlo kernel variant: the door the warm-up step uses (``python -m ipcausal._warm``).

:func:`calibrate` times the kernel variants on small inputs and stores the choice beside numba's
cache (:func:`cache_file`); :func:`describe` says which variant each kernel family runs.  The
implementation is private to :mod:`ipcausal.stats` (``_calibrate``, ``_threads``).
"""

from __future__ import annotations

from ipcausal.stats._calibrate import calibrate, describe
from ipcausal.stats._threads import cache_file

__all__ = ["calibrate", "describe", "cache_file"]
