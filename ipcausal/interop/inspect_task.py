"""An IP task for inspect_ai: :func:`ip_task` (a PairSet as a Task) and :func:`ip_test` (its paired metric).

:func:`ip_task` makes one inspect ``Sample`` per side of each pair (ids ``"PAIR:i"`` /
``"PAIR:j"``, metadata ``pair_id``, ``side``, ``background`` and ``pair`` — the layout of
:func:`ipcausal.interop.export_inspect`), in a seeded random order of the pairs with the two
sides of a pair next to each other, and attaches a scorer and the metrics ``mean``,
``stderr`` and :func:`ip_test`.  :func:`ip_test` is an inspect metric: it pairs the samples'
scores back by their metadata and runs :func:`ipcausal.test` (the exact paired sign-flip test
per background pair — Monte Carlo when large — cluster-aware with ``cluster``, corrected over
the task's background pairs), so ``inspect eval`` shows the verdict, the effect and the
adjusted p beside the mean, and the log keeps them (``results.scores[…].metrics``).

Everything here uses inspect_ai's public modules (``inspect_ai``, ``inspect_ai.dataset``,
``inspect_ai.scorer``, ``inspect_ai.solver``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any

import numpy as np
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import (Metric, SampleScore, Score, Scorer, Target, Value, mean, metric, scorer, stderr,
                               value_to_float)
from inspect_ai.solver import Solver, TaskState, generate

from ipcausal.interop._common import SIDES, SideRecord, assemble, pairs_of, side_rows
from ipcausal._validate import as_generator, choice, open_unit

__all__ = ["ip_task", "ip_test", "mcq_choice", "answer_number", "pairs_from_scores", "SCORERS"]

SCORERS = ("mcq", "answer")
"""Scorers :func:`ip_task` knows by name: ``"mcq"`` (1 if the chosen option is the
``correct_option``, bound 1) and ``"answer"`` (the number after ``Answer:``, as the simulator writes it)."""

_ANSWER = re.compile(r"Answer:\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


@scorer(metrics=[mean()])
def mcq_choice() -> Scorer:
    """inspect scorer: 1 when the answer picks the pair's ``correct_option`` (1-based), else 0.

    Reads ``options`` from the sample's ``pair`` metadata and the right option's number from
    ``correct_option`` there or from the sample's target (where :func:`ip_task` puts it), and parses the
    answer with :func:`ipcausal.scoring.ratings.mcq_correct` (the ``mcq`` scorer of
    ``ipcausal score``); an answer that names no option scores 0 (policy ``"zero"``) and says so.
    """
    from ipcausal.scoring.ratings import mcq_correct

    async def score(state: TaskState, target: Target) -> Score:
        pair = (state.metadata or {}).get("pair") or {}
        options = pair.get("options")
        if isinstance(options, str):
            options = json.loads(options)
        correct = pair.get("correct_option", target.text)  # ip_task moves correct_option into the target
        if isinstance(correct, str) and correct.strip().isdigit():
            correct = int(correct)
        value, status = mcq_correct(state.output.completion, options, correct)
        return Score(value=0.0 if value is None else value, answer=state.output.completion, explanation=status)

    return score


@scorer(metrics=[mean()])
def answer_number() -> Scorer:
    """inspect scorer: the number after ``Answer:`` in the completion (NaN when there is none).

    What :class:`ipcausal.testing.SimulatedModel` (model ``ipcausal/simulated``) answers; with
    ``levels=k`` the numbers lie in 1..k, so ``bound`` is k − 1.
    """

    async def score(state: TaskState, target: Target) -> Score:
        m = _ANSWER.search(state.output.completion or "")
        return Score(value=float(m.group(1)) if m else math.nan, answer=state.output.completion,
                     explanation="ok" if m else "unparseable")

    return score


def pairs_from_scores(scores: list[SampleScore], *, to_float: Any = None) -> tuple[Any, int]:
    """The scored PairSet rebuilt from inspect ``SampleScore`` objects, and how many samples had no partner.

    Samples are paired by their metadata (``pair_id``, ``side``, ``background``, ``pair``); a
    sample whose partner has no score (stopped early, failed) or whose value is NaN is left out.
    """
    conv = value_to_float() if to_float is None else to_float
    records = []
    for s in scores:
        meta = s.sample_metadata or {}
        if "pair_id" not in meta or "side" not in meta:
            raise ValueError(f"`scores`: sample {s.sample_id!r} has no pair_id/side metadata; ip_test needs an IP "
                             "task (ip_task or export_inspect)")
        v = float(conv(s.score.value))
        if v != v:
            continue
        extra = meta.get("pair") if isinstance(meta.get("pair"), dict) else {}
        records.append(SideRecord(sample_id=str(s.sample_id), key=str(meta["pair_id"]), side=str(meta["side"]),
                                  background=str(meta.get("background", meta["side"])), x=str(s.sample_id),
                                  y="", score=v, meta=dict(extra)))
    if not records:
        return None, 0
    try:
        res = assemble(records, sides=SIDES, allow_missing=True, what="sample")
    except ValueError as exc:
        if str(exc).startswith("no complete pair"):
            return None, len(records)
        raise
    return res.pairs, len(res.unpaired)


@metric
def ip_test(alpha: float = 0.05, correction: str = "holm", method: str = "auto", n_resamples: int | None = None,
            rng: int = 0, cluster: str | None = None) -> Metric:
    """inspect metric: the paired IP test of the task's pairs, corrected over its background pairs.

    Parameters
    ----------
    alpha : float
        Family-wise level (``correction``) across the background pairs.
    correction : str
        A correction of :func:`ipcausal.test` (``"holm"``, ``"bonferroni"``, ``"bh"`` …).
    method : {"auto", "exact", "monte-carlo", "saddlepoint"}
        Route of the sign-flip permutation test (exact when the pairs are few).
    n_resamples : int, optional
        Monte Carlo resamples (default 100,000).
    rng : int
        Seed of the Monte Carlo draws (so the metric is the same each time it is computed).
    cluster : str, optional
        A field of the pairs' metadata naming clusters (sign flips act on whole clusters).

    Returns
    -------
    Metric
        Its value is a dict: ``ip_detected`` (1 when some background pair is rejected), ``pairs``
        (complete pairs tested), ``unpaired`` (scored samples without a scored partner) and per
        background pair ``effect`` (mean Δ = score(b) − score(a)), ``p_adjusted`` and ``reject``
        (keys suffixed ``[a vs b]`` when the task has several background pairs).

    Examples
    --------
    >>> from inspect_ai.scorer import SampleScore, Score
    >>> from ipcausal.interop.inspect import ip_test
    >>> scores = [SampleScore(score=Score(value=float(s == "j" or k % 4 == 0)), sample_id=f"p{k}:{s}",
    ...                       sample_metadata={"pair_id": f"p{k}", "side": s, "background": {"i": "us", "j": "uk"}[s]})
    ...           for k in range(20) for s in "ij"]
    >>> out = ip_test()(scores)
    >>> out["ip_detected"], out["pairs"], out["effect"]
    (1.0, 20.0, 0.75)
    """
    alpha = open_unit(alpha, "alpha")
    from ipcausal.stats.multitest import CORRECTIONS

    correction = choice(correction, "correction", CORRECTIONS)

    def compute(scores: list[SampleScore]) -> Value:
        import ipcausal

        ps, unpaired = pairs_from_scores(scores)
        if ps is not None:  # inspect also computes metrics on the first samples, for its live display
            key = [frozenset(ab) for ab in zip(ps["background_i"].astype(str), ps["background_j"].astype(str))]
            counts = Counter(key)
            keep = np.array([counts[k] >= 2 for k in key])
            ps = ps.filter(keep) if keep.any() else None
        if ps is None:
            return {"ip_detected": 0.0, "pairs": 0.0, "unpaired": float(unpaired)}
        report = ipcausal.test(ps, alpha=alpha, correction=correction, method=method, n_resamples=n_resamples,
                               rng=rng, cluster=cluster)
        out: dict[str, float] = {"ip_detected": float(report.ip_detected), "pairs": float(len(ps)),
                                 "unpaired": float(unpaired)}
        several = len(report.groups) > 1
        for g in report.groups:
            tag = f" [{g.background_a} vs {g.background_b}]" if several else ""
            out[f"effect{tag}"] = float(g.effect)
            out[f"p_adjusted{tag}"] = float(g.pvalue_adjusted)
            out[f"reject{tag}"] = float(g.reject)
        return out

    return compute


def _scorer_for(scorer_arg: Any, columns: list[str], bound: Any) -> tuple[Any, float | None]:
    if scorer_arg is None:
        if "options" in columns and "correct_option" in columns:
            scorer_arg = "mcq"
        else:
            raise ValueError("`scorer`: the pairs have no `options`/`correct_option` columns, so no default scorer "
                             f"applies; pass one of {list(SCORERS)} or an inspect Scorer")
    if isinstance(scorer_arg, str):
        name = choice(scorer_arg, "scorer", SCORERS)
        if name == "mcq":
            missing = [c for c in ("options", "correct_option") if c not in columns]
            if missing:
                raise ValueError(f"`scorer`: 'mcq' needs the columns {missing}")
            return mcq_choice(), 1.0 if bound is None else bound
        return answer_number(), bound
    if not callable(scorer_arg):
        raise TypeError(f"`scorer` must be one of {list(SCORERS)}, an inspect Scorer or None, got "
                        f"{type(scorer_arg).__name__}")
    return scorer_arg, bound


def ip_task(pairs: Any, *, scorer: Any = None, bound: float | None = None, solver: Solver | list[Solver] | None = None,
            early_stopping: Any = None, rng: int | np.random.Generator | None = 0, alpha: float = 0.05,
            correction: str = "holm", cluster: str | None = None, epochs: int | None = None,
            name: str = "ipcausal_pairs") -> Task:
    """An inspect_ai Task from a PairSet: both sides as samples, a scorer, the paired metric attached.

    Parameters
    ----------
    pairs : PairSet or path
        The pairs (``x_i``/``x_j`` become the samples' inputs).
    scorer : {"mcq", "answer"}, inspect Scorer or None
        ``None``: ``"mcq"`` when the pairs have ``options`` and ``correct_option`` (the echo and
        culture cases), else an error.  An inspect Scorer (e.g. ``includes()``) is used as given.
    bound : float, optional
        The largest possible |score_j − score_i|, kept in the task's metadata for
        :class:`IPEarlyStopping` (``"mcq"``: 1; ``"answer"`` with ``levels=k``: k − 1).
    solver : Solver or list of Solver, optional
        Default ``generate()``.
    early_stopping : IPEarlyStopping, optional
        inspect's ``Task(early_stopping=...)``: e.g. ``IPEarlyStopping(alpha=0.05)``.
    rng : int, numpy.random.Generator or None
        The seeded order of the pairs (the order :class:`IPEarlyStopping` feeds them in).
    alpha, correction, cluster
        Passed to :func:`ip_test`.
    epochs : int, optional
        inspect epochs (a side's score is their mean).
    name : str
        The task's name.

    Returns
    -------
    inspect_ai.Task

    Examples
    --------
    >>> from ipcausal.builders import demo_pairs
    >>> from ipcausal.interop.inspect import IPEarlyStopping, ip_task
    >>> task = ip_task(demo_pairs("echo"), early_stopping=IPEarlyStopping(alpha=0.05))
    >>> len(task.dataset), task.dataset[0].metadata["side"], task.metadata["ipcausal"]["bound"]
    (84, 'i', 1.0)
    """
    ps = pairs_of(pairs)
    if len(ps) == 0:
        raise ValueError("`pairs` is empty")
    if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float))
                              or not math.isfinite(float(bound)) or float(bound) <= 0):
        raise ValueError(f"`bound` must be a finite number > 0 or None, got {bound!r}")
    if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
        raise ValueError(f"`epochs` must be a positive integer or None, got {epochs!r}")
    if not isinstance(name, str) or not name:
        raise TypeError(f"`name` must be a non-empty string, got {name!r}")
    if cluster is not None and cluster not in ps:
        raise ValueError(f"`cluster`: the pairs have no column {cluster!r}")
    sc, bound = _scorer_for(scorer, list(ps.columns), bound)
    order = as_generator(rng).permutation(len(ps)) if rng is not None else np.arange(len(ps))
    rows = side_rows(ps, target="correct_option" if "correct_option" in ps else None)
    samples = []
    for k in order:
        for r in rows[2 * int(k): 2 * int(k) + 2]:
            samples.append(Sample(id=r["id"], input=r["input"], target=r.get("target", ""),
                                  metadata={"pair_id": r["pair_id"], "side": r["side"], "background": r["background"],
                                            "pair": r["pair"]}))
    meta = {"ipcausal": {"bound": None if bound is None else float(bound), "n_pairs": len(ps), "outcome": "interval"}}
    return Task(dataset=MemoryDataset(samples, name=name), solver=solver if solver is not None else generate(),
                scorer=sc, metrics=[mean(), stderr(), ip_test(alpha=alpha, correction=correction, cluster=cluster)],
                early_stopping=early_stopping, epochs=epochs, name=name, metadata=meta)
