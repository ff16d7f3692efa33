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
:mod:`ipcausal.study.streams`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipcausal.pairs import PairSet
from ipcausal._validate import as_generator
from ipcausal.study.streams import CORRECTIONS, Plan, assemble, decide, feed_batch, next_batch, plan
from ipcausal.study.defaults import AUDIT_BATCH_SIZE
from ipcausal.study.groups import validate_cluster, validate_order
from ipcausal.study.inputs import as_pairset, check_progress, check_prompts
from ipcausal.study.options import AuditSettings, RunOptions, given
from ipcausal.study.record import Counts
from ipcausal.study.results import Report
from ipcausal.study.run import RunSummary, run, summarize

__all__ = ["audit", "AuditRun", "AuditSettings", "RunOptions", "CORRECTIONS", "STOP_REASONS", "DEFAULT_BATCH_SIZE"]

#: Why a group's stream stopped.
STOP_REASONS = ("rejected", "equivalent", "exhausted", "max_pairs")
DEFAULT_BATCH_SIZE = AUDIT_BATCH_SIZE


@dataclass(frozen=True)
class AuditRun:
    """What :func:`audit` returns: the Report and what the CLI writes beside it.

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
    counts : Counts
        ``pairs_available``, ``pairs_sent``, ``pairs_scored``, ``requests_full``, ``requests_sent``,
        ``requests_saved``, ``requests_new`` (distinct requests asked of the model in this call: a prompt
        shared by several pairs is asked once) and ``batches``.
    """

    report: Report
    responses: PairSet
    scored: PairSet | None
    summary: RunSummary
    counts: Counts


def _resolve(pairs: Any, backend: Any, scorer: Any, settings: Any, options: Any, unparseable: Any,
             progress: Any) -> tuple[PairSet, AuditSettings, str, float | None, str, Any, RunOptions]:
    """Every argument checked before the first request (errors name the parameter): the pairs, the
    settings resolved against them (alternative, cluster, order), the outcome, the bound on |Δ|, the
    unparseable policy, the scorer and the run options."""
    from dataclasses import replace

    from ipcausal.backends.base import Backend
    from ipcausal.outcomes import get_outcome
    from ipcausal.scoring import check_policy, check_scorer, get_scorer

    pairs = as_pairset(pairs)
    if len(pairs) == 0:
        raise ValueError("`pairs` is empty: there is nothing to audit")
    df = pairs.to_frame()
    check_prompts(df)
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend (kind, model, generate)")
    settings = given(settings, AuditSettings, "settings")
    options = given(options, RunOptions, "options")
    made = get_scorer(scorer)
    backend_of_judge = made.options.get("backend")
    if backend_of_judge is not None and not isinstance(backend_of_judge, Backend):
        raise TypeError("the scorer's `backend` (the judge) must implement ipcausal.backends.Backend")
    entry = check_scorer(made, list(pairs.columns) + ["y_i", "y_j"])
    outcome = get_outcome(entry.outcome)
    bound = entry.bound
    if outcome.directed and bound is None:
        raise ValueError(f"`bound` is required for scorer {made.describe()!r}: make it with "
                         f"get_scorer({made.name!r}, ..., bound=B), B the largest possible |score_j − score_i| "
                         "(e.g. k − 1 for a k-point rating)")
    margin = settings.margin
    if margin is not None and not outcome.directed and margin >= 0.5:
        raise ValueError(f"`margin` is on the scale of the share below m0 for similarity scorers and must "
                         f"be < 0.5, got {margin!r}")
    backgrounds = set(df["background_i"].astype(str)) | set(df["background_j"].astype(str))
    settings = replace(settings, cluster=validate_cluster(settings.cluster, pairs),
                       order=validate_order(settings.order, backgrounds),
                       alternative=settings.alternative or outcome.default_alternative)
    unparseable = check_policy(unparseable)
    check_progress(progress)
    return pairs, settings, outcome.name, bound if outcome.directed else None, unparseable, made, options


def _stop_if_nothing_came_back(got: PairSet) -> None:
    """A batch in which every request failed stops the audit (a server down would fail them all)."""
    from ipcausal.backends.base import BackendError

    df = got.to_frame()
    if df["y_i"].isna().all() and df["y_j"].isna().all():
        reason = next((e for e in list(df["error_i"]) + list(df["error_j"]) if isinstance(e, str)), "no response")
        raise BackendError(f"every request of a batch failed ({reason}); the audit stopped. The answers so far "
                           "are in the cache: run it again to continue")


