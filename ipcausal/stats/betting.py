"""The O(1) state of a monitored stream: the betting e-process and its confidence sequence.

:func:`sequential_state` (paired differences) and :func:`sequential_sign_state` (similarities)
make a fresh state; :func:`sequential_update` returns the state after a batch.  The method, its
guarantee and the bets are described in :mod:`ipcausal.stats.sequential`; the kernel and the
layout of the state vector in :mod:`ipcausal.stats._kernels.sequential`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ipcausal.stats._kernels import sequential as _k
from ipcausal.stats._validate import ALTERNATIVES, as_sample, choice, finite_real, open_unit
from ipcausal.stats.results import SequentialSignResult, SequentialTestResult

__all__ = ["METHODS", "NULLS", "CI_METHODS", "SequentialState", "sequential_state", "sequential_sign_state", "sequential_update"]

METHODS = ("mixture", "agrapa", "ons")
NULLS = ("mean", "symmetry")
CI_METHODS = ("betting", "empirical-bernstein")
_CI_NAMES = {"betting": "betting-mixture-grid", "empirical-bernstein": "predictable-plugin-empirical-bernstein"}
_CODES = {"agrapa": _k.AGRAPA, "ons": _k.ONS, "mixture": _k.MIXTURE}
_ALT_CODES = {"two-sided": _k.TWO_SIDED, "greater": _k.GREATER, "less": _k.LESS}
_MAX_BET = {"agrapa": 0.5, "ons": 0.5, "mixture": 0.75}
_GRID_SIZE = 20
_GRID = _MAX_BET["mixture"] * np.arange(1, _GRID_SIZE + 1, dtype=np.float64) / _GRID_SIZE
_NO_GRID = np.empty(0, dtype=np.float64)
_CS_SIZE = 199  # candidate means of the betting CS: a step of 2/200 = 0.01 of the bound
_CS_GRID = np.round(-1.0 + 2.0 * np.arange(1, _CS_SIZE + 1, dtype=np.float64) / (_CS_SIZE + 1), 12)
_TOL = 1e-9  # relative slack on |Δ| ≤ bound for rounding (the value is then clipped to the bound)


@dataclass(frozen=True)
class SequentialState:
    """The O(1) state of one monitored stream; :func:`sequential_update` returns a new one per batch.

    ``kind`` is ``"mean"`` (Δ, :func:`sequential_test`) or ``"sign"`` (similarities,
    :func:`sequential_sign_test`).  ``n_seen`` counts every value fed, ``n_ties`` those equal
    to ``m0`` (sign kind; dropped).  ``vector`` is the kernel's state (see
    :mod:`ipcausal.stats._kernels.sequential`); ``stop_seen``/``stop_ties`` record ``n_seen``
    and ``n_ties`` at the first crossing of 1/α.  :meth:`to_dict` and :meth:`from_dict`
    round-trip it through JSON (so an audit can be resumed).

    Examples
    --------
    >>> import json
    >>> from ipcausal.stats import SequentialState, sequential_state, sequential_update
    >>> st = sequential_update(sequential_state(bound=1), [1, 1, 0, 1, 1, 1, -1, 1] * 4)
    >>> st.reject, st.stop_seen, st.n_seen, round(st.result().e_value, 1)
    (True, 18, 32, 29.4)
    >>> again = SequentialState.from_dict(json.loads(json.dumps(st.to_dict())))
    >>> again == st and again.e_value == st.e_value
    True
    """

    kind: str
    bound: float
    m0: float
    alpha: float
    alternative: str
    method: str
    null: str = "mean"
    ci_method: str = "betting"
    n_seen: int = 0
    n_ties: int = 0
    stop_seen: int | None = None
    stop_ties: int = 0
    vector: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)

    def __post_init__(self) -> None:
        choice(self.kind, "kind", ("mean", "sign"))
        choice(self.method, "method", METHODS)
        choice(self.null, "null", NULLS)
        choice(self.ci_method, "ci_method", CI_METHODS)
        want = _vector_size(self.method, self.ci_method)
        if not isinstance(self.vector, np.ndarray) or self.vector.shape != (want,):
            raise ValueError(f"`vector` must be the kernel state of {want} floats; make states with "
                             "sequential_state() or sequential_sign_state()")

    @property
    def n(self) -> int:
        """Observations used by the e-process (untied values for the sign kind)."""
        return int(self.vector[_k.N])

    @property
    def reject(self) -> bool:
        """Whether the e-process has reached 1/α at some time."""
        return self.stop_seen is not None

    @property
    def decided(self) -> bool:
        """Whether monitoring may stop: H0 rejected (see :meth:`equivalent` for the other way)."""
        return self.reject

    @property
    def e_value(self) -> float:
        """The e-process now (``inf`` once its log passes the float range, ~709.8)."""
        return _exp(self.vector[_k.LOG_E])

    @property
    def pvalue(self) -> float:
        """The anytime-valid p-value now: min(1, 1 / running max of the e-process)."""
        return min(1.0, _exp(-self.vector[_k.LOG_MAX]))

    @property
    def ci_low(self) -> float:
        """Lower end of the confidence sequence now (mean Δ, or the share below m0)."""
        return self._scale(self.vector[_k.CS_LO])

    @property
    def ci_high(self) -> float:
        """Upper end of the confidence sequence now."""
        return self._scale(self.vector[_k.CS_HI])

    def equivalent(self, margin: float) -> bool:
        """Whether the confidence sequence lies inside (−margin, margin) (mean kind) or
        (1/2 − margin, 1/2 + margin) (sign kind): the effect is shown smaller than ``margin``."""
        margin = finite_real(margin, "margin")
        if margin <= 0:
            raise ValueError(f"`margin` must be > 0, got {margin}")
        centre = 0.5 if self.kind == "sign" else 0.0
        return centre - margin < self.ci_low and self.ci_high < centre + margin

    def _scale(self, v: float) -> float:
        return float(0.5 * (v + 1.0) if self.kind == "sign" else v * self.bound)

    def result(self) -> SequentialTestResult | SequentialSignResult:
        """The verdict so far, every field at the first crossing of 1/α (or now, if none)."""
        st, stopped = self.vector, self.stop_seen is not None
        n = int(st[_k.STOP]) if stopped else self.n
        total = st[_k.SUM_STOP] if stopped else st[_k.SUM_X]
        loge = st[_k.LOG_STOP] if stopped else st[_k.LOG_E]
        logmax = st[_k.LOG_STOP] if stopped else st[_k.LOG_MAX]
        lo = float(self._scale(st[_k.CS_LO_STOP] if stopped else st[_k.CS_LO]))
        hi = float(self._scale(st[_k.CS_HI_STOP] if stopped else st[_k.CS_HI]))
        total = float(total)
        common = dict(reject=stopped, stopped_at=self.stop_seen, pvalue=min(1.0, _exp(-logmax)),
                      e_value=_exp(loge), ci_low=lo, ci_high=hi, confidence_level=1.0 - self.alpha,
                      ci_method=_CI_NAMES[self.ci_method],
                      alpha=self.alpha, alternative=self.alternative, method=self.method,
                      n_available=self.n_seen)
        if self.kind == "sign":
            below = int(round((n + total) / 2.0))
            return SequentialSignResult(statistic=below / n if n else math.nan, n=n,
                                        n_ties=self.stop_ties if stopped else self.n_ties, n_below=below,
                                        m0=self.m0, null_hypothesis=_sign_null(self.m0, self.alternative),
                                        **common)
        return SequentialTestResult(statistic=total * self.bound / n if n else math.nan, n=n, bound=self.bound,
                                    null_hypothesis=_mean_null(self.bound, self.alternative, self.null),
                                    **common)

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready fields (``vector`` as a list of floats)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["vector"] = [float(v) for v in self.vector]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SequentialState:
        """The state that :meth:`to_dict` wrote."""
        if not isinstance(data, dict):
            raise TypeError(f"`data` must be a dict from SequentialState.to_dict, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        if set(data) != names:
            raise ValueError(f"`data` must have exactly the keys {sorted(names)}")
        if data["kind"] == "mean":
            base = sequential_state(bound=data["bound"], alpha=data["alpha"], alternative=data["alternative"],
                                    method=data["method"], null=data["null"], ci_method=data["ci_method"])
        else:
            base = sequential_sign_state(m0=data["m0"], alpha=data["alpha"], alternative=data["alternative"],
                                         method=data["method"], ci_method=data["ci_method"])
        vec = np.asarray(data["vector"], dtype=np.float64)
        return dataclasses.replace(base, n_seen=int(data["n_seen"]), n_ties=int(data["n_ties"]),
                                   stop_seen=None if data["stop_seen"] is None else int(data["stop_seen"]),
                                   stop_ties=int(data["stop_ties"]), vector=vec)


_LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)


def _exp(x: float) -> float:
    """``exp(x)``, ``inf`` past the float range (an e-process's log can grow without bound)."""
    return math.inf if x > _LOG_FLOAT_MAX else math.exp(x)


def _mean_null(bound: float, alternative: str, null: str = "mean") -> str:
    h1 = {"less": "< 0", "greater": "> 0", "two-sided": "≠ 0"}[alternative]
    if null == "symmetry":
        h0 = ("H0: given the pairs seen before it and its size |Δ|, every paired difference Δ is as likely "
              "positive as negative (the sign-flip null)")
    else:
        h0 = f"H0: every paired difference Δ (|Δ| ≤ {bound:g}) has mean 0 given the pairs seen before it"
    return f"{h0}, against H1: mean(Δ) {h1}; anytime-valid under continuous monitoring"


def _sign_null(m0: float, alternative: str) -> str:
    h1 = {"less": "<", "greater": ">", "two-sided": "≠"}[alternative]
    return (f"H0: each similarity is below or above {m0:g} with probability 1/2 given the values before it "
            f"(median {m0:g}), against H1: median(similarity) {h1} {m0:g}; anytime-valid under continuous monitoring")


def _common(alpha: Any, alternative: Any, method: Any, ci_method: Any) -> tuple[float, str, str, str]:
    return (open_unit(alpha, "alpha"), choice(alternative, "alternative", ALTERNATIVES),
            choice(method, "method", METHODS), choice(ci_method, "ci_method", CI_METHODS))


def _test_grid(method: str) -> int:
    return _GRID_SIZE if method == "mixture" else 0


def _cs_grid(ci_method: str) -> np.ndarray:
    return _CS_GRID if ci_method == "betting" else _NO_GRID


def _vector_size(method: str, ci_method: str) -> int:
    cs = _CS_SIZE * (2 * _GRID_SIZE + 2) if ci_method == "betting" else 0
    return _k.GRID0 + 2 * _test_grid(method) + cs


def _vector(method: str, ci_method: str) -> np.ndarray:
    betting = ci_method == "betting"
    return _k.new_state_vector(_test_grid(method), _CS_SIZE if betting else 0, _GRID_SIZE if betting else 0)


def sequential_state(*, bound: float, alpha: float = 0.05, alternative: str = "two-sided",
                     method: str = "mixture", null: str = "mean", ci_method: str = "betting") -> SequentialState:
    """A fresh state for a stream of paired differences with |Δ| ≤ ``bound``.

    Parameters
    ----------
    bound : float
        Known bound on |Δ| (1 for 0/1 correctness, k − 1 for a k-point rating).
    alpha : float
        Level: the e-process rejects when it reaches 1/α.
    alternative : {"two-sided", "greater", "less"}
        Direction of H1 for mean(Δ).
    method : {"mixture", "agrapa", "ons"}
        The bet (see the module docstring).
    null : {"mean", "symmetry"}
        ``"mean"``: each Δ has conditional mean 0 (bets scaled by ``bound``).  ``"symmetry"``:
        the sign-flip null of :func:`ipcausal.permutation_test` (given the past and |Δ|, the
        sign is a fair coin); the bets are scaled by the largest |Δ| seen so far, the current
        one included, so a loose ``bound`` costs nothing (it still bounds the confidence sequence).
    ci_method : {"betting", "empirical-bernstein"}
        The confidence sequence for mean(Δ) (two-sided, level 1 − α; see
        :mod:`ipcausal.stats._kernels.sequential`).  ``"betting"``: the mixture bets of the test
        at every candidate mean on a grid of step 0.01 · bound (its ends are excluded grid
        points; with ``method="mixture"`` and ``null="mean"`` it has the test's own wealths at m = 0;
        a mean leaves it when one side's wealth reaches 2/α, so a CS without 0 implies a
        two-sided rejection, not the converse: see :mod:`ipcausal.stats.sequential`); ~67 kB of state.  ``"empirical-bernstein"``: Waudby-Smith &
        Ramdas' closed form, a few floats of state, wider.

    -------
    SequentialState

    Examples
    --------
    >>> from ipcausal.stats.sequential import sequential_state, sequential_update
    >>> st = sequential_update(sequential_state(bound=1), [1, 0, 1, 1])
    >>> st.n, st.reject, round(st.pvalue, 3)
    (4, False, 0.623)
    """
    b = finite_real(bound, "bound")
    if b <= 0:
        raise ValueError(f"`bound` must be > 0, got {bound!r}")
    alpha, alternative, method, ci_method = _common(alpha, alternative, method, ci_method)
    null = choice(null, "null", NULLS)
    return SequentialState(kind="mean", bound=b, m0=0.0, alpha=alpha, alternative=alternative, method=method,
                           null=null, ci_method=ci_method, vector=_vector(method, ci_method))


def sequential_sign_state(*, m0: float = 0.0, alpha: float = 0.05, alternative: str = "two-sided",
                          method: str = "mixture", ci_method: str = "betting") -> SequentialState:
    """A fresh state for the sequential sign test of median(s) = ``m0`` (see :func:`sequential_sign_test`).

    Parameters
    ----------
    m0 : float
        The hypothesised median; values equal to it are ties (dropped, counted).
    alpha : float
        Level.
    alternative : {"two-sided", "less", "greater"}
        Direction of H1 for the median (``"less"``: most values lie below m0).
    method : {"mixture", "agrapa", "ons"}
        The bet.
    ci_method : {"betting", "empirical-bernstein"}
        The confidence sequence for the share below m0 (see :func:`sequential_state`).

    Returns
    -------
    SequentialState

    Examples
    --------
    >>> from ipcausal.stats import sequential_sign_state, sequential_update
    >>> st = sequential_update(sequential_sign_state(m0=0.8, alternative="less"), [0.5, 0.8, 0.2, 0.9])
    >>> st.n_seen, st.n_ties, st.n, round(st.ci_low, 3), round(st.ci_high, 3)
    (4, 1, 3, 0.075, 1.0)
    """
    m0 = finite_real(m0, "m0")
    alpha, alternative, method, ci_method = _common(alpha, alternative, method, ci_method)
    return SequentialState(kind="sign", bound=1.0, m0=m0, alpha=alpha, alternative=alternative, method=method,
                           ci_method=ci_method, vector=_vector(method, ci_method))


def sequential_update(state: SequentialState, batch: Any, *, name: str = "batch") -> SequentialState:
    """The state after the values of ``batch`` (in order); ``state`` itself is not changed.

    Feeding a stream in batches gives exactly the state of feeding it at once.  Every value is
    used, also after a crossing (the pairs were paid for); the verdict at the first crossing
    stays recorded.  O(len(batch)) time, O(1) memory.

    Parameters
    ----------
    state : SequentialState
        From :func:`sequential_state`, :func:`sequential_sign_state` or an earlier update.
    batch : array_like, shape (k,)
        The next Δ (|Δ| ≤ the state's bound) or similarities, in arrival order; may be empty.
    name : str
        The parameter named in error messages (``"batch"``).

    Returns
    -------
    SequentialState

    Examples
    --------
    >>> from ipcausal.stats.sequential import sequential_state, sequential_update
    >>> a = sequential_update(sequential_update(sequential_state(bound=2), [1, -0.5]), [2, 1.5])
    >>> b = sequential_update(sequential_state(bound=2), [1, -0.5, 2, 1.5])
    >>> a.e_value == b.e_value and a.n == b.n == 4
    True
    """
    if not isinstance(state, SequentialState):
        raise TypeError(f"`state` must be a SequentialState (from sequential_state), got {type(state).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a string, got {type(name).__name__}")
    return _feed(state, as_sample(batch, name, min_size=0), name, False)


def _feed(state: SequentialState, x: np.ndarray, name: str, stop_early: bool) -> SequentialState:
    """``x`` (validated) into a copy of ``state``; with ``stop_early`` nothing after the first crossing."""
    vec = state.vector.copy()
    ties = 0
    if state.kind == "sign":
        keep = x != state.m0
        ties = int(x.size - np.count_nonzero(keep))
        pos = np.flatnonzero(keep)
        scaled = np.where(x[keep] < state.m0, 1.0, -1.0)
        alt = {"less": _k.GREATER, "greater": _k.LESS}.get(state.alternative, _k.TWO_SIDED)
    else:
        big = np.abs(x) > state.bound * (1.0 + _TOL)
        if big.any():
            i = int(np.flatnonzero(big)[0])
            raise ValueError(f"`{name}`: every |Δ| must be ≤ `bound` = {state.bound:g}; "
                             f"value {x[i]!r} at index {i}")
        pos = None
        scaled = np.clip(x / state.bound, -1.0, 1.0)
        alt = _ALT_CODES[state.alternative]
    before = int(vec[_k.N])
    _k.seq_update(vec, np.ascontiguousarray(scaled), _CODES[state.method], alt, _MAX_BET[state.method],
                  _GRID if state.method == "mixture" else _NO_GRID, math.log(2.0 / state.alpha),
                  math.log(1.0 / state.alpha), stop_early, state.null == "symmetry", _cs_grid(state.ci_method),
                  _GRID, _k.GRID0 + 2 * _test_grid(state.method))
    stop_seen, stop_ties = state.stop_seen, state.stop_ties
    if stop_seen is None and vec[_k.STOP] >= 0:
        k = int(vec[_k.STOP]) - before  # 1-based index of the crossing among this batch's used values
        j = k - 1 if pos is None else int(pos[k - 1])
        stop_seen = state.n_seen + j + 1
        stop_ties = state.n_ties + (j + 1 - k)
    if stop_early and stop_seen is not None and state.stop_seen is None:  # nothing after the crossing
        seen, ties = stop_seen - state.n_seen, stop_ties - state.n_ties
    else:
        seen = int(x.size)
    return dataclasses.replace(state, n_seen=state.n_seen + seen, n_ties=state.n_ties + ties,
                               stop_seen=stop_seen, stop_ties=stop_ties, vector=vec)
