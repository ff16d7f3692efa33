"""The statistics' name for the package's argument checks (:mod:`ipcausal._validate`, a leaf).

The modules of :mod:`ipcausal.stats` import the checks from here; every other layer imports
:mod:`ipcausal._validate` (a private module is used only inside the package that holds it).
"""

from __future__ import annotations

from ipcausal._validate import (
    ALTERNATIVES,
    MAX_RESAMPLES,
    as_array,
    as_generator,
    as_sample,
    check_fits,
    choice,
    finite_real,
    int_seed,
    mean_sd,
    open_unit,
    positive_int,
    seed_from,
)

__all__ = ["ALTERNATIVES", "MAX_RESAMPLES", "as_array", "as_sample", "choice", "positive_int", "mean_sd", "open_unit",
           "finite_real", "as_generator", "int_seed", "seed_from", "check_fits"]