def _postfix(p: Plan) -> str:
    parts = [f"{s.a}~{s.b} e={s.state.e_value:.3g}" + ("" if s.reason is None else f" ({s.reason})")
             for s in p.streams]
    text = "; ".join(parts[:4])
    return text + (f"; … {len(parts) - 4} more" if len(parts) > 4 else "")


def audit(pairs: Any, *, backend: Any, scorer: Any, settings: AuditSettings | None = None,
          options: RunOptions | None = None, rng: int | np.random.Generator | None = None,
          unparseable: str = "exclude", progress: bool | Any = False) -> AuditRun:
    """Audit a model for implicit personalization, stopping as soon as every background pair is decided.

    Interval scorers (``mcq``, ``essay``): per group a betting e-process for mean(Δ) = 0,
    Δ = score(background_b) − score(background_a), |Δ| ≤ the scorer's ``bound`` (H0: every Δ has
    mean 0 given the pairs before it).  Similarity scorers: the sequential sign test of
    median(s) = ``m0`` against ``alternative`` (the study's 0.8 and "less"; ties dropped).  The unit
    of the stream is the pair, or the cluster with ``settings.cluster``: a cluster is one
    observation — the sum of its Δ, bounded by ``bound`` × the largest cluster size (similarities:
    the cluster's mean).  With repeated samples (``config.n > 1``) a pair's Δ is
    mean(scores_j) − mean(scores_i) and its similarity the mean over the sample pairs (as
    :func:`ipcausal.scoring.score_pairs` gives).  See the module docstring for the order, the
    batches, the decisions and the guarantee.

    Parameters
    ----------
    pairs : PairSet, pandas.DataFrame or path
        Pairs with prompts ``x_i``/``x_j`` (any responses in them are ignored).
    backend : Backend
        The model under test.
    scorer : Scorer or str
        How responses are scored, made with its options (:func:`ipcausal.scoring.get_scorer`: e.g.
        ``get_scorer("essay", rater=my_rater, bound=4)``, ``get_scorer("judge", backend=judge)``).
        Its ``bound`` on |Δ| (interval scorers: 1 for ``mcq``, 5 for ``essay`` ratings 1..6) is the
        e-process's; a custom ``rater`` needs ``bound=``.
    settings : AuditSettings, optional
        The sequential test's options (``alpha``, ``correction``, ``margin``, ``batch_size``,
        ``max_pairs``, ``m0``, ``alternative``, ``method``, ``cluster``, ``order``); default
        ``AuditSettings()``.
    options : RunOptions, optional
        How requests are sent (``config``, ``system``, ``concurrency``, ``cache``).  With
        ``cache=None`` the cache lives in memory for this call only.
    rng : int, numpy.random.Generator or None
        The order of the pairs.  An integer makes the audit resumable from its cache.
    unparseable : {"exclude", "zero"}
        Policy for unscoreable answers (:func:`ipcausal.scoring.score_pairs`).
    progress : bool or tqdm-like
        A progress bar on stderr with each group's current e-value.

    Returns
    -------
    AuditRun
        ``report``: ``method`` is ``"sequential"``; each group's ``test`` is ``"sequential"`` and it
        carries ``n_available``, ``n_sent``, ``stop_reason`` (one of :data:`STOP_REASONS`),
        ``e_value``, ``e_adjusted`` and the e-process path (``path_n``, ``path_e``); ``audit`` holds
        the counts.  Beside it the responses, the scored pairs, the run summary and the counts.

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.scoring import get_scorer
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=0.0, levels=5, seed=2)
    >>> ps = sim.study(n=60, rng=0).drop_columns("y_i", "y_j", "score_i", "score_j", "model")
    >>> res = ipcausal.audit(ps, backend=sim, scorer=get_scorer("essay", rater=sim.score, bound=4), rng=0)
    >>> r = res.report
    >>> r.method, r.groups[0].sequential.stop_reason, r.groups[0].sequential.n_sent, r.ip_detected
    ('sequential', 'exhausted', 60, False)
    >>> sim = SimulatedModel(effect=2.0, levels=5, seed=1)
    >>> ps = sim.study(n=300, rng=0).drop_columns("y_i", "y_j", "score_i", "score_j", "model")
    >>> res = ipcausal.audit(ps, backend=sim, scorer=get_scorer("essay", rater=sim.score, bound=4), rng=0)
    >>> res.counts.pairs_sent < 300, res.report.groups[0].sequential.stop_reason
    (True, 'rejected')
    """
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.scoring import NoScorablePairs, score_pairs
    from ipcausal.study.progress import bar

    ps, opts, outcome, bound, unparseable, made, send = _resolve(pairs, backend, scorer, settings, options,
                                                                unparseable, progress)
    gen = as_generator(rng)
    model = str(getattr(backend, "model", "?"))
    p = plan(ps, opts, gen, outcome=outcome, bound=bound)
    cache, config = send.cache, send.generation
    rc = cache if isinstance(cache, ResponseCache) else ResponseCache(":memory:" if cache is None else cache)
    pbar = bar(progress, p.n_pairs if opts.max_pairs is None else min(p.n_pairs, opts.max_pairs), unit="pair",
               desc="ipcausal audit")
    answered: list[PairSet] = []
    scored: list[PairSet] = []
    batches = 0
    stored = len(rc)  # samples in the cache before: what is added is what the model was asked
    try:
        while True:
            rows = next_batch(p, opts.batch_size, opts.max_pairs)
            if rows is None:
                break
            sub = PairSet.from_frame(p.frame.iloc[rows].reset_index(drop=True))
            got = run(sub, backend, cache=rc, config=config, system=send.system, concurrency=send.concurrency,
                      progress=False, preflight=batches == 0)
            answered.append(got)
            batches += 1
            _stop_if_nothing_came_back(got)
            try:
                res = score_pairs(got, made, unparseable=unparseable)
                scored.append(res.pairs)
                feed_batch(p, res.pairs)
            except NoScorablePairs:
                feed_batch(p, None)
            decide(p, opts)
            if pbar is not None:
                pbar.update(len(rows))
                if hasattr(pbar, "set_postfix_str"):
                    pbar.set_postfix_str(_postfix(p), refresh=False)
        asked = (len(rc) - stored) // config.n
    finally:
        if pbar is not None and progress is True:
            pbar.close()
        if rc is not cache:
            rc.close()
    responses = PairSet.concat(answered)
    summary = summarize(responses)
    sent = len(responses)
    counts = Counts(pairs_available=p.n_pairs, pairs_sent=sent, pairs_scored=sum(len(s) for s in scored),
                    requests_full=2 * p.n_pairs, requests_sent=2 * sent, requests_saved=2 * (p.n_pairs - sent),
                    requests_new=asked, batches=batches)
    seed = rng if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) else None
    report = assemble(p, opts, model=model, counts=counts, seed=seed)
    return AuditRun(report, responses, PairSet.concat(scored) if scored else None, summary, counts)


