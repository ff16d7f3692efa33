"""Power analysis: how many pairs a study needs, or how likely it is to detect an effect.

:func:`power` answers one of two questions for one background pair, tested at the
Bonferroni level ``alpha / n_tests`` (``n_tests`` background pairs in the family, as
:func:`ipcausal.test` corrects them):

* given ``n`` pairs → the probability of rejecting H0 (``.power``);
* given a target ``power`` → the smallest ``n`` that reaches it (``.n``).

What ``effect`` means
---------------------
**Interval outcomes** (paired permutation test of mean Δ = 0): ``effect`` is the true mean
of Δ on the outcome's scale and ``sd`` the standard deviation of Δ (the default ``sd=1``
makes ``effect`` the standardized effect d_z = mean/sd).  Δ is taken as normal.  Any sign is
allowed; the two-sided test depends on |effect| only.

**Similarity outcomes** (sign test of median(s) = m0 against median(s) < m0): ``effect`` is
the probability q that a pair's similarity falls *below* ``m0``, among pairs whose similarity
is not exactly ``m0`` (ties are dropped by the test, so ``n`` counts untied pairs).  H0 is
q = 0.5; implicit personalization makes q > 0.5.  ``effect`` must lie in [0, 1].

Methods
-------
``"exact"`` (similarity; the default there)
    The exact binomial power of the sign test: with k* the smallest count whose tail
    P(Bin(n, ½) ≥ k*) is at most the level, power = P(Bin(n, q) ≥ k*).  It is a sawtooth in
    n, so the smallest n reaching a target can be followed by a larger n that does not.
``"approx"`` (interval; the default there)
    The permutation test shares its power with the one-sample t-test for normal Δ, so power
    is taken from the noncentral t distribution (df = n − 1, noncentrality √n · effect/sd),
    with one exact correction: a sign-flip test can never reach a p-value below 2/2ⁿ
    (two-sided; 1/2ⁿ one-sided), so for such small n the power is 0.
``"simulate"`` (both)
    Seeded Monte Carlo: ``n_sim`` data sets are drawn (normal Δ, or binomial counts) and
    tested with ipcausal's own test (Monte Carlo permutation test with L + 1 a multiple of
    1/level); ``.mc_se`` is the Monte Carlo standard error of the power.  When solving for
    ``n`` it bisects with common random numbers, so ``n`` carries that error too.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ipcausal.outcomes import OUTCOME_KINDS, directed, get_outcome
from ipcausal.study.defaults import DEFAULTS
from ipcausal._validate import as_generator, choice, open_unit, seed_from
from ipcausal.stats.sign import binomial_tail

__all__ = ["power", "PowerResult", "POWER_METHODS"]

POWER_METHODS = ("auto", "approx", "exact", "simulate")
_MAX_N = 10_000_000


@dataclass(frozen=True)
class PowerResult:
    """What :func:`power` returns.

    Attributes
    ----------
    power : float
        Probability of rejecting H0 for one background pair at ``level``.
    n : int
        Pairs (untied pairs for the sign test).
    effect, sd, m0 : float
        The inputs (``sd`` is ``None`` for similarity outcomes, ``m0`` for interval ones).
    alpha, n_tests, level : float, int, float
        Family level, family size and the per-test (Bonferroni) level ``alpha / n_tests``.
    outcome, test, alternative : str
        ``"interval"``/``"permutation"`` or ``"similarity"``/``"sign"``, and H1's direction.
    method : str
        ``"noncentral-t approximation"``, ``"exact binomial"`` or ``"simulation"``.
    solved_for : str
        ``"power"`` (``n`` was given) or ``"n"`` (``target_power`` was given).
    target_power : float or None
    mc_se : float
        Monte Carlo standard error of ``power`` (0.0 unless simulated).
    n_sim : int or None
        Simulated data sets per evaluated n.
    """

    power: float
    n: int
    effect: float
    sd: float | None
    m0: float | None
    alpha: float
    n_tests: int
    level: float
    outcome: str
    test: str
    alternative: str
    method: str
    solved_for: str
    target_power: float | None
    mc_se: float
    n_sim: int | None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON-ready)."""
        return asdict(self)

    def __str__(self) -> str:
        what = (
            f"mean Δ = {self.effect:g} (sd of Δ = {self.sd:g}, d_z = {self.effect / self.sd:.3g})"
            if directed(self.outcome)
            else f"P(similarity < {self.m0:g}) = {self.effect:g} (H0: 0.5)"
        )
        se = f" ± {self.mc_se:.3f} (Monte Carlo SE, {self.n_sim} data sets)" if self.n_sim else ""
        target = f"; smallest n reaching power {self.target_power:g}" if self.solved_for == "n" else ""
        return (
            f"power analysis — {self.test} test ({self.outcome} outcome, {self.alternative}), {self.method}\n"
            f"effect: {what}\n"
            f"level: alpha = {self.alpha:g} / {self.n_tests} test(s) = {self.level:.4g} (Bonferroni){target}\n"
            f"n = {self.n} pairs → power = {self.power:.4f}{se}\n"
        )


