"""The scorer registry: one entry per scorer, each with what it needs and how it scores.

A :class:`Scorer` says which outcome it makes (``"similarity"`` of the two responses, or an
``"interval"`` score per response), which columns and options it needs (checked by
:func:`check_scorer` before any model is called), its function, and — once made with its options
by :func:`get_scorer` (``get_scorer("essay", rater=…)``, ``get_scorer("judge", backend=…)``) — the
options it scores with and the known bound on |Δ| of its scores.  Code above the scorers (the
study layer, the cases) passes such an object around, never the options one by one.
:func:`ipcausal.scoring.score_pairs` takes a Scorer or a registered name; a new scorer is one
:func:`register` call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from ipcausal.outcomes import directed
from ipcausal.scoring._common import MISSING, OK, UNPARSEABLE, is_missing
from ipcausal.scoring.ratings import EssayJudge, OfflineEssayRater, mcq_correct
from ipcausal.scoring.read import read_choice, read_number
from ipcausal.scoring.similarity import EmbeddingSimilarity, JudgeSimilarity, choice_similarity, scale_similarity

__all__ = ["Scorer", "REGISTRY", "register", "get_scorer", "check_scorer", "Scored", "SCORERS", "SIMILARITY_SCORERS"]


@dataclass
class Scored:
    """What a scorer function returns (lists of length n; similarity scorers fill ``sims``)."""

    desc: str
    sims: list[float | None] | None = None
    sim_status: list[str] | None = None
    values_i: list[float | None] | None = None
    values_j: list[float | None] | None = None
    status_i: list[str] | None = None
    status_j: list[str] | None = None
    extra: dict[str, list[Any]] | None = None


@dataclass(frozen=True)
class Scorer:
    """A registered scorer.

    Attributes
    ----------
    name : str
    outcome : {"similarity", "interval"}
    columns : tuple of str
        Columns the pairs must have (besides the responses).
    needs_backend : bool
        Whether a judge ``backend`` is required.
    fn : callable
        ``fn(frame, y_i, y_j, options) -> Scored``.
    check : callable, optional
        ``check(columns, options)`` raising ``ValueError`` for what can be validated up front.
    accepts : tuple of str
        The options it takes (``backend``, ``rater``, ``embedder``, ``k``, ``retries``, ``bound``).
    bound : float, optional
        The known bound on |score_j − score_i| of an interval scorer made with ``options``
        (``None``: unknown, or a similarity scorer); :func:`get_scorer` sets it.
    options : mapping
        The options it scores with (read-only; empty for a registry entry).

    Examples
    --------
    >>> from ipcausal.scoring import get_scorer
    >>> mcq = get_scorer("mcq")
    >>> mcq.name, mcq.outcome, mcq.bound
    ('mcq', 'interval', 1.0)
    >>> get_scorer("essay", rater=len).bound is None  # a custom rater has no known range
    True
    >>> get_scorer("essay", rater=len, bound=100).bound
    100.0
    """

    name: str
    outcome: str
    columns: tuple[str, ...]
    needs_backend: bool
    fn: Callable[..., Scored]
    check: Callable[[set[str], dict[str, Any]], None] | None = None
    accepts: tuple[str, ...] = ()
    bound: float | None = None
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def describe(self) -> str:
        """The scorer's name with the options it was made with (``essay(rater=...)``), for messages."""
        if not self.options:
            return self.name
        return f"{self.name}(" + ", ".join(f"{k}={_short(v)}" for k, v in sorted(self.options.items())) + ")"


def _short(value: Any) -> str:
    name = getattr(value, "name", None) or getattr(value, "__name__", None)
    return str(name) if isinstance(name, str) else type(value).__name__ if not isinstance(value, (int, float)) \
        else repr(value)


REGISTRY: dict[str, Scorer] = {}


