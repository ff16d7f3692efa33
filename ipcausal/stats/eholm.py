"""Family-wise error control for e-values, valid under any dependence: e-Bonferroni and e-Holm.

For m hypotheses with e-values e_1..e_m (E[e_k] ≤ 1 under H_k — e.g. each group's e-process
stopped at its own stopping time):

* **e-Bonferroni** rejects H_k when e_k ≥ m/α; the adjusted e-value is e_k / m.  By Markov's
  inequality and a union bound the family-wise error rate is ≤ α, whatever the dependence.
* **e-Holm** (Vovk & Wang, "E-values: calibration, combination and applications", Annals of
  Statistics 49(3), 2021) is closed testing with the arithmetic-mean e-merging function: the
  intersection hypothesis H_I is rejected when mean(e_i : i ∈ I) ≥ 1/α (the mean of e-values
  is an e-value under any dependence), and H_k is rejected when every H_I with k ∈ I is.  Its
  adjusted e-value is e*_k = min over I ∋ k of mean(e_I); the smallest mean over sets of size
  j + 1 takes e_k and the j smallest other e-values.  Since e*_k ≥ e_k / m, e-Holm rejects
  everything e-Bonferroni rejects, and often more.

Computed from the sorted e-values and their prefix sums (O(m²) for m hypotheses: fine for the
background pairs of a model).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipcausal.stats._validate import open_unit
from ipcausal.stats.results import EMultipleResult

__all__ = ["e_holm", "e_bonferroni"]

_NULL = "H0_k for each hypothesis k (its e-value has expectation ≤ 1); family-wise error ≤ α under any dependence"


def _as_evalues(e_values: Any) -> np.ndarray:
    if isinstance(e_values, (str, bytes)):
        raise TypeError("`e_values` must be a 1-D array of numbers, got a string")
    try:
        e = np.asarray(e_values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("`e_values` must hold numbers only") from None
    if e.ndim != 1 or e.size == 0:
        raise ValueError(f"`e_values` must be a non-empty 1-D array, got shape {e.shape}")
    if np.isnan(e).any() or (e < 0).any():
        raise ValueError("`e_values` must be non-negative numbers (inf allowed), no NaN")
    return e


def _result(e: np.ndarray, adjusted: np.ndarray, alpha: float, method: str) -> EMultipleResult:
    reject = adjusted >= 1.0 / alpha
    return EMultipleResult(reject=tuple(bool(r) for r in reject), e_adjusted=tuple(float(a) for a in adjusted),
                           e_values=tuple(float(v) for v in e), alpha=alpha, n=int(e.size), method=method,
                           null_hypothesis=_NULL)


def e_bonferroni(e_values: Any, *, alpha: float = 0.05) -> EMultipleResult:
    """e-Bonferroni: reject H_k when e_k ≥ m/α (adjusted e-value e_k / m).

    Parameters
    ----------
    e_values : array_like, shape (m,)
        One e-value per hypothesis (non-negative; ``inf`` allowed).
    alpha : float
        Family-wise error rate.

    Returns
    -------
    EMultipleResult

    Examples
    --------
    >>> from ipcausal.stats import e_bonferroni
    >>> e_bonferroni([200, 60, 1, 0.2], alpha=0.05).reject
    (True, False, False, False)
    """
    e = _as_evalues(e_values)
    alpha = open_unit(alpha, "alpha")
    return _result(e, e / e.size, alpha, "e-bonferroni")


def e_holm(e_values: Any, *, alpha: float = 0.05) -> EMultipleResult:
    """e-Holm (Vovk & Wang 2021): closed testing with the mean of e-values; see the module docstring.

    The adjusted e-value of H_k is the smallest mean of e_k together with any j of the other
    e-values (j = 0..m−1); H_k is rejected when it is ≥ 1/α.  Valid under any dependence.

    Parameters
    ----------
    e_values : array_like, shape (m,)
        One e-value per hypothesis (non-negative; ``inf`` allowed).
    alpha : float
        Family-wise error rate.

    Returns
    -------
    EMultipleResult

    Examples
    --------
    >>> from ipcausal.stats import e_holm
    >>> res = e_holm([200, 60, 1, 0.2], alpha=0.05)
    >>> res.reject, [round(a, 2) for a in res.e_adjusted]
    ((True, True, False, False), [65.3, 20.4, 0.6, 0.2])
    """
    e = _as_evalues(e_values)
    alpha = open_unit(alpha, "alpha")
    m = e.size
    order = np.argsort(e, kind="stable")
    a = e[order]
    with np.errstate(invalid="ignore"):
        prefix = np.concatenate(([0.0], np.cumsum(a)))  # prefix[s] = sum of the s smallest
        sizes = np.arange(1, m + 1, dtype=np.float64)
        means = prefix[1:] / sizes  # mean of the s smallest, s = 1..m
    # for sorted position r: sets of size s ≥ r + 1 are best as the s smallest (they contain r);
    # sets of size s ≤ r + 1 as a_r and the s − 1 smallest
    tail_min = np.minimum.accumulate(means[::-1])[::-1]  # tail_min[s-1] = min over sizes ≥ s
    adjusted_sorted = np.empty(m)
    for r in range(m):
        small = (a[r] + prefix[:r + 1]) / sizes[:r + 1]  # sizes 1..r+1
        adjusted_sorted[r] = min(small.min(), tail_min[r])
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return _result(e, adjusted, alpha, "e-holm")