def _run_audit(pairs: Any, *, backend: Any, scorer: str, bound: float | None = None, rng: Any = None,
               unparseable: str = "exclude", progress: bool | Any = False, **old: Any) -> AuditRun:
    """``run_audit`` of 0.1's first releases: its keywords mapped onto :func:`audit`'s objects."""
    from dataclasses import fields

    from ipcausal.scoring import get_scorer

    made = get_scorer(scorer, backend=old.pop("judge_backend", None), rater=old.pop("rater", None),
                      embedder=old.pop("embedder", None), k=old.pop("k", None), retries=old.pop("retries", None),
                      bound=bound)
    run_keys = {f.name for f in fields(RunOptions)}
    settings = AuditSettings(**{k: old.pop(k) for k in [f.name for f in fields(AuditSettings)] if k in old})
    options = RunOptions(**{k: old.pop(k) for k in sorted(run_keys) if k in old})
    if old:
        raise TypeError(f"run_audit() got unexpected keyword(s) {sorted(old)}")
    return audit(pairs, backend=backend, scorer=made, settings=settings, options=options, rng=rng,
                 unparseable=unparseable, progress=progress)


def __getattr__(name: str) -> Any:
    """``run_audit``, renamed :func:`audit` in 0.1 (its options now travel as AuditSettings/RunOptions)."""
    if name == "run_audit":
        from ipcausal._lazy import moved_warning

        moved_warning("ipcausal.study.audit.run_audit", "ipcausal.audit (settings=AuditSettings(...), "
                      "options=RunOptions(...), scorer=get_scorer(...))", since="0.1")
        return _run_audit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
