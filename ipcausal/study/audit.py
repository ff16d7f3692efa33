"""``ipcausal.audit(pairs, backend=..., scorer=...)``: an anytime-valid audit that stops paying early.

The pairs are sent to the model in a seeded random order (a permutation of the units — pairs,
or whole clusters — drawn from ``rng``), a batch at a time, through :func:`ipcausal.run` (the
SQLite cache makes a stop, a crash or a later continuation safe) and
:func:`ipcausal.scoring.score_pairs`.  Each group (the model's unordered background pair) keeps
one betting e-process (:func:`ipcausal.stats.sequential_state`; for similarity scorers the sequential
sign test, :func:`ipcausal.stats.sequential_sign_state`), updated as each batch arrives.  After every
batch the groups' e-values are combined with e-Holm (or e-Bonferroni) across the model's groups,
and a group is *decided* when it is rejected, or — with ``margin`` — when its confidence
sequence lies inside (−margin, margin).  A decided group gets no more pairs; the audit stops
when every group is decided, the pairs run out, or ``max_pairs`` pairs have been sent.

The guarantee (Ville's inequality, SPEC §9): under H0 an e-process reaches 1/α with
probability at most α *whatever the stopping rule and however often one looks*; the mean of the
e-processes of any set of true nulls is again an e-process, so e-Holm decided at the batch
boundaries keeps the family-wise error ≤ α.  A resumed audit (same pairs, same integer ``rng``,
same cache) sends the same batches in the same order and takes every answered request from the
cache, so it reaches the same verdict without asking the model twice.

The mechanics of the streams (plan, feeding, decisions, the Report) are in
:mod:`ipcausal.study._streams`.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipcausal.pairs import PairSet
from ipcausal.stats._validate import as_generator, choice, open_unit, positive_int
from ipcausal.stats.betting import METHODS
from ipcausal.study._streams import CORRECTIONS, Plan, assemble, decide, feed_batch, next_batch, plan
from ipcausal.study.groups import validate_cluster, validate_order
from ipcausal.study.defaults import AUDIT_BATCH_SIZE
from ipcausal.study.results import Report
from ipcausal.study.run import RunSummary, run, summarize

__all__ = ["audit", "run_audit", "AuditRun", "CORRECTIONS", "STOP_REASONS", "DEFAULT_BATCH_SIZE", "default_bound"]

#: Why a group's stream stopped.
STOP_REASONS = ("rejected", "equivalent", "exhausted", "max_pairs")
DEFAULT_BATCH_SIZE = AUDIT_BATCH_SIZE
_ESSAY_RANGE = 5.0  # the rubric and the offline rater rate 1..6


@dataclass(frozen=True)
class AuditRun:
    """What :func:`run_audit` returns: the Report and what the CLI writes beside it.

    Attributes
    ----------
    report : Report
        Per group: pairs used of pairs available, why it stopped, the anytime-valid p, the
        e-value, the confidence sequence at the stop and the e-process path.
    responses : PairSet
        Every pair sent, with the model's responses, in the order sent.
    scored : PairSet or None
        The pairs that entered the e-processes, with their scores (``None`` if none could be scored).
    summary : RunSummary
        Requests, cache hits, tokens and (with prices) the cost of the new tokens.
    counts : dict
        ``pairs_available``, ``pairs_sent``, ``pairs_scored``, ``requests_full``, ``requests_sent``,
        ``requests_saved``, ``requests_new`` (distinct requests asked of the model in this call: a prompt
        shared by several pairs is asked once) and ``batches``.
    """

    report: Report
    responses: PairSet
    scored: PairSet | None
    summary: RunSummary
    counts: dict[str, int]


def default_bound(scorer: str, *, rater: Any = None, k: int | None = None) -> float | None:
    """The known bound on |Δ| for an interval scorer (``None`` for similarity scorers).

    ``"mcq"``: 1 (correctness is 0 or 1); ``"essay"`` with the rubric judge or the offline rater:
    5 (ratings 1..6).  A custom ``rater`` or another interval scorer has no known range: pass
    ``bound``.

    Examples
    --------
    >>> default_bound("mcq"), default_bound("essay"), default_bound("choice")
    (1.0, 5.0, None)
    """
    from ipcausal.scoring.registry import get_scorer

    entry = get_scorer(scorer)
    if entry.outcome == "similarity":
        return None
    if scorer == "mcq":
        return 1.0
    if scorer == "essay" and (rater is None or type(rater).__name__ == "OfflineEssayRater"):
        return _ESSAY_RANGE
    raise ValueError(f"`bound` is required for scorer {scorer!r}" + (" with a custom `rater`" if rater else "")
                     + ": give the largest possible |score_j − score_i| (e.g. k − 1 for a k-point rating)")


def _positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"`{name}` must be a finite number > 0, got {value!r}")
    if float(value) <= 0:
        raise ValueError(f"`{name}` must be > 0, got {value!r}")
    return float(value)


def _validate(pairs: Any, backend: Any, scorer: Any, bound: Any, alpha: Any, correction: Any, margin: Any,
              batch_size: Any, max_pairs: Any, cache: Any, config: Any, system: Any, concurrency: Any, cluster: Any,
              order: Any, m0: Any, alternative: Any, method: Any, unparseable: Any, judge_backend: Any, rater: Any,
              k: Any, retries: Any, progress: Any) -> dict[str, Any]:
    """Every argument checked before the first request (errors name the parameter)."""
    import pandas as pd

    from ipcausal.backends.base import Backend, GenerationConfig
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.scoring import check_policy, check_scorer

    if isinstance(pairs, pd.DataFrame):
        pairs = PairSet.from_frame(pairs)
    elif isinstance(pairs, (str, os.PathLike)):
        pairs = PairSet.read(pairs)
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, a DataFrame or a file path, got {type(pairs).__name__}")
    if len(pairs) == 0:
        raise ValueError("`pairs` is empty: there is nothing to audit")
    df = pairs.to_frame()
    for s in ("i", "j"):
        blank = df[f"x_{s}"].astype(str).str.strip() == ""
        if blank.any():
            raise ValueError(f"`pairs`: column `x_{s}` has empty prompts at row(s) "
                             + ", ".join(str(int(r)) for r in np.flatnonzero(blank.to_numpy())[:5]))
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend (kind, model, generate)")
    if judge_backend is not None and not isinstance(judge_backend, Backend):
        raise TypeError("`judge_backend` must implement ipcausal.backends.Backend or be None")
    if not isinstance(scorer, str):
        raise TypeError(f"`scorer` must be the name of a registered scorer, got {type(scorer).__name__}")
    entry = check_scorer(scorer, list(pairs.columns) + ["y_i", "y_j"], backend=judge_backend, k=k, rater=rater)
    outcome = entry.outcome
    if outcome == "similarity":
        if bound is not None:
            raise ValueError(f"`bound` applies to interval scorers only; scorer {scorer!r} gives similarities "
                             "(tested with the sequential sign test)")
    else:
        bound = default_bound(scorer, rater=rater, k=k) if bound is None else _positive(bound, "bound")
    alpha = open_unit(alpha, "alpha")
    correction = choice(correction, "correction", CORRECTIONS)
    if margin is not None:
        margin = _positive(margin, "margin")
        if outcome == "similarity" and margin >= 0.5:
            raise ValueError(f"`margin` is on the scale of the share below m0 for similarity scorers and must "
                             f"be < 0.5, got {margin!r}")
    batch_size = positive_int(batch_size, "batch_size")
    if max_pairs is not None:
        max_pairs = positive_int(max_pairs, "max_pairs")
    if cache is not None and not isinstance(cache, (str, os.PathLike, ResponseCache)):
        raise TypeError(f"`cache` must be a path, a ResponseCache or None, got {type(cache).__name__}")
    config = GenerationConfig() if config is None else config
    if not isinstance(config, GenerationConfig):
        raise TypeError(f"`config` must be a GenerationConfig, got {type(config).__name__}")
    if system is not None and (not isinstance(system, str) or not system.strip()):
        raise ValueError("`system` must be a non-empty string or None")
    if concurrency is not None:
        concurrency = positive_int(concurrency, "concurrency")
    cluster = validate_cluster(cluster, pairs)
    backgrounds = set(df["background_i"].astype(str)) | set(df["background_j"].astype(str))
    order = validate_order(order, backgrounds)
    if isinstance(m0, bool) or not isinstance(m0, numbers.Real) or not 0.0 < float(m0) <= 1.0:
        raise ValueError(f"`m0` must be a number in (0, 1] (a median similarity), got {m0!r}")
    if alternative is None:
        alternative = "two-sided" if outcome == "interval" else "less"
    alternative = choice(alternative, "alternative", ("two-sided", "greater", "less"))
    method = choice(method, "method", METHODS)
    unparseable = check_policy(unparseable)
    positive_int(retries, "retries", minimum=0)
    if not (isinstance(progress, bool) or hasattr(progress, "update")):
        raise TypeError("`progress` must be True, False or a tqdm-like object with `update`")
    return dict(pairs=pairs, outcome=outcome, bound=bound, alpha=alpha, correction=correction, margin=margin,
                batch_size=batch_size, max_pairs=max_pairs, config=config, system=system, concurrency=concurrency,
                cluster=cluster, order=order, m0=float(m0), alternative=alternative, method=method,
                unparseable=unparseable)


def _stop_if_nothing_came_back(got: PairSet) -> None:
    """A batch in which every request failed stops the audit (a server down would fail them all)."""
    from ipcausal.backends.base import BackendError

    df = got.to_frame()
    if df["y_i"].isna().all() and df["y_j"].isna().all():
        reason = next((e for e in list(df["error_i"]) + list(df["error_j"]) if isinstance(e, str)), "no response")
        raise BackendError(f"every request of a batch failed ({reason}); the audit stopped. The answers so far "
                           "are in the cache: run it again to continue")


def _bar(progress: Any, total: int) -> Any:
    if progress is False:
        return None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - tqdm is a dependency of the CLI extra
            return None
        import sys

        return tqdm(total=total, unit="pair", desc="ipcausal audit", file=sys.stderr, dynamic_ncols=True)
    return progress


def _postfix(p: Plan) -> str:
    parts = [f"{s.a}~{s.b} e={s.state.e_value:.3g}" + ("" if s.reason is None else f" ({s.reason})")
             for s in p.streams]
    text = "; ".join(parts[:4])
    return text + (f"; … {len(parts) - 4} more" if len(parts) > 4 else "")


def run_audit(pairs: Any, *, backend: Any, scorer: str, bound: float | None = None, alpha: float = 0.05,
              correction: str = "e-holm", margin: float | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
              max_pairs: int | None = None, rng: int | np.random.Generator | None = None,
              cache: str | os.PathLike[str] | Any | None = None, config: Any = None, system: str | None = None,
              concurrency: int | None = None, cluster: str | None = None, order: Any = None, m0: float = 0.8,
              alternative: str | None = None, method: str = "mixture", unparseable: str = "exclude",
              judge_backend: Any = None, rater: Any = None, embedder: Any = None, k: int | None = None,
              retries: int = 2, progress: bool | Any = False) -> AuditRun:
    """:func:`audit`, returning the responses, the scored pairs and the run summary beside the Report.

    Takes the arguments of :func:`audit`; see there.

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=2.0, levels=5, seed=1)
    >>> ps = sim.study(n=300, rng=0).drop_columns("y_i", "y_j", "score_i", "score_j", "model")
    >>> res = run_audit(ps, backend=sim, scorer="essay", rater=sim.score, bound=4, rng=0)
    >>> res.counts["pairs_sent"] < 300, res.report.groups[0].sequential.stop_reason
    (True, 'rejected')
    """
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.scoring import score_pairs

    opts = _validate(pairs, backend, scorer, bound, alpha, correction, margin, batch_size, max_pairs, cache, config,
                     system, concurrency, cluster, order, m0, alternative, method, unparseable, judge_backend, rater,
                     k, retries, progress)
    gen = as_generator(rng)
    ps: PairSet = opts["pairs"]
    model = str(getattr(backend, "model", "?"))
    p = plan(ps, opts, gen)
    rc = cache if isinstance(cache, ResponseCache) else ResponseCache(":memory:" if cache is None else cache)
    bar = _bar(progress, p.n_pairs if opts["max_pairs"] is None else min(p.n_pairs, opts["max_pairs"]))
    answered: list[PairSet] = []
    scored: list[PairSet] = []
    batches = 0
    stored = len(rc)  # samples in the cache before: what is added is what the model was asked
    try:
        while True:
            rows = next_batch(p, opts["batch_size"], opts["max_pairs"])
            if rows is None:
                break
            sub = PairSet.from_frame(p.frame.iloc[rows].reset_index(drop=True))
            got = run(sub, backend, cache=rc, config=opts["config"], system=opts["system"],
                      concurrency=opts["concurrency"], progress=False, preflight=batches == 0)
            answered.append(got)
            batches += 1
            _stop_if_nothing_came_back(got)
            try:
                res = score_pairs(got, scorer, backend=judge_backend, rater=rater, embedder=embedder, k=k,
                                  retries=retries, unparseable=opts["unparseable"])
                scored.append(res.pairs)
                feed_batch(p, res.pairs)
            except ValueError as exc:
                if not str(exc).startswith("no pair could be scored"):
                    raise
                feed_batch(p, None)
            decide(p, opts)
            if bar is not None:
                bar.update(len(rows))
                if hasattr(bar, "set_postfix_str"):
                    bar.set_postfix_str(_postfix(p), refresh=False)
        asked = (len(rc) - stored) // opts["config"].n
    finally:
        if bar is not None and progress is True:
            bar.close()
        if rc is not cache:
            rc.close()
    responses = PairSet.concat(answered)
    summary = summarize(responses)
    sent = len(responses)
    counts = {"pairs_available": p.n_pairs, "pairs_sent": sent, "pairs_scored": sum(len(s) for s in scored),
              "requests_full": 2 * p.n_pairs, "requests_sent": 2 * sent, "requests_saved": 2 * (p.n_pairs - sent),
              "requests_new": asked, "batches": batches}
    seed = rng if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) else None
    report = assemble(p, opts, model=model, counts=counts, seed=seed)
    return AuditRun(report, responses, PairSet.concat(scored) if scored else None, summary, counts)


def audit(pairs: Any, *, backend: Any, scorer: str, bound: float | None = None, alpha: float = 0.05,
          correction: str = "e-holm", margin: float | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
          max_pairs: int | None = None, rng: int | np.random.Generator | None = None,
          cache: str | os.PathLike[str] | Any | None = None, config: Any = None, system: str | None = None,
          concurrency: int | None = None, cluster: str | None = None, order: Any = None, m0: float = 0.8,
          alternative: str | None = None, method: str = "mixture", unparseable: str = "exclude",
          judge_backend: Any = None, rater: Any = None, embedder: Any = None, k: int | None = None,
          retries: int = 2, progress: bool | Any = False) -> Report:
    """Audit a model for implicit personalization, stopping as soon as every background pair is decided.

    Interval scorers (``mcq``, ``essay``): per group a betting e-process for mean(Δ) = 0,
    Δ = score(background_b) − score(background_a), |Δ| ≤ ``bound`` (H0: every Δ has mean 0 given
    the pairs before it).  Similarity scorers: the sequential sign test of median(s) = ``m0``
    against ``alternative`` (the study's 0.8 and "less"; ties dropped).  The unit of the stream is
    the pair, or the cluster with ``cluster``: a cluster is one observation — the sum of its Δ,
    bounded by ``bound`` × the largest cluster size (similarities: the cluster's mean).  With
    repeated samples (``config.n > 1``) a pair's Δ is mean(scores_j) − mean(scores_i) and its
    similarity the mean over the sample pairs (as :func:`ipcausal.scoring.score_pairs` gives).  See the
    module docstring for the order, the batches, the decisions and the guarantee.

    Parameters
    ----------
    pairs : PairSet, pandas.DataFrame or path
        Pairs with prompts ``x_i``/``x_j`` (any responses in them are ignored).
    backend : Backend
        The model under test.
    scorer : str
        A registered scorer (:data:`ipcausal.scoring.SCORERS`).
    bound : float, optional
        Known bound on |Δ| (interval scorers).  Default: 1 for ``mcq``, 5 for ``essay`` ratings 1..6;
        required for a custom ``rater``.  Not allowed for similarity scorers.
    alpha : float
        Family-wise level within the model: a group is rejected when its (e-Holm adjusted) e-value
        reaches 1/α.
    correction : {"e-holm", "e-bonferroni", "none"}
        Combination of the groups' e-values (valid under any dependence).
    margin : float, optional
        Equivalence margin: a group whose confidence sequence (level 1 − α) lies inside
        (−margin, margin) is decided "equivalent" and stops (similarity: the share below m0 inside
        (1/2 − margin, 1/2 + margin)).
    batch_size : int
        Pairs sent per batch (whole clusters: a batch may hold a few more).
    max_pairs : int, optional
        Send at most this many pairs in all.
    rng : int, numpy.random.Generator or None
        The order of the pairs.  An integer makes the audit resumable from its cache.
    cache : path, ResponseCache or None
        The response cache (SQLite; crash-safe).  ``None``: in memory, for this call only.
    config : GenerationConfig, optional
        Generation settings (default greedy, seed 0, 256 tokens).
    system : str, optional
        A system message before each prompt.
    concurrency : int, optional
        Requests in flight (backend default).
    cluster : str, optional
        The column naming each pair's cluster.
    order : list of str, optional
        The backgrounds in order (Δ = score(later) − score(earlier)); needed for a one-sided
        ``alternative`` when a group is stored both ways.
    m0 : float
        Null median of the similarity, in (0, 1].
    alternative : {"two-sided", "greater", "less"}, optional
        Default two-sided (interval), "less" (similarity).
    method : {"mixture", "agrapa", "ons"}
        The bet (:func:`ipcausal.stats.sequential_state`).
    unparseable : {"exclude", "zero"}
        Policy for unscoreable answers (:func:`ipcausal.scoring.score_pairs`).
    judge_backend, rater, embedder, k, retries
        Scorer options, as ``backend``, ``rater``, ``embedder``, ``k``, ``retries`` of
        :func:`~ipcausal.scoring.score_pairs`.
    progress : bool or tqdm-like
        A progress bar on stderr with each group's current e-value.

    Returns
    -------
    Report
        ``method`` is ``"sequential"``; each group's ``test`` is ``"sequential"`` and its
        ``sequential`` (a :class:`~ipcausal.study.results.SequentialInfo`) carries ``n_available``,
        ``n_sent``, ``stop_reason`` (one of :data:`STOP_REASONS`), ``e_value``, ``e_adjusted`` and
        the e-process path (``path_n``, ``path_e``); ``audit`` (an
        :class:`~ipcausal.study.results.AuditInfo`) holds the counts.

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=0.0, levels=5, seed=2)
    >>> ps = sim.study(n=60, rng=0).drop_columns("y_i", "y_j", "score_i", "score_j", "model")
    >>> r = ipcausal.audit(ps, backend=sim, scorer="essay", rater=sim.score, bound=4, rng=0)
    >>> r.method, r.groups[0].sequential.stop_reason, r.groups[0].sequential.n_sent, r.ip_detected
    ('sequential', 'exhausted', 60, False)
    """
    return run_audit(pairs, backend=backend, scorer=scorer, bound=bound, alpha=alpha, correction=correction,
                     margin=margin, batch_size=batch_size, max_pairs=max_pairs, rng=rng, cache=cache, config=config,
                     system=system, concurrency=concurrency, cluster=cluster, order=order, m0=m0,
                     alternative=alternative, method=method, unparseable=unparseable, judge_backend=judge_backend,
                     rater=rater, embedder=embedder, k=k, retries=retries, progress=progress).report