def _int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}, got {value}")
    return int(value)


def _real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"`{name}` must be a finite number, got {value!r}")
    return float(value)


# -- the three power functions (vectorized over n where cheap) ------------------------------
class _LazyStats:
    """``scipy.stats``, imported at the first power computation (a test that needs none never loads it)."""

    def __getattr__(self, name: str) -> Any:
        from scipy import stats

        return getattr(stats, name)


_sps = _LazyStats()


def _critical_k(n: np.ndarray, level: float) -> np.ndarray:
    """Smallest k with P(Bin(n, ½) ≥ k) ≤ level (n + 1 when none), as the sign test computes it."""
    k = np.asarray(_sps.binom.isf(level, n, 0.5), dtype=np.float64) + 1.0
    k = np.where(np.isfinite(k), k, n + 1.0)
    # align with the library's own tail to the last ulp
    for _ in range(3):
        lower = binomial_tail(k - 1, n) <= level
        k = np.where(lower & (k - 1 >= 0), k - 1, k)
        higher = binomial_tail(k, n) > level
        k = np.where(higher, k + 1, k)
    return np.minimum(k, n + 1.0)


def _sign_power(n: np.ndarray, q: float, level: float, alternative: str) -> np.ndarray:
    n = np.asarray(n, dtype=np.float64)
    if alternative == "two-sided":
        k = _critical_k(n, level / 2.0)
        return np.minimum(1.0, _sps.binom.sf(k - 1, n, q) + _sps.binom.sf(k - 1, n, 1.0 - q))
    k = _critical_k(n, level)
    return _sps.binom.sf(k - 1, n, q if alternative == "less" else 1.0 - q)


def _t_power(n: np.ndarray, d: float, level: float, alternative: str) -> np.ndarray:
    n = np.asarray(n, dtype=np.float64)
    df, nc = n - 1.0, np.sqrt(n) * d

    def upper(tc: Any, nc: Any) -> Any:  # P(T > tc) for T ~ nct(df, nc); far tails are 0 or 1
        with np.errstate(all="ignore"):
            v = _sps.nct.sf(tc, df, nc)
        return np.where(np.isnan(v), (nc > tc).astype(np.float64), v)

    if alternative == "two-sided":
        tc = _sps.t.isf(level / 2.0, df)
        p = upper(tc, nc) + upper(tc, -nc)  # P(T < -tc | nc) = P(T > tc | -nc)
        floor = np.ldexp(1.0, 1 - n.astype(np.int64))
    else:
        tc = _sps.t.isf(level, df)
        p = upper(tc, nc) if alternative == "greater" else upper(tc, -nc)
        floor = np.ldexp(1.0, -n.astype(np.int64))
    return np.where(floor > level, 0.0, np.clip(p, 0.0, 1.0))