def register(scorer: Scorer) -> Scorer:
    """Add ``scorer`` to the registry (its name must be new)."""
    if not isinstance(scorer, Scorer):
        raise TypeError(f"`scorer` must be a Scorer, got {type(scorer).__name__}")
    if scorer.name in REGISTRY:
        raise ValueError(f"`scorer` {scorer.name!r} is registered already")
    REGISTRY[scorer.name] = scorer
    return scorer


def get_scorer(name: Any, **options: Any) -> Scorer:
    """The scorer ``name`` made with ``options`` (a :class:`Scorer`; ``name`` may be a Scorer to add options to).

    Parameters
    ----------
    name : str or Scorer
        A registered scorer (:data:`SCORERS`), or a Scorer whose options are extended.
    **options
        What the scorer takes (its ``accepts``): ``backend`` (the judge of ``"judge"`` and
        ``"essay"``), ``rater`` (``"essay"``: any ``str -> float``), ``embedder``
        (``"embedding"``), ``k`` (``"scale"``), ``retries`` (judge retries of a reply without a
        rating), ``bound`` (interval scorers: the bound on |Δ| when the default does not apply).
        ``None`` values are left out.

    Returns
    -------
    Scorer
        With ``options`` and ``bound``: 1 for ``"mcq"``; 5 for ``"essay"`` rated 1..6 by the rubric
        judge or the offline rater; ``bound`` when given; else ``None`` (unknown).

    Examples
    --------
    >>> from ipcausal.scoring import get_scorer
    >>> get_scorer("scale", k=5).describe()
    'scale(k=5)'
    >>> get_scorer("mcq", rater=len)
    Traceback (most recent call last):
    ...
    ValueError: scorer 'mcq' takes no option `rater` (it takes: bound)
    """
    options = {k: v for k, v in options.items() if v is not None}
    if isinstance(name, Scorer):
        entry, options = REGISTRY.get(name.name, name), {**name.options, **options}
    elif isinstance(name, str) and name in REGISTRY:
        entry = REGISTRY[name]
    else:
        raise ValueError(f"`scorer` must be one of {', '.join(repr(s) for s in REGISTRY)}, got {name!r}")
    opts = options
    for key in opts:
        if key not in entry.accepts:
            raise ValueError(f"scorer {entry.name!r} takes no option `{key}` (it takes: "
                             f"{', '.join(entry.accepts) or 'none'})")
    if "retries" in opts and (isinstance(opts["retries"], bool) or not isinstance(opts["retries"], int)
                              or opts["retries"] < 0):
        raise ValueError(f"`retries` must be an integer >= 0, got {opts['retries']!r}")
    bound = _bound(entry, opts)
    if not opts:
        return entry
    return replace(entry, bound=bound, options=MappingProxyType(opts))


def _bound(entry: Scorer, opts: dict[str, Any]) -> float | None:
    """The bound of ``entry`` made with ``opts`` (see :func:`get_scorer`)."""
    value = opts.get("bound")
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise ValueError(f"`bound` must be a finite number > 0, got {value!r}")
        if value <= 0:
            raise ValueError(f"`bound` must be > 0, got {value!r}")
        return float(value)
    if entry.name == "essay" and opts.get("rater") is not None and not isinstance(opts["rater"], OfflineEssayRater):
        return None  # a custom rater: no known range
    return entry.bound


def check_scorer(name: str, columns: Any, *, backend: Any = None, **options: Any) -> Scorer:
    """Validate everything about scoring that can be validated before a model is called.

    ``columns``: the column names the pairs will have before scoring (the responses need not be
    there yet).  Raises ``ValueError`` naming the missing column or option.

    Examples
    --------
    >>> from ipcausal.scoring import check_scorer
    >>> check_scorer("mcq", ["pair_id", "options"])
    Traceback (most recent call last):
    ...
    ValueError: scorer 'mcq' needs the column `correct_option` in `pairs`
    """
    scorer = get_scorer(name)
    options = {**scorer.options, **{k: v for k, v in options.items() if v is not None}}
    backend = scorer.options.get("backend") if backend is None else backend
    cols = set(columns)
    for col in scorer.columns:
        if col not in cols:
            raise ValueError(f"scorer {scorer.name!r} needs the column `{col}` in `pairs`")
    if scorer.needs_backend and backend is None:
        raise ValueError(f"`backend` is required for scorer {scorer.name!r} (the LLM judge)")
    if scorer.check is not None:
        scorer.check(cols, dict(options))
    return scorer


