"""The streams of :func:`ipcausal.audit`: the plan, the batches, the decisions and the Report.

:func:`plan` groups the pairs (unordered background pair, oriented as :func:`ipcausal.test`
orients it), cuts them into units (a pair, or a whole cluster) and draws the order of the units
from the generator.  :func:`next_batch` takes the next units of the groups still undecided;
:func:`feed_batch` updates each group's e-process with the batch's scored units in that order;
:func:`decide` combines the e-values after each batch and marks the decided groups;
:func:`assemble` turns the final state into a :class:`~ipcausal.study.results.Report`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ipcausal.outcomes import directed
from ipcausal.pairs import PairSet
from ipcausal.stats.betting import SequentialState, sequential_sign_state, sequential_state, sequential_update
from ipcausal.stats.eholm import e_bonferroni, e_holm
from ipcausal.stats.null import sample_summary
from ipcausal.study.defaults import AUDIT_CORRECTIONS as CORRECTIONS
from ipcausal.study.groups import orient
from ipcausal.study.results import AuditInfo, GroupResult, Report, SequentialInfo

__all__ = ["CORRECTIONS", "Stream", "Plan", "plan", "next_batch", "feed_batch", "feed_units", "decide", "assemble", "MAX_PATH"]

MAX_PATH = 400  # points of the e-process path kept per group (thinned evenly beyond)
_E_CAP = 1e300


@dataclass
class Stream:
    """One group's stream (mutable while the audit runs)."""

    a: str
    b: str
    state: SequentialState
    n_pairs: int
    n_units: int
    remaining: int
    sent: int = 0
    used: int = 0
    units_used: int = 0
    total: float = 0.0
    values: list[float] = field(default_factory=list)
    path_n: list[int] = field(default_factory=lambda: [0])
    path_e: list[float] = field(default_factory=lambda: [1.0])
    reason: str | None = None
    e_adjusted: float = 1.0
    max_adjusted: float = 0.0
    cluster_sizes: set[int] = field(default_factory=set)


@dataclass
class Plan:
    """Everything the audit loop needs: the frame, the units in their order, the streams."""

    frame: Any
    units: list[np.ndarray]
    unit_stream: np.ndarray
    order: np.ndarray
    sign: np.ndarray
    streams: list[Stream]
    outcome: str
    clustered: bool
    pos: int = 0
    sent: int = 0
    capped: bool = False
    batch_units: list[int] = field(default_factory=list)

    @property
    def n_pairs(self) -> int:
        """Pairs available."""
        return len(self.frame)


def plan(ps: PairSet, opts: Any, gen: np.random.Generator) -> Plan:
    """Groups, units and the seeded order of the units (a permutation drawn from ``gen``)."""
    df = ps.to_frame().reset_index(drop=True)
    bi = df["background_i"].astype(str).to_numpy(object)
    bj = df["background_j"].astype(str).to_numpy(object)
    keys: dict[frozenset[str], list[int]] = {}
    for r, (x, y) in enumerate(zip(bi, bj)):
        if x == y:
            raise ValueError(f"`pairs`: row {r} has the same background on both sides ({x!r})")
        keys.setdefault(frozenset((x, y)), []).append(r)
    cluster = opts.cluster
    labels = df[cluster].astype(str).to_numpy(object) if cluster is not None else None
    streams: list[Stream] = []
    units: list[np.ndarray] = []
    unit_stream: list[int] = []
    sign = np.ones(len(df))
    interval = directed(opts.outcome)
    rank = {b: i for i, b in enumerate(opts.order)} if opts.order is not None else None
    for key in sorted(keys, key=lambda k: sorted(k)):
        idx = np.asarray(keys[key])
        low, high = sorted(key)
        forward = int(np.sum(bi[idx] == low))
        a, b = orient(low, high, forward, idx.size, rank=rank, one_sided=interval and opts.alternative != "two-sided")
        if interval:
            sign[idx] = np.where(bi[idx] == a, 1.0, -1.0)
        if labels is None:
            group_units = [np.array([r]) for r in idx]
        else:
            by: dict[str, list[int]] = {}
            for r in idx:
                by.setdefault(labels[r], []).append(int(r))
            group_units = [np.asarray(v) for v in by.values()]
        biggest = max(u.size for u in group_units)
        if interval:
            state = sequential_state(bound=opts.bound * biggest, alpha=opts.alpha,
                                     alternative=opts.alternative, method=opts.method)
        else:
            state = sequential_sign_state(m0=opts.m0, alpha=opts.alpha, alternative=opts.alternative,
                                          method=opts.method)
        s = len(streams)
        streams.append(Stream(a, b, state, int(idx.size), len(group_units), len(group_units)))
        units.extend(group_units)
        unit_stream.extend([s] * len(group_units))
    order = gen.permutation(len(units))
    return Plan(df, units, np.asarray(unit_stream), order, sign, streams, opts.outcome, labels is not None)


