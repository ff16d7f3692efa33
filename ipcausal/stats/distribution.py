"""The free-text test of Definition 1: do a pair's two sides draw their responses from one distribution?

Data: for each pair, r ≥ 2 sampled responses per side and a similarity s(·, ·) between any two
responses, given as the (2r × 2r) matrix of the pair's 2r responses (the first r from side i,
the last r from side j).

Pair statistic: mean within-side similarity − mean cross-side similarity, with the diagonal
(a response with itself) left out: (W_i + W_j)/2 − C, W = mean over the r(r − 1)/2 unordered
pairs of one side, C = mean over the r² cross pairs.  This is half the unbiased MMD² estimate
for the kernel s; the diagonal is excluded so that a similarity which does not give a
response 1 with itself (an LLM judge) changes nothing, and the estimate is unbiased (0 in
expectation under H0).  Total statistic: the mean over pairs.

H0: for each pair, the 2r responses are exchangeable across the two sides (P(Y | do(b_i)) =
P(Y | do(b_j)) given the prompt).  Randomisation: each pair's 2r responses are split into two
sides of r uniformly at random (C(2r, r) splits), independently across pairs; the unit of
randomisation is the response within its pair.  One-sided: a large statistic says the sides
differ.  Exact when the product of C(2r, r)/2 over the pairs is small, else Monte Carlo with
p = (b + 1)/(L + 1).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats._threads import n_threads
from ipcausal.stats._validate import as_array, as_generator, choice, positive_int, seed_from
from ipcausal.stats.results import MMDTestResult

K = lazy_module("ipcausal.stats._kernels")  # numba is imported on the first kernel call

__all__ = ["mmd_permutation_test", "similarity_matrices", "METHODS"]

METHODS = ("auto", "exact", "monte-carlo")
DEFAULT_RESAMPLES = 100_000
AUTO_EXACT_MAX = 200_000
MAX_EXACT = 100_000_000
MAX_TABLE_SPLITS = 2048  # C(2r-1, r-1) up to this (r <= 7) uses the per-pair tables
MAX_TABLE_BYTES = 256 << 20
PARALLEL_MIN_STEPS = 4_000_000  # resamples x pairs from which two threads pay off
_REL_TOL = 1e-9
_SYM_TOL = 1e-9

NULL_HYPOTHESIS = ("H0: within each pair the 2r responses are exchangeable across the two sides "
                   "(one response distribution for both backgrounds) against H1: the sides differ "
                   "(within-side responses more alike than cross-side ones)")


def _as_similarities(similarity: Any) -> np.ndarray:
    arr = as_array(similarity, "similarity", "an array of shape (n_pairs, 2r, 2r)")
    if arr.dtype.kind not in "iufb":
        raise TypeError(f"`similarity` must hold numbers, got dtype {arr.dtype}")
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2]:
        raise ValueError(f"`similarity` must have shape (n_pairs, 2r, 2r), got {arr.shape}")
    if arr.shape[0] < 1:
        raise ValueError("`similarity` needs at least one pair")
    m = arr.shape[1]
    if m % 2 or m < 4:
        raise ValueError(f"`similarity` matrices must be 2r × 2r with r ≥ 2 responses per side, got {m} × {m}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    off = ~np.eye(m, dtype=bool)
    vals = arr[:, off]
    bad = ~np.isfinite(vals).all(axis=1)
    if bad.any():
        raise ValueError(f"`similarity` must be finite off the diagonal; NaN or inf in pair(s) "
                         f"{np.flatnonzero(bad)[:10].tolist()}")
    asym = np.abs(arr - arr.transpose(0, 2, 1)).max(axis=(1, 2))
    tol = _SYM_TOL * np.maximum(1.0, np.abs(vals).max(axis=1))
    bad = asym > tol
    if bad.any():
        raise ValueError(f"`similarity` matrices must be symmetric; not in pair(s) {np.flatnonzero(bad)[:10].tolist()}")
    return arr


def split_masks(r: int) -> np.ndarray:
    """Bit masks of side X for the C(2r − 1, r − 1) splits with response 0 on side X (first: 0..r−1)."""
    out = [1 | sum(1 << j for j in c) for c in itertools.combinations(range(1, 2 * r), r - 1)]
    return np.array(out, dtype=np.int64)


def mmd_permutation_test(
    similarity: Any,
    *,
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    method: str = "auto",
    _threads: int | None = None,
) -> MMDTestResult:
    """Permutation test of "the two sides of every pair draw from one response distribution".

    H0: within each pair the 2r responses are exchangeable across the sides.  The unit of
    randomisation is the pair's response: each pair's 2r responses are split into two sides of
    r uniformly at random, independently across pairs.  One-sided (large = sides differ).

    Parameters
    ----------
    similarity : array_like, shape (n_pairs, 2r, 2r)
        Per pair, the symmetric similarity matrix of its 2r responses: rows/columns 0..r−1 are
        side i's samples, r..2r−1 side j's; r ≥ 2.  The diagonal is not used.  One matrix of
        shape (2r, 2r) is one pair.
    n_resamples : int or None
        Monte Carlo resamples L (default 100,000).
    rng : int, numpy.random.Generator or None
        Seed or generator for Monte Carlo (identical on any number of threads).
    method : {"auto", "exact", "monte-carlo"}
        ``"exact"`` enumerates all Π C(2r, r)/2 joint splits (at most 10^8); ``"auto"`` does
        so up to 200,000, else Monte Carlo.

    Returns
    -------
    MMDTestResult

    Examples
    --------
    >>> import numpy as np
    >>> from ipcausal.stats.distribution import mmd_permutation_test
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(30, 6, 2)); x[:, 3:] += 1.0         # side j shifted, r = 3
    >>> d2 = ((x[:, :, None, :] - x[:, None, :, :]) ** 2).sum(-1)
    >>> res = mmd_permutation_test(np.exp(-d2 / 2), rng=1, n_resamples=9_999)
    >>> res.r, res.pvalue < 0.05
    (3, True)
    """
    sim = _as_similarities(similarity)
    method = choice(method, "method", METHODS)
    n_resamples = DEFAULT_RESAMPLES if n_resamples is None else positive_int(n_resamples, "n_resamples")
    rng = as_generator(rng)  # validated here, drawn from only on the Monte Carlo route
    n, m, _ = sim.shape
    r = m // 2
    a_coef = 1.0 / (r * (r - 1)) + 1.0 / r**2  # statistic = a · (same-side sum) − b · (all-pairs sum)
    b_coef = 1.0 / r**2
    n_split = math.comb(2 * r - 1, r - 1)
    log_total = n * math.log10(n_split)
    n_total = n_split**n if log_total < 18 else None
    if method == "exact" and (n_total is None or n_total > MAX_EXACT):
        raise ValueError(f"`method`='exact' is not feasible here: ({n_split})^{n} splits "
                         f"(more than {MAX_EXACT:,}); use method='monte-carlo'")
    use_exact = method == "exact" or (method == "auto" and n_total is not None and n_total <= AUTO_EXACT_MAX)
    table = n_split <= MAX_TABLE_SPLITS and 8 * n * n_split <= MAX_TABLE_BYTES
    if use_exact and not table:
        raise ValueError(f"`method`='exact' needs r ≤ 7 responses per side, got r = {r}")

    iu = np.triu_indices(m, 1)
    upper = sim[:, iu[0], iu[1]]
    same = (iu[0] < r) == (iu[1] < r)
    totals = upper.sum(axis=1)
    pair_stats = a_coef * upper[:, same].sum(axis=1) - b_coef * totals
    t_obs = float(pair_stats.sum())
    spread = np.abs(upper).sum(axis=1) * (a_coef + b_coef)
    thr = t_obs - _REL_TOL * max(float(spread.sum()), np.finfo(np.float64).tiny)
    common = dict(statistic=t_obs / n, alternative="greater", n=n, r=r, null_hypothesis=NULL_HYPOTHESIS,
                  pair_statistics=tuple(pair_stats.tolist()))

    if table:
        tab = K.split_tables(sim, split_masks(r), a_coef, b_coef)
        t_obs_tab = float(tab[:, 0].sum())  # the observed split, summed as the kernels sum
        thr = min(thr, t_obs_tab - (t_obs - thr))
    if use_exact:
        ge = K.split_exact_count(tab, thr)
        return MMDTestResult(pvalue=ge / float(n_total), method="exact-enumeration", n_resamples=None,
                             pvalue_se=0.0, **common)
    seed = seed_from(rng)
    parallel = (_threads > 1) if _threads is not None else (
        n_resamples * n >= PARALLEL_MIN_STEPS and n_threads() > 1)
    if table:
        kern = K.split_counts_parallel if parallel else K.split_counts
        ge = int(kern(tab, thr, n_resamples, seed))
    else:
        ge = int(K.split_counts_direct(sim, totals, r, a_coef, b_coef, thr, n_resamples, seed))
    p = (ge + 1) / (n_resamples + 1)
    return MMDTestResult(pvalue=p, method="monte-carlo", n_resamples=n_resamples,
                         pvalue_se=math.sqrt(p * (1 - p) / (n_resamples + 1)), **common)


def similarity_matrices(
    samples_i: Sequence[Sequence[Any]],
    samples_j: Sequence[Sequence[Any]],
    similarity: Callable[[Any, Any], float],
) -> np.ndarray:
    """The (n_pairs, 2r, 2r) similarity array of :func:`mmd_permutation_test`, each unordered
    pair of distinct responses scored once (identical responses too: a cache keyed on the texts).

    Parameters
    ----------
    samples_i, samples_j : sequence of sequences
        Per pair, the r sampled responses of side i and of side j (the same r everywhere).
    similarity : callable
        ``similarity(a, b) -> float``, assumed symmetric; the diagonal is set to 1.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> from ipcausal.stats.distribution import similarity_matrices
    >>> same = lambda a, b: float(a == b)
    >>> similarity_matrices([["yes", "yes"]], [["no", "yes"]], same)[0]
    array([[1., 1., 0., 1.],
           [1., 1., 0., 1.],
           [0., 0., 1., 0.],
           [1., 1., 0., 1.]])
    """
    if not callable(similarity):
        raise TypeError(f"`similarity` must be a callable (a, b) -> float, got {type(similarity).__name__}")
    for name, s in (("samples_i", samples_i), ("samples_j", samples_j)):
        if isinstance(s, (str, bytes)) or not hasattr(s, "__len__"):
            raise TypeError(f"`{name}` must be a sequence of per-pair response lists")
    if len(samples_i) != len(samples_j):
        raise ValueError(f"`samples_i` and `samples_j` must have one entry per pair; got {len(samples_i)} "
                         f"and {len(samples_j)}")
    if len(samples_i) == 0:
        raise ValueError("`samples_i` must not be empty")
    r = None
    for idx, (si, sj) in enumerate(zip(samples_i, samples_j)):
        if isinstance(si, (str, bytes)) or isinstance(sj, (str, bytes)):
            raise TypeError(f"`samples_i`/`samples_j` entry {idx} must be a list of responses, not a string")
        if r is None:
            r = len(si)
        if len(si) != r or len(sj) != r:
            raise ValueError(f"every pair needs the same number r of samples per side; pair {idx} has "
                             f"{len(si)} and {len(sj)}, pair 0 has {r}")
    if r is None or r < 2:
        raise ValueError(f"`samples_i` needs r ≥ 2 samples per side, got {r}")
    cache: dict[tuple[Any, Any], float] = {}
    out = np.empty((len(samples_i), 2 * r, 2 * r))
    for p, (si, sj) in enumerate(zip(samples_i, samples_j)):
        resp = list(si) + list(sj)
        out[p, np.arange(2 * r), np.arange(2 * r)] = 1.0
        for i in range(2 * r):
            for j in range(i + 1, 2 * r):
                a, b = resp[i], resp[j]
                key = (a, b) if (str(type(a)), repr(a)) <= (str(type(b)), repr(b)) else (b, a)
                if key not in cache:
                    v = float(similarity(*key))
                    if not math.isfinite(v):
                        raise ValueError(f"`similarity` returned {v} for pair {p}")
                    cache[key] = v
                out[p, i, j] = out[p, j, i] = cache[key]
    return out