def _options(value: Any) -> list[str] | None:
    if is_missing(value):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _embedding(df: Any, yi: list, yj: list, opts: dict[str, Any]) -> Scored:
    emb = opts.get("embedder") or EmbeddingSimilarity()
    n = len(yi)
    sims: list[float | None] = [None] * n
    st = [MISSING] * n
    ok_rows = [r for r in range(n) if not is_missing(yi[r]) and not is_missing(yj[r])]
    for r, s in zip(ok_rows, emb([yi[r] for r in ok_rows], [yj[r] for r in ok_rows])):
        sims[r], st[r] = float(s), OK
    return Scored(f"embedding similarity (1 + cos)/2, {emb.name}", sims=sims, sim_status=st)


def _judge(df: Any, yi: list, yj: list, opts: dict[str, Any]) -> Scored:
    judge = JudgeSimilarity(opts["backend"], retries=opts.get("retries", 2))
    outs = judge(df["x_i"].tolist(), yi, yj)
    extra = {"judge_rating": [o.rating for o in outs],
             "judge_reply": [o.replies[-1] if o.replies else None for o in outs]}
    return Scored(f"{judge.name}: rating 1-5 -> (r-1)/4", sims=[o.value for o in outs],
                  sim_status=[o.status for o in outs], extra=extra)


def _choice(df: Any, yi: list, yj: list, opts: dict[str, Any]) -> Scored:
    n = len(yi)
    sims: list[float | None] = [None] * n
    st = [OK] * n
    for r in range(n):
        a, b = yi[r], yj[r]
        if is_missing(a) or is_missing(b):
            st[r] = MISSING
            continue
        options = _options(df["options"].iat[r]) if "options" in df.columns else None
        if options is None:
            sims[r] = choice_similarity(a, b)
            continue
        ca, cb = read_choice(a, options), read_choice(b, options)
        if ca is None or cb is None:
            st[r] = UNPARSEABLE
        else:
            sims[r] = 1.0 if ca == cb else 0.0
    return Scored("choice match (same option = 1)", sims=sims, sim_status=st)


def _check_scale(cols: set[str], opts: dict[str, Any]) -> None:
    k = opts.get("k")
    if k is None and "scale_k" not in cols:
        raise ValueError("scorer 'scale' needs `k` (points on the scale) or a `scale_k` column")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 2):
        raise ValueError(f"`k` must be an integer >= 2 (points on the scale), got {k!r}")


def _scale(df: Any, yi: list, yj: list, opts: dict[str, Any]) -> Scored:
    n = len(yi)
    k = opts.get("k")
    sims: list[float | None] = [None] * n
    st = [OK] * n
    for r in range(n):
        a, b = yi[r], yj[r]
        if is_missing(a) or is_missing(b):
            st[r] = MISSING
            continue
        kk = int(k if k is not None else df["scale_k"].iat[r])
        va, vb = read_number(a, low=1, high=kk), read_number(b, low=1, high=kk)
        if va is None or vb is None:
            st[r] = UNPARSEABLE
            continue
        sims[r] = scale_similarity(va, vb, kk)
    return Scored("scale similarity 1 - |a-b|/(k-1)", sims=sims, sim_status=st)


def _check_essay(cols: set[str], opts: dict[str, Any]) -> None:
    rater = opts.get("rater")
    if rater is not None and not callable(rater):
        raise TypeError("`rater` must be a callable str -> float")