def next_batch(p: Plan, batch_size: int, max_pairs: int | None) -> np.ndarray | None:
    """The rows of the next batch (whole units of undecided groups, in order), or ``None`` when done."""
    if all(s.reason is not None for s in p.streams):
        return None
    rows: list[np.ndarray] = []
    p.batch_units = []
    size = 0
    while p.pos < p.order.size and size < batch_size:
        u = int(p.order[p.pos])
        s = p.streams[p.unit_stream[u]]
        if s.reason is not None:
            p.pos += 1
            continue
        n = int(p.units[u].size)
        if max_pairs is not None and p.sent + size + n > max_pairs:
            p.capped = True
            break
        rows.append(p.units[u])
        p.batch_units.append(u)
        size += n
        s.remaining -= 1
        s.sent += n
        p.pos += 1
    if not rows:
        return None
    p.sent += size
    return np.concatenate(rows)


def feed_batch(p: Plan, scored: PairSet | None) -> None:
    """Each unit of the last batch (in order) into its group's e-process: Δ sum, or mean similarity."""
    value: dict[str, float] = {}
    if scored is not None:
        sdf = scored.to_frame()
        ids = sdf["pair_id"].astype(str).tolist()
        if directed(p.outcome) and "scores_i" in sdf.columns and "scores_j" in sdf.columns:
            vals = [_sample_delta(a, b) for a, b in zip(sdf["scores_i"], sdf["scores_j"])]  # repeated samples
        elif directed(p.outcome):
            vals = (sdf["score_j"].to_numpy(np.float64) - sdf["score_i"].to_numpy(np.float64)).tolist()
        else:
            vals = sdf["similarity"].to_numpy(np.float64).tolist()
        value = {i: v for i, v in zip(ids, vals) if v == v}  # a pair without a scored sample is left out
    pid = p.frame["pair_id"].astype(str).to_numpy(object)
    feed_units(p, [(u, [value[pid[q]] * (p.sign[q] if directed(p.outcome) else 1.0) for q in p.units[u]
                        if pid[q] in value]) for u in p.batch_units])


def feed_units(p: Plan, units: list[tuple[int, list[float]]]) -> None:
    """Units (index, the oriented values of its scored pairs) into their groups' e-processes, in order.

    A unit without a scored pair is left out; the others enter as the sum of their Δ (interval)
    or the mean of their similarities.  :func:`feed_batch` calls it for the last batch, and
    :class:`ipcausal.interop.inspect.IPEarlyStopping` for the pairs inspect_ai has completed.
    """
    per: dict[int, list[float]] = {}
    for u, got in units:
        if not got:
            continue
        s = p.unit_stream[u]
        stream = p.streams[s]
        v = float(np.sum(got)) if directed(p.outcome) else float(np.mean(got))
        per.setdefault(int(s), []).append(v)
        stream.used += len(got)
        stream.units_used += 1
        stream.cluster_sizes.add(len(got))
    for s, vals in per.items():
        stream = p.streams[s]
        try:
            stream.state = sequential_update(stream.state, vals, name="bound")
        except ValueError as exc:
            if directed(p.outcome):
                raise ValueError(f"`bound` is too small for the scores: {exc}; give the largest possible "
                                 "|score_j − score_i|") from None
            raise
        stream.values.extend(vals)
        stream.total += float(np.sum(vals))
        stream.path_n.append(stream.sent)
        stream.path_e.append(min(_E_CAP, _e(stream.state)))


def _sample_delta(si: Any, sj: Any) -> float:
    """mean(scores_j) − mean(scores_i) over a pair's scored samples (NaN when a side has none)."""
    a, b = np.asarray(list(si) if si is not None else [], float), np.asarray(list(sj) if sj is not None else [], float)
    return float(b.mean() - a.mean()) if a.size and b.size else math.nan


def _e(state: SequentialState) -> float:
    try:
        return state.e_value
    except OverflowError:  # pragma: no cover - an e-value beyond 1e308
        return math.inf


def decide(p: Plan, opts: Any) -> None:
    """Combine the e-values across the groups (e-Holm / e-Bonferroni) and mark the decided groups."""
    e = np.array([min(_E_CAP, _e(s.state)) for s in p.streams])
    alpha = opts.alpha
    if opts.correction == "e-holm":
        adjusted = np.asarray(e_holm(e, alpha=alpha).e_adjusted)
    elif opts.correction == "e-bonferroni":
        adjusted = np.asarray(e_bonferroni(e, alpha=alpha).e_adjusted)
    else:
        adjusted = e
    for s, adj in zip(p.streams, adjusted):
        s.e_adjusted = float(adj)
        s.max_adjusted = max(s.max_adjusted, float(adj))
        if s.reason is not None:
            continue
        crossed = s.state.reject if opts.correction == "none" else adj >= 1.0 / alpha
        if crossed:
            s.reason = "rejected"
        elif opts.margin is not None and s.state.n > 0 and s.state.equivalent(opts.margin):
            s.reason = "equivalent"