def _simulated(n: int, effect: float, sd: float, level: float, alternative: str, outcome: str,
               n_sim: int, seed: int) -> float:
    gen = np.random.default_rng([seed, n])
    if not directed(outcome):
        from ipcausal.stats.sign import sign_tests

        below = gen.binomial(n, effect, size=n_sim)
        p = sign_tests(below, n - below, alternative=alternative)
        return float(np.mean(p <= level))
    from ipcausal.stats.permutation import permutation_test

    resamples = max(1999, int(math.ceil(50.0 / level)) - 1)
    draws = gen.normal(effect, sd, size=(n_sim, n))
    hits = 0
    for k in range(n_sim):
        res = permutation_test(draws[k], alternative=alternative, method="monte-carlo",
                               n_resamples=resamples, rng=np.random.default_rng([seed, n, k]))
        hits += res.pvalue <= level
    return hits / n_sim


def power(
    effect: float,
    *,
    n: int | None = None,
    power: float | None = None,
    alpha: float = DEFAULTS["alpha"],
    n_tests: int = 1,
    outcome: str = "interval",
    sd: float = 1.0,
    m0: float = DEFAULTS["m0"],
    method: str = "auto",
    n_sim: int = 2000,
    alternative: str | None = None,
    rng: int | np.random.Generator | None = None,
) -> PowerResult:
    """Power of the paired test for one background pair, or the smallest n for a target power.

    Parameters
    ----------
    effect : float
        Interval: the true mean of Δ (any sign).  Similarity: the probability q in [0, 1] that
        a pair's similarity is below ``m0`` (H0: q = 0.5).  See the module docstring.
    n : int, optional
        Number of pairs (>= 2).  Give exactly one of ``n`` and ``power``.
    power : float, optional
        Target power in (0, 1); the result's ``.n`` is the smallest n that reaches it.
    alpha : float
        Family-wise level in (0, 1).
    n_tests : int
        Background pairs in the correction family; each is tested at ``alpha / n_tests``.
    outcome : {"interval", "similarity"}
    sd : float
        Standard deviation of Δ (> 0; interval outcomes).
    m0 : float
        The sign test's null median, in (0, 1] (similarity outcomes; it only labels ``effect``).
    method : {"auto", "approx", "exact", "simulate"}
        ``"auto"``: ``"approx"`` for interval, ``"exact"`` for similarity outcomes.
    n_sim : int
        Simulated data sets per evaluated n (``method="simulate"``; >= 100).
    alternative : str, optional
        H1's direction (default: ``"two-sided"`` for interval, ``"less"`` for similarity).
    rng : int, numpy.random.Generator or None
        Seed of the simulation.

    Returns
    -------
    PowerResult

    Raises
    ------
    ValueError
        Bad input (naming the parameter), or a target power that cannot be reached.

    Examples
    --------
    >>> import ipcausal
    >>> round(ipcausal.power(0.5, n=34).power, 3)
    0.808
    >>> ipcausal.power(0.5, power=0.8, n_tests=3).n
    45
    >>> ipcausal.power(0.7, n=30, outcome="similarity").power > 0.6
    True
    """
    outcome = choice(outcome, "outcome", OUTCOME_KINDS)
    effect = _real(effect, "effect")
    if not directed(outcome) and not 0.0 <= effect <= 1.0:
        raise ValueError(
            f"`effect` must be a probability in [0, 1] for similarity outcomes (the share of pairs "
            f"with similarity below m0; 0.5 means no effect), got {effect!r}"
        )
    if (n is None) == (power is None):
        raise ValueError("give exactly one of `n` (→ power) and `power` (→ smallest n)")
    if n is not None:
        n = _int(n, "n", 2)
    target = None if power is None else open_unit(power, "power")
    alpha = open_unit(alpha, "alpha")
    n_tests = _int(n_tests, "n_tests", 1)
    sd = _real(sd, "sd")
    if not sd > 0:
        raise ValueError(f"`sd` must be > 0, got {sd!r}")
    m0 = _real(m0, "m0")
    if not 0.0 < m0 <= 1.0:
        raise ValueError(f"`m0` must lie in (0, 1], got {m0!r}")
    method = choice(method, "method", POWER_METHODS)
    if method == "auto":
        method = "approx" if directed(outcome) else "exact"
    if method == "approx" and not directed(outcome):
        raise ValueError("`method`='approx' is for interval outcomes; the sign test's power is 'exact'")
    if method == "exact" and directed(outcome):
        raise ValueError("`method`='exact' is for similarity outcomes; use 'approx' or 'simulate' for interval")
    n_sim = _int(n_sim, "n_sim", 100)
    if alternative is None:
        alternative = get_outcome(outcome).default_alternative
    alternative = choice(alternative, "alternative", ("two-sided", "greater", "less"))
    level = alpha / n_tests
    seed = seed_from(as_generator(rng)) if method == "simulate" else 0

    def analytic(ns: np.ndarray) -> np.ndarray:
        if not directed(outcome):
            return _sign_power(ns, effect, level, alternative)
        return _t_power(ns, effect / sd, level, alternative)

    def at(k: int) -> float:
        if method == "simulate":
            return _simulated(k, effect, sd, level, alternative, outcome, n_sim, seed)
        return float(analytic(np.array([k]))[0])

    if n is None:
        n = _solve_n(analytic, at, float(target or 0.0), method, effect, sd, outcome, alternative)
    value = at(n)
    se = math.sqrt(value * (1.0 - value) / n_sim) if method == "simulate" else 0.0
    names = {"approx": "noncentral-t approximation", "exact": "exact binomial", "simulate": "simulation"}
    return PowerResult(
        power=float(value), n=int(n), effect=effect, sd=sd if directed(outcome) else None,
        m0=m0 if not directed(outcome) else None, alpha=alpha, n_tests=n_tests, level=level,
        outcome=outcome, test=get_outcome(outcome).test, alternative=alternative,
        method=names[method], solved_for="power" if target is None else "n", target_power=target,
        mc_se=se, n_sim=n_sim if method == "simulate" else None,
    )


