"""Bounded summaries of a sample and of a test's null distribution, for reports and plots.

:func:`null_distribution` gives the null distribution *of the route that produced p*: the
exact pmf from the lattice DP or from enumerating every sign vector, the Binomial(n, 1/2) pmf of
the sign test, and for Monte Carlo the first draws of the very stream of sign vectors that gave
p (replayed from the result's ``seed`` in one kernel pass, O(draws + n) memory).  :func:`sample_summary` keeps the values themselves up
to a bound and a histogram beyond it, so a Report stays small for any n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ipcausal._lazy import lazy_module
from ipcausal.stats._validate import as_sample, positive_int
from ipcausal.stats.results import Result, SignFlipResult, SignTestResult

_special = lazy_module("scipy.special")  # imported on first use
K = lazy_module("ipcausal.stats._kernels")  # numba is imported on the first kernel call

__all__ = ["Distribution", "null_distribution", "sample_summary", "MAX_VALUES", "MC_DRAWS"]

MAX_VALUES = 5000  # a sample larger than this is kept as a histogram
MAX_SUPPORT = 2000  # a pmf with more points than this is binned
MC_DRAWS = 4096  # Monte Carlo draws replayed for the picture (two chunks of the stream)
_BINS = 60


@dataclass(frozen=True)
class Distribution(Result):
    """A bounded description of a distribution.

    ``kind`` says how to read ``x`` and ``weights``:

    * ``"sample"`` — ``x`` are the values themselves (``weights`` empty);
    * ``"histogram"`` — ``x`` are ``len(weights) + 1`` bin edges, ``weights`` the counts;
    * ``"pmf"`` — ``x`` the support points, ``weights`` their probabilities.

    ``label`` says what it is in words (e.g. "exact null (lattice DP) of mean Δ").
    """

    kind: str
    x: tuple[float, ...]
    weights: tuple[float, ...] = ()
    label: str = ""

    @classmethod
    def from_dict(cls, d: dict) -> "Distribution":
        """Inverse of :meth:`to_dict`."""
        return cls(kind=str(d["kind"]), x=tuple(float(v) for v in d["x"]),
                   weights=tuple(float(v) for v in d.get("weights", ())), label=str(d.get("label", "")))


def _histogram(values: np.ndarray, label: str, bins: int = _BINS) -> Distribution:
    counts, edges = np.histogram(values, bins=bins)
    return Distribution("histogram", tuple(edges.tolist()), tuple(float(c) for c in counts), label)


def _pmf(support: np.ndarray, prob: np.ndarray, label: str) -> Distribution:
    keep = prob > 0
    support, prob = support[keep], prob[keep]
    if support.size > MAX_SUPPORT:
        counts, edges = np.histogram(support, bins=_BINS * 2, weights=prob)
        return Distribution("histogram", tuple(edges.tolist()), tuple(counts.tolist()), label + " (binned)")
    return Distribution("pmf", tuple(support.tolist()), tuple(prob.tolist()), label)


def sample_summary(values: object, *, label: str = "", max_values: int = MAX_VALUES) -> Distribution:
    """The values themselves when there are at most ``max_values``, else a 60-bin histogram.

    Examples
    --------
    >>> from ipcausal.stats.null import sample_summary
    >>> sample_summary([1, 2, 2, 3]).x
    (1.0, 2.0, 2.0, 3.0)
    >>> sample_summary(range(10), max_values=5).kind
    'histogram'
    """
    x = as_sample(values, "values", min_size=1)
    max_values = positive_int(max_values, "max_values")
    if x.size <= max_values:
        return Distribution("sample", tuple(x.tolist()), (), label)
    return _histogram(x, label)


def _magnitudes(d: np.ndarray) -> tuple[np.ndarray, float, int]:
    absd = np.abs(d)
    scale = float(absd.max())
    nonzero = (absd / scale > 0) if scale > 0 else np.zeros(d.size, dtype=bool)
    return np.ascontiguousarray((absd / scale)[nonzero]) if scale > 0 else np.zeros(0), scale, d.size


def stream_signs(m: int, n_resamples: int, seed: int, *, start_chunk: int = 0) -> np.ndarray:
    """The documented counter-based stream decoded in numpy: (n_resamples, m) bits, 1 = sign +.

    Resample ``r`` of chunk ``c`` reads the next words of generator ``c * LANES + r % LANES``; bit
    ``j`` of word ``i`` is the sign of the (64 i + j)-th element (the kernels sort the magnitudes
    first).  Every Monte Carlo kernel draws these same sign vectors.
    """
    n_words = (m + 63) // 64
    rows = []
    for c in range(start_chunk, start_chunk + (n_resamples + K.CHUNK - 1) // K.CHUNK):
        count = min(K.CHUNK, n_resamples - (c - start_chunk) * K.CHUNK)
        per_lane = -(-count // K.LANES)
        lanes = [K.random_words(seed, c * K.LANES + i, per_lane * n_words).reshape(per_lane, n_words)
                 for i in range(K.LANES)]
        words = np.stack([lanes[r % K.LANES][r // K.LANES] for r in range(count)])
        rows.append(np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")[:, :m])
    return np.concatenate(rows)


def _replay(a: np.ndarray, seed: int, draws: int) -> np.ndarray:
    """Σ s_k a_k for the first ``draws`` sign vectors of the stream ``seed`` (magnitudes sorted).

    One pass of the Monte Carlo kernel (:func:`ipcausal.stats._kernels.mc_subsets`, byte tables):
    O(draws + n) memory, never a draws × n matrix of signs.  Equal to decoding the stream with
    :func:`stream_signs` and multiplying, up to the order of the float additions."""
    a_s = np.ascontiguousarray(np.sort(a, kind="stable"))
    tab, n_words = K.word_tables(a_s)
    sgn = np.zeros(n_words, dtype=np.uint64)
    t, _ = K.mc_subsets(tab, n_words, sgn, a_s.size, 0, int(draws), int(seed))
    return t


def null_distribution(d: object, result: SignFlipResult | SignTestResult, *,
                      draws: int = MC_DRAWS) -> Distribution:
    """The null distribution behind ``result`` (a test of the data ``d``), on the statistic's scale.

    Sign-flip tests: the distribution of mean(±|Δ|) under H0 — exact (pmf) for the exact routes,
    the first ``draws`` sign vectors of the same counter-based stream for Monte Carlo and the
    paper-compatibility mode (``result.seed`` must be set), and for the saddlepoint route the
    first ``draws`` vectors of stream 0 (an illustration: p came from the approximation).
    Sign test: the Binomial(n, 1/2) pmf of ``result.statistic``.

    Examples
    --------
    >>> from ipcausal import permutation_test
    >>> from ipcausal.stats.null import null_distribution
    >>> d = [1, 2, 1, 0, 2, 1, 1, 3]
    >>> null = null_distribution(d, permutation_test(d, method="exact"))
    >>> null.kind, round(sum(null.weights), 12)
    ('pmf', 1.0)
    """
    if isinstance(result, SignTestResult):
        n = int(result.n)
        k = np.arange(n + 1, dtype=np.float64)
        pmf = np.exp(_special.gammaln(n + 1) - _special.gammaln(k + 1) - _special.gammaln(n - k + 1)
                     - n * math.log(2.0)) if n > 0 else np.ones(1)
        return _pmf(k, pmf, f"Binomial({n}, 1/2) of the sign-test count")
    if not isinstance(result, SignFlipResult):
        raise TypeError(f"`result` must be a SignFlipResult or SignTestResult, got {type(result).__name__}")
    x = as_sample(d, "d")
    draws = positive_int(draws, "draws")
    a, scale, n = _magnitudes(x)
    if a.size == 0:
        return Distribution("pmf", (0.0,), (1.0,), "every Δ is 0: the statistic is 0 under H0")
    to_mean = scale / n
    if result.method == "exact-lattice-fft":
        from ipcausal.stats.grouped import pmf
        from ipcausal.stats.permutation import lattice_units

        k = lattice_units(a)
        if k is not None:
            total = int(k.sum())
            unit = float(a.max()) / float(k.max())
            t = (2.0 * np.arange(total + 1) - total) * unit
            return _pmf(t * to_mean, pmf(k), "exact null (grouped binomials, FFT) of mean Δ")
    if result.method == "exact-lattice" or (result.method == "exact-enumeration" and a.size > 20):
        from ipcausal.stats.permutation import lattice_units

        k = lattice_units(a)
        if k is not None:
            f = K.lattice_null(np.ascontiguousarray(k, dtype=np.int64))
            total = int(k.sum())
            unit = float(a.max()) / float(k.max())
            t = (2.0 * np.arange(total + 1) - total) * unit  # T = 2W − M, in magnitude units
            return _pmf(t * to_mean, f, "exact null (lattice DP) of mean Δ")
    if result.method == "exact-enumeration" and a.size <= 20:
        m = a.size
        signs = ((np.arange(1 << m)[:, None] >> np.arange(m)) & 1) * 2.0 - 1.0
        t = np.round(signs @ a, 12) * to_mean
        support, counts = np.unique(t, return_counts=True)
        return _pmf(support, counts / float(1 << m), f"exact null (all 2^{m} sign vectors) of mean Δ")
    if result.method in ("monte-carlo", "paper-compat") and result.seed is not None:
        t = _replay(a, int(result.seed), min(draws, int(result.n_resamples or draws)))
        used = result.n_resamples or draws
        return _histogram(t * to_mean, f"first {t.size:,} of the {used:,} sign vectors that gave p")
    t = _replay(a, 0, draws)
    return _histogram(t * to_mean, f"{draws:,} random sign vectors (illustration; p from {result.method})")