def _thin(n: list[int], e: list[float]) -> tuple[tuple[int, ...], tuple[float, ...]]:
    if len(n) > MAX_PATH:
        keep = np.unique(np.round(np.linspace(0, len(n) - 1, MAX_PATH)).astype(int))
        n, e = [n[i] for i in keep], [e[i] for i in keep]
    return tuple(int(x) for x in n), tuple(float(x) for x in e)


def assemble(p: Plan, opts: Any, *, model: str, counts: dict[str, int], seed: int | None) -> Report:
    """The Report of the audit: one :class:`GroupResult` per group, ``audit`` with the counts."""
    groups = []
    alpha, interval = opts.alpha, directed(p.outcome)
    for s in p.streams:
        if s.reason is None:
            s.reason = "exhausted" if s.remaining == 0 else "max_pairs"
        st = s.state
        detail = st.result()
        equal = len(s.cluster_sizes) <= 1
        if interval:
            scale = (next(iter(s.cluster_sizes)) if s.cluster_sizes else 1) if p.clustered and equal else 1
            effect = s.total / s.used if s.used and (equal or not p.clustered) else (
                s.total / s.units_used if s.units_used else math.nan)
            lo, hi = st.ci_low / scale, st.ci_high / scale
            statistic = s.total / s.units_used if s.units_used else math.nan
        else:  # the share of untied similarities below m0 (1/2 under H0), which the CS covers
            v = np.asarray(s.values, dtype=np.float64)
            untied = v[v != opts.m0]
            statistic = effect = float(np.mean(untied < opts.m0)) if untied.size else math.nan
            lo, hi = st.ci_low, st.ci_high
        if opts.correction == "none":
            p_adj = st.pvalue
        else:
            p_adj = min(1.0, 1.0 / s.max_adjusted) if s.max_adjusted > 0 else 1.0
        label = f"Δ = score({s.b}) − score({s.a})" if interval else "similarity"
        if p.clustered:
            label += ", summed per cluster" if interval else ", mean per cluster"
        path_n, path_e = _thin(s.path_n, s.path_e)
        groups.append(GroupResult(
            model=model, group=f"{s.a} vs {s.b}", background_a=s.a, background_b=s.b, outcome=p.outcome,
            test="sequential", n=s.used, statistic=float(statistic), effect=float(effect), ci_low=float(lo),
            ci_high=float(hi), pvalue=float(st.pvalue), pvalue_adjusted=float(p_adj), reject=s.reason == "rejected",
            detail=detail, data=sample_summary(s.values, label=label) if s.values else None, null=None,
            observed=float(statistic), n_clusters=s.units_used if p.clustered else None,
            unit="clusters" if p.clustered else "pairs", ci_method=f"confidence sequence: {detail.ci_method}",
            sequential=SequentialInfo(n_available=s.n_pairs, n_sent=s.sent, stop_reason=s.reason,
                                      e_value=min(_E_CAP, _e(st)), e_adjusted=s.e_adjusted, path_n=path_n,
                                      path_e=path_e)))
    m = len(groups)
    stopped = ("decided" if all(s.reason in ("rejected", "equivalent") for s in p.streams)
               else "max_pairs" if p.capped else "exhausted")
    info = AuditInfo(**{k: v for k, v in counts.items() if k != "requests_new"},  # requests_new: of the run
                     stopped=stopped, batch_size=opts.batch_size, max_pairs=opts.max_pairs,
                     margin=opts.margin, bound=opts.bound, bet=opts.method,
                     alternative=opts.alternative, threshold=1.0 / alpha,
                     threshold_all=(m / alpha) if opts.correction != "none" else 1.0 / alpha, groups=m,
                     seed=seed, cluster=opts.cluster)
    if interval:
        direction = "Δ = score(background_b) − score(background_a); effect = mean(Δ)"
    else:
        direction = (f"effect = share of the similarities below {opts.m0:g} (ties dropped; 1/2 under H0), "
                     "with its confidence sequence")
    h0 = groups[0].detail.null_hypothesis if groups else ""
    return Report(groups=tuple(groups), outcome=p.outcome, alpha=alpha, correction=opts.correction,
                  method="sequential", m0=opts.m0 if not interval else None, paper_compat=False,
                  null_hypothesis=h0, direction=direction, audit=info)