def _essay(df: Any, yi: list, yj: list, opts: dict[str, Any]) -> Scored:
    rater, backend = opts.get("rater"), opts.get("backend")
    if rater is not None:
        fn, desc = rater, getattr(rater, "name", getattr(rater, "__name__", "user rater"))
    elif backend is not None:
        fn = EssayJudge(backend, retries=opts.get("retries", 2))
        desc = fn.name
    else:
        fn = OfflineEssayRater()
        desc = fn.name
    n = len(yi)
    out = Scored(desc, values_i=[None] * n, values_j=[None] * n, status_i=[OK] * n, status_j=[OK] * n)
    cache: dict[str, float | None] = {}
    for vals, sts, ys in ((out.values_i, out.status_i, yi), (out.values_j, out.status_j, yj)):
        for r, y in enumerate(ys):
            if is_missing(y):
                sts[r] = MISSING
                continue
            if y not in cache:
                v = fn(y)
                if v is not None and (isinstance(v, bool) or not np.isfinite(float(v))):
                    raise ValueError(f"`rater` returned {v!r}; it must return a finite number or None")
                cache[y] = None if v is None else float(v)
            vals[r] = cache[y]
            if vals[r] is None:
                sts[r] = UNPARSEABLE
    return out


def _mcq(df: Any, yi: list, yj: list, opts: dict[str, Any]) -> Scored:
    n = len(yi)
    out = Scored("multiple-choice correctness (1 = correct option)", values_i=[None] * n, values_j=[None] * n,
                 status_i=[OK] * n, status_j=[OK] * n)
    for r in range(n):
        options = _options(df["options"].iat[r])
        if options is None:
            raise ValueError(f"column `options` must hold a list of option texts; bad at row {r}")
        corr = df["correct_option"].iat[r]
        if is_missing(corr):
            raise ValueError(f"column `correct_option` is missing at row {r}")
        corr = int(corr) if isinstance(corr, np.integer) else float(corr) if isinstance(corr, np.floating) else corr
        out.values_i[r], out.status_i[r] = mcq_correct(yi[r], options, corr)
        out.values_j[r], out.status_j[r] = mcq_correct(yj[r], options, corr)
    return out


def _logprob(df: Any, yi: list, yj: list, opts: dict[str, Any]) -> Scored:
    # the model's P(correct option) for each prompt (a model call: reads x_i/x_j, not yi/yj)
    from ipcausal.scoring.logprob import describe, logprob_scores  # loads pandas: only when it scores

    si, sj = logprob_scores(df, opts.get("backend"))
    return Scored(describe(), values_i=si, values_j=sj, status_i=[OK] * len(si), status_j=[OK] * len(sj))


for _s in (
    Scorer("choice", "similarity", (), False, _choice),
    Scorer("scale", "similarity", (), False, _scale, _check_scale, accepts=("k",)),
    Scorer("embedding", "similarity", (), False, _embedding, accepts=("embedder",)),
    Scorer("judge", "similarity", ("x_i",), True, _judge, accepts=("backend", "retries")),
    Scorer("essay", "interval", (), False, _essay, _check_essay, accepts=("rater", "backend", "retries", "bound"),
           bound=5.0),  # the rubric judge and the offline rater rate 1..6
    Scorer("mcq", "interval", ("options", "correct_option"), False, _mcq, accepts=("bound",), bound=1.0),
    Scorer("logprob", "interval", ("x_i", "x_j", "options", "correct_option"), True, _logprob,
           accepts=("backend",), bound=1.0),  # a probability of the correct option: |Δ| <= 1
):
    register(_s)

#: The registered scorers' names, and those that give a similarity outcome.
SCORERS: tuple[str, ...] = tuple(REGISTRY)
SIMILARITY_SCORERS: tuple[str, ...] = tuple(k for k, v in REGISTRY.items() if not directed(v.outcome))