def _solve_n(analytic: Any, at: Any, target: float, method: str, effect: float, sd: float,
             outcome: str, alternative: str) -> int:
    """Smallest n with power(n) >= target (a scan for the sawtooth sign test, bisection else)."""
    limit = analytic(np.array([_MAX_N], dtype=np.float64))[0]
    if not limit >= target:
        what = "effect/sd" if directed(outcome) else "effect (P(s < m0))"
        raise ValueError(
            f"`power`={target:g} cannot be reached with {what} = {effect if not directed(outcome) else effect / sd:g} "
            f"and alternative {alternative!r} for any n <= {_MAX_N:,}"
        )
    if not directed(outcome) and method == "exact":
        start = 2
        while start <= _MAX_N:
            block = np.arange(start, min(start + 4096, _MAX_N + 1), dtype=np.float64)
            ok = np.flatnonzero(analytic(block) >= target)
            if ok.size:
                return int(block[ok[0]])
            start += 4096
        raise AssertionError("unreachable")  # pragma: no cover - guarded by `limit`
    # analytic guess by doubling + bisection (monotone for the t approximation)
    hi = 2
    while analytic(np.array([hi], dtype=np.float64))[0] < target:
        hi *= 2
    lo = max(2, hi // 2)
    while lo < hi:
        mid = (lo + hi) // 2
        if analytic(np.array([mid], dtype=np.float64))[0] >= target:
            hi = mid
        else:
            lo = mid + 1
    if method != "simulate":
        return hi
    # simulation: bracket around the analytic n, then bisect on the simulated power
    lo, hi = max(2, hi // 2), hi
    while at(hi) < target:
        lo, hi = hi + 1, 2 * hi
        if hi > _MAX_N:
            raise ValueError(f"`power`={target:g} is not reached by simulation for n <= {_MAX_N:,}")
    if at(lo) >= target:
        lo = 2
    while lo < hi:
        mid = (lo + hi) // 2
        if at(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return hi
