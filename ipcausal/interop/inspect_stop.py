"""Anytime-valid early stopping inside inspect_ai: :class:`IPEarlyStopping`.

inspect_ai (0.3.28x) calls an *early-stopping manager* around every sample of a task (the
public protocol ``inspect_ai.util.EarlyStopping``): ``start_task`` with the task's samples,
``schedule_sample`` before a sample runs (an ``inspect_ai.util.EarlyStop`` skips it),
``complete_sample`` with its scores, ``complete_task`` at the end (its dict goes to the log).

:class:`IPEarlyStopping` runs the e-processes of :func:`ipcausal.audit` on an IP task, whose
samples are the two sides of each pair (metadata ``pair_id``, ``side``, ``background``, as
:func:`ipcausal.interop.export_inspect` and :func:`ipcausal.interop.inspect.ip_task` write
them).  The pairs are grouped, oriented and cut into units (pairs, or clusters) by the audit's
own plan (:mod:`ipcausal.study.streams`); a unit's Δ = mean(score_j) − mean(score_i) over the
epochs enters its group's betting e-process (:func:`ipcausal.stats.sequential_state`, |Δ| ≤ ``bound``)
once both sides of all its pairs are scored, and after each unit the groups' e-values are
combined by e-Holm (:func:`ipcausal.stats.e_holm`).  A group is decided when its adjusted e-value
reaches 1/α (or, with ``margin``, when its confidence sequence lies inside ±margin); the
samples of a decided group that have not been scheduled yet get an ``EarlyStop``, so once
every group is decided the rest of the task is skipped.

Units enter the e-process **in the order inspect scheduled them** (the dataset order, which
:func:`~ipcausal.interop.inspect.ip_task` shuffles with its ``rng``), not in the order their
answers came back: a unit that finishes early waits for the units scheduled before it.  The
order of the stream is therefore fixed before any answer is seen, and the guarantee is the
audit's (Ville's inequality): under H0 a group is rejected with probability ≤ α, family-wise
across the task's background pairs, whatever the concurrency and whenever the task stops.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ipcausal.interop._common import SIDES, SideRecord, assemble
from ipcausal.study.options import AuditSettings
from ipcausal.study.record import Counts
from ipcausal.study.results import Report
from ipcausal.study.streams import assemble as assemble_report
from ipcausal.study.streams import decide, feed_units, plan

__all__ = ["IPEarlyStopping", "MANAGER_NAME"]

MANAGER_NAME = "ipcausal"
"""The name the manager gives inspect (``EvalSpec.early_stopping.manager`` in the log)."""


def _positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)) \
            or float(value) <= 0:
        raise ValueError(f"`{name}` must be a finite number > 0, got {value!r}")
    return float(value)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "\n\n".join(str(getattr(m, "text", "")) for m in value or [] if getattr(m, "role", None) == "user")


class IPEarlyStopping:
    """inspect_ai's ``EarlyStopping`` for an IP task: stop once every background pair is decided.

    Use one manager per task (``inspect_ai.eval(task, early_stopping=IPEarlyStopping())`` or
    ``Task(early_stopping=...)``); ``start_task`` resets it.  See the module docstring for the
    method and its guarantee.

    Parameters
    ----------
    alpha : float
        Family-wise level across the task's background pairs: a group is rejected when its
        adjusted e-value reaches 1/α.
    scorer : str, optional
        The scorer whose value is the outcome (converted by inspect's ``value_to_float``:
        ``"C"`` → 1, ``"I"`` → 0).  Default: the task's only scorer.
    bound : float, optional
        Known bound on |score_j − score_i|.  Default: the one :func:`ip_task` put in the task's
        metadata (``ipcausal.bound``); required for other tasks.
    correction : {"e-holm", "e-bonferroni", "none"}
        How the groups' e-values are combined (valid under any dependence).
    margin : float, optional
        Equivalence margin: a group whose confidence sequence lies inside (−margin, margin) is
        decided "equivalent" and stops too.
    cluster : str, optional
        A pair-metadata field naming each pair's cluster: a cluster is one unit (its Δ summed).
    alternative : {"two-sided", "greater", "less"}
        H1 for mean(Δ); one-sided needs ``order`` when a group is stored both ways.
    method : {"mixture", "agrapa", "ons"}
        The bet (:func:`ipcausal.stats.sequential_state`).
    order : list of str, optional
        Backgrounds in order (Δ = score(later) − score(earlier)).
    pair_field, side_field, background_field : str
        Sample-metadata keys of the pair id, the side (``"i"``/``"j"``) and the background.

    Attributes
    ----------
    report : Report or None
        After ``complete_task``: the audit-shaped Report (per group ``stop_reason``,
        ``e_value``, ``e_adjusted``, ``pvalue`` (anytime-valid), ``pvalue_adjusted``,
        ``n_sent`` of ``n_available``).
    summary : dict or None
        What ``complete_task`` returned (also in the log's ``early_stopping`` record).

    Examples
    --------
    >>> import asyncio
    >>> from types import SimpleNamespace as NS
    >>> from ipcausal.interop.inspect import IPEarlyStopping
    >>> samples = [NS(id=f"p{k}:{s}", input=f"q{k}", metadata={"pair_id": f"p{k}", "side": s,
    ...            "background": {"i": "us", "j": "uk"}[s]}) for k in range(40) for s in "ij"]
    >>> es = IPEarlyStopping(bound=1.0)
    >>> async def run():
    ...     await es.start_task(NS(model="demo", metadata={}), samples, 1)
    ...     ran = 0
    ...     for smp in samples:
    ...         if await es.schedule_sample(smp.id, 1) is None:
    ...             ran += 1
    ...             value = 1.0 if smp.id.endswith(":j") else 0.0  # side j always better
    ...             await es.complete_sample(smp.id, 1, {"s": NS(score=NS(value=value))})
    ...     return ran, await es.complete_task()
    >>> ran, summary = asyncio.run(run())
    >>> ran < 80, summary["groups"][0]["stop_reason"], summary["stopped"]
    (True, 'rejected', 'decided')
    """

    def __init__(self, *, alpha: float = 0.05, scorer: str | None = None, bound: float | None = None,
                 correction: str = "e-holm", margin: float | None = None, cluster: str | None = None,
                 alternative: str = "two-sided", method: str = "mixture", order: Any = None,
                 pair_field: str = "pair_id", side_field: str = "side", background_field: str = "background") -> None:
        # the sequential test's options, checked where every audit's are: one AuditSettings (a batch is a sample)
        self.settings = AuditSettings(alpha=alpha, correction=correction, margin=margin, batch_size=1,
                                      alternative=alternative, method=method, cluster=cluster, order=order)
        if scorer is not None and (not isinstance(scorer, str) or not scorer):
            raise TypeError(f"`scorer` must be a scorer name or None, got {scorer!r}")
        self.scorer = scorer
        self.bound = None if bound is None else _positive(bound, "bound")
        st = self.settings
        self.alpha, self.correction, self.margin, self.cluster = st.alpha, st.correction, st.margin, st.cluster
        self.alternative, self.method, self.order = st.alternative, st.method, st.order
        for name, v in (("pair_field", pair_field), ("side_field", side_field), ("background_field", background_field)):
            if not isinstance(v, str) or not v:
                raise TypeError(f"`{name}` must be a non-empty metadata key, got {v!r}")
        self.fields = (pair_field, side_field, background_field)
        self.report: Report | None = None
        self.summary: dict[str, Any] | None = None
        self._plan: Any = None

    # -- the protocol ---------------------------------------------------------------------------
    async def start_task(self, task: Any, samples: list[Any], epochs: int) -> str:
        """Pair the task's samples, plan the groups' streams; returns the manager's name."""
        from ipcausal.study.groups import validate_order

        pair_field, side_field, background_field = self.fields
        records = []
        for s in samples:
            meta = s.metadata or {}
            missing = [f for f in (pair_field, side_field) if f not in meta]
            if missing:
                raise ValueError(f"sample {s.id!r}: metadata lacks {missing}; an IP task has one sample per side "
                                 "(ip_task or export_inspect write them)")
            extra = meta.get("pair") if isinstance(meta.get("pair"), dict) else {}
            records.append(SideRecord(sample_id=str(s.id), key=str(meta[pair_field]), side=str(meta[side_field]),
                                      background=str(meta.get(background_field, meta[side_field])),
                                      x=_text(s.input) or str(s.id), meta=dict(extra)))
        try:
            ps = assemble(records, sides=SIDES, what="sample").pairs
        except ValueError as exc:
            msg = str(exc).split("; pass `allow_missing`")[0]
            raise ValueError(f"{msg}; an IP task needs both sides of every pair (is the dataset limited?)") from None
        bound = self.bound
        if bound is None:
            info = (getattr(task, "metadata", None) or {}).get("ipcausal") or {}
            if "bound" not in info:
                raise ValueError("`bound` is required: give the largest possible |score_j − score_i| "
                                 "(tasks made by ip_task carry it in their metadata)")
            bound = _positive(info["bound"], "bound")
        if self.cluster is not None and self.cluster not in ps:
            raise ValueError(f"`cluster`: the pairs' metadata has no field {self.cluster!r}; fields: "
                             f"{[c for c in ps.columns if c not in ('x_i', 'x_j')]}")
        backgrounds = set(ps["background_i"].astype(str)) | set(ps["background_j"].astype(str))
        self._opts = replace(self.settings, order=validate_order(self.order, backgrounds))
        # the plan's own order is unused: inspect's is
        p = plan(ps, self._opts, np.random.default_rng(0), outcome="interval", bound=bound)
        self._plan, self._epochs, self._model = p, max(1, int(epochs)), str(getattr(task, "model", "?"))
        row_of = {pid: r for r, pid in enumerate(p.frame["pair_id"].astype(str))}
        self._where: dict[str, tuple[int, int]] = {}  # sample id -> (row, side index)
        for rec in records:
            self._where[rec.sample_id] = (row_of[rec.key], SIDES.index(rec.side))
        self._unit_of = np.empty(len(p.frame), dtype=np.int64)
        for u, rows in enumerate(p.units):
            self._unit_of[rows] = u
        self._scores: dict[tuple[int, int], list[float]] = {}
        self._rows_done = np.zeros(len(p.frame), dtype=bool)
        self._unit_left = np.array([rows.size for rows in p.units], dtype=np.int64)
        self._ranked = np.zeros(len(p.units), dtype=bool)
        self._dead = np.zeros(len(p.units), dtype=bool)
        self._queue: list[int] = []  # units in the order first scheduled
        self._head = 0
        self._n_samples, self._scheduled, self._stopped, self._completed = len(samples) * self._epochs, 0, 0, 0
        self.report, self.summary = None, None
        return MANAGER_NAME

    async def schedule_sample(self, id: str | int, epoch: int) -> Any:
        """``EarlyStop`` when the sample's background pair is decided, else ``None`` (run it)."""
        p = self._require()
        where = self._where.get(str(id))
        if where is None:
            return None  # not a side of a pair: not ours to stop
        u = int(self._unit_of[where[0]])
        stream = p.streams[p.unit_stream[u]]
        if stream.reason is not None:
            from inspect_ai.util import EarlyStop

            self._stopped += 1
            self._dead[u] = True
            self._flush()
            return EarlyStop(id=id, epoch=epoch, reason=f"ipcausal: {stream.a} vs {stream.b} {stream.reason}",
                             metadata={"group": f"{stream.a} vs {stream.b}", "e_adjusted": _finite(stream.e_adjusted)})
        self._scheduled += 1
        self._rank(u)
        return None

    def _rank(self, u: int) -> None:
        """Put unit ``u`` in the queue (the order of the stream) when one of its samples first runs."""
        if not self._ranked[u]:
            p = self._plan
            self._ranked[u] = True
            self._queue.append(u)
            stream = p.streams[p.unit_stream[u]]
            stream.remaining -= 1
            stream.sent += int(p.units[u].size)

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, Any]) -> None:
        """Record the sample's score; feed every unit that is complete and next in order."""
        p = self._require()
        where = self._where.get(str(id))
        if where is None:
            return
        value = self._value(scores, id)
        self._completed += 1
        got = self._scores.setdefault(where, [])
        got.append(value)
        row = where[0]
        u = int(self._unit_of[row])
        self._rank(u)  # inspect calls schedule_sample only when it logs samples; else the order is completion's
        if value != value:  # an unscoreable side: the unit cannot enter the stream
            self._dead[u] = True
        if all(len(self._scores.get((row, s), ())) >= self._epochs for s in range(2)) and not self._rows_done[row]:
            self._rows_done[row] = True
            self._unit_left[u] -= 1
        self._flush()

    async def complete_task(self) -> dict[str, Any]:
        """The e-values, verdicts and anytime-valid p-values per group, and the samples saved."""
        p = self._require()
        self._flush(final=True)
        sent = int(sum(s.sent for s in p.streams))
        run = max(self._scheduled, self._completed)
        counts = Counts(pairs_available=p.n_pairs, pairs_sent=sent, pairs_scored=int(sum(s.used for s in p.streams)),
                        requests_full=self._n_samples, requests_sent=max(self._scheduled, self._completed),
                        requests_saved=self._n_samples - max(self._scheduled, self._completed),
                        batches=len(self._queue))
        self.report = assemble_report(p, self._opts, model=self._model, counts=counts, seed=None)
        groups = [{"group": g.group, "background_a": g.background_a, "background_b": g.background_b,
                   "stop_reason": g.sequential.stop_reason, "reject": bool(g.reject),
                   "e_value": _finite(g.sequential.e_value), "e_adjusted": _finite(g.sequential.e_adjusted), "pvalue": _finite(g.pvalue),
                   "pvalue_adjusted": _finite(g.pvalue_adjusted), "effect": _finite(g.effect),
                   "ci_low": _finite(g.ci_low), "ci_high": _finite(g.ci_high), "n": int(g.n),
                   "n_sent": int(g.sequential.n_sent), "n_available": int(g.sequential.n_available)}
                  for g in self.report.groups]
        self.summary = {"method": "ipcausal anytime-valid audit (betting e-process, " + self.correction + ")",
                        "alpha": self.alpha, "bound": p.bound, "correction": self.correction,
                        "stopped": self.report.audit.stopped, "ip_detected": bool(self.report.ip_detected),
                        "samples_total": self._n_samples, "samples_run": run,
                        "samples_stopped": self._stopped, "samples_saved": self._n_samples - run,
                        "share_run": run / self._n_samples if self._n_samples else 0.0,
                        "groups": groups}
        if self._scheduled == 0 and self._completed:
            self.summary["note"] = ("inspect never called schedule_sample (it does only when samples are logged: "
                                    "log_samples=True), so nothing could be stopped")
        return self.summary

    # -- the mechanics ------------------------------------------------------------------------------
    def _require(self) -> Any:
        if self._plan is None:
            raise RuntimeError("IPEarlyStopping: start_task was not called (pass the manager to inspect_ai.eval)")
        return self._plan

    def _value(self, scores: dict[str, Any], id: Any) -> float:
        from inspect_ai.scorer import value_to_float

        if not scores:
            return math.nan
        name = self.scorer
        if name is None:
            if len(scores) != 1:
                raise ValueError(f"`scorer`: sample {id!r} has several scores {sorted(scores)}; name the one to use")
            name = next(iter(scores))
        if name not in scores:
            raise ValueError(f"`scorer`: sample {id!r} has no score {name!r}; scores there: {sorted(scores)}")
        sc = scores[name]
        value = getattr(getattr(sc, "score", sc), "value", None)
        if isinstance(value, (dict, list)) or value is None:
            raise ValueError(f"`scorer`: {name!r} gives {value!r} for sample {id!r}, not one value")
        return float(value_to_float()(value))

    def _delta(self, row: int) -> float:
        si, sj = self._scores[(row, 0)], self._scores[(row, 1)]
        return (float(np.mean(sj)) - float(np.mean(si))) * float(self._plan.sign[row])

    def _flush(self, final: bool = False) -> None:
        """Feed the complete units at the head of the queue (in schedule order), then decide."""
        p = self._plan
        ready: list[tuple[int, list[float]]] = []
        while self._head < len(self._queue):
            u = self._queue[self._head]
            if self._unit_left[u] == 0 and not self._dead[u]:
                ready.append((u, [self._delta(int(r)) for r in p.units[u]]))
            elif not (self._dead[u] or final):
                break  # wait: a unit scheduled earlier has not come back yet
            self._head += 1
        if ready:
            feed_units(p, ready)
            decide(p, self._opts)


def _finite(v: Any) -> float | None:
    """A JSON-safe number (inspect writes the dict into the log): ``None`` for NaN, 1e300 for inf."""
    v = float(v)
    if v != v:
        return None
    return max(-1e300, min(1e300, v))
