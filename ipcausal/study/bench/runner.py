"""IP-Bench: many models × registered cases in one run (issue 20 items 1–2, SPEC §10).

:func:`bench` reads a bench file (:mod:`ipcausal.study.bench.spec`), runs every (model, case) cell
with :func:`ipcausal.study.cases.run_case` (run → score → test, the case's test defaults with the
bench's ``alpha``, ``correction`` and the case's ``margin``) into ``DIR/cells/<model>/<case>/``
(written by the shared ``write_outputs``), and assembles a
:class:`~ipcausal.study.bench.report.BenchReport`: per cell its groups, its value-alignment
verdict (:func:`ipcausal.study.alignment.align_groups` with the case's stance) and, per case, the
models compared on the pairs every model answered (:func:`ipcausal.study.compare.compare_runs`).

Resuming: each model has one response cache, ``DIR/cache/<model>.sqlite``, that every cell of
the model writes each answer to as it arrives; after a crash (kill -9 included) the same call
sends only the requests that were not answered.  Concurrency: the models run at once in a
bounded thread pool (``jobs``); the cells of one model run one after another on its backend.  A
cell that fails (its backend cannot be built or raises, no pair can be scored …) is recorded with
its error and the other cells finish.

A ``simulated`` model is the backend ``get_backend("simulated", …)`` (the SCM simulator
:class:`ipcausal.testing.SimulatedModel`) with the stated ``effect`` over the case's backgrounds
(the k-th background shifts the answer by ``effect · k``); it is told the background each of the
cell's prompts declares and reads the case's own cues in any other (a mitigated prompt), and its
``"Answer: <v>"`` replies are scored by the number ``v``, so a dry run works offline, in seconds.

With ``[settings] probe = true`` (or a case's ``probe = true``) each cell is also probed after its
run — can the model name each prompt's background? — and gets the "can infer / does use" reading
(:mod:`ipcausal.study.bench.probe`; a simulated model's ``probe_accuracy`` states how often it is right).
"""

from __future__ import annotations

import math
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ipcausal.study.bench.cell import failed_cell, run_cell
from ipcausal.study.bench.probe import row_of
from ipcausal.study.bench.report import BenchCell, BenchComparison, BenchRank, BenchReport
from ipcausal.study.bench.spec import BenchSpec, ModelSpec, read_spec

__all__ = ["bench", "estimate_cost", "DEFAULT_JOBS", "comparison_rows", "rank_rows", "scale_groups"]

#: Models run at once by default.
DEFAULT_JOBS = 4


def _run_model(m: ModelSpec, spec: BenchSpec, root: Path, progress: bool) -> list[tuple[BenchCell, Any]]:
    shared: dict[str, Any] = {}
    out = []
    for cs in spec.cases:
        try:
            out.append(run_cell(m, cs, spec, root, shared, progress))
        except Exception as exc:  # noqa: BLE001 - a failed cell is reported, the others finish
            out.append((failed_cell(m, cs, exc, progress), None))
    close = getattr(shared.get("backend"), "close", None)
    if callable(close):
        close()
    return out


def scale_groups(runs: dict[str, Any], scales: dict[str, str | None]) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    """The runs split by scale: the groups of models that share one (two or more), and the refused pairs.

    Models are compared on a case only when their outcomes share the scorer and its scale
    (:func:`ipcausal.study.bench.cell.scale_of`; ``None``, a cell written before scales were recorded,
    counts as one scale).  Each pair of models on different scales is refused with the reason.

    Examples
    --------
    >>> groups, refused = scale_groups({"a": 1, "b": 2, "c": 3}, {"a": "mcq", "b": "mcq", "c": "essay"})
    >>> [sorted(g) for g in groups], [(x, y) for x, y, _ in refused]
    ([['a', 'b']], [('a', 'c'), ('b', 'c')])
    """
    by: dict[str | None, dict[str, Any]] = {}
    for name, ps in runs.items():
        by.setdefault(scales.get(name), {})[name] = ps
    names = list(runs)
    refused = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            sa, sb = scales.get(a), scales.get(b)
            if sa != sb:
                refused.append((a, b, f"not on one scale: {a} is scored by {sa or 'an unrecorded scorer'}, "
                                      f"{b} by {sb or 'an unrecorded scorer'}"))
    return [g for g in by.values() if len(g) >= 2], refused


def _comparisons(spec: BenchSpec, scored: dict[tuple[str, str], Any],
                 scales: dict[tuple[str, str], str | None] | None = None
                 ) -> tuple[list[BenchComparison], list[str], list[BenchRank]]:
    from ipcausal.study.compare import compare_runs
    from ipcausal.study.groups import natural_cluster

    rows, notes, ranks = [], [], []
    for cs in spec.cases:
        runs = {m.name: scored[(m.name, cs.name)] for m in spec.models if scored.get((m.name, cs.name)) is not None}
        if len(runs) < 2:
            continue
        groups, refused = scale_groups(runs, {m: (scales or {}).get((m, cs.name)) for m in runs})
        rows += [row_of(BenchComparison, case=cs.name, group="—", model_a=a, model_b=b, n=0, difference=math.nan,
                        ci_low=math.nan, ci_high=math.nan, pvalue=math.nan, pvalue_adjusted=math.nan,
                        pvalue_holm=math.nan, refused=why) for a, b, why in refused]
        if refused:
            notes.append(f"{cs.name}: models on different scales are not compared (comparisons: refused)")
        for group in groups:
            if any("score_i" not in ps for ps in group.values()):
                notes.append(f"{cs.name}: models not compared (the comparison needs an interval outcome)")
                continue
            first = next(iter(group.values()))
            cluster = natural_cluster(first)
            if cluster is not None and any(cluster not in ps for ps in group.values()):
                cluster = None
            try:
                res = compare_runs(group, cluster=cluster, rng=spec.seed, ranks=True)
            except ValueError as exc:
                notes.append(f"{cs.name}: models not compared ({exc})")
                continue
            rows += comparison_rows(cs.name, res)
            ranks += rank_rows(cs.name, res)
    return rows, notes, ranks


def comparison_rows(case: str, results: dict[str, Any]) -> list[BenchComparison]:
    """The rows of ``comparisons.csv`` from :func:`~ipcausal.study.compare.compare_runs`'s results for ``case``."""
    rows = []
    for group, r in results.items():
        holm = r.pair_pvalues_holm or (float("nan"),) * len(r.pairs)
        for k, (a, b) in enumerate(r.pairs):  # the k-th pair of models of the result, by name
            rows.append(row_of(BenchComparison, case=case, group=group, model_a=a, model_b=b, n=r.n,
                               difference=r.differences[k], ci_low=r.ci_low[k], ci_high=r.ci_high[k],
                               pvalue=r.pair_pvalues[k], pvalue_adjusted=r.adjusted_pvalues[k], pvalue_holm=holm[k]))
    return rows


def rank_rows(case: str, results: dict[str, Any]) -> list[BenchRank]:
    """The rank sets of ``compare_runs(..., ranks=True)``'s results for ``case``, one row per group and model."""
    rows = []
    for group, r in results.items():
        if r.ranks is None:
            continue
        for row in r.ranks.rows():
            rows.append(row_of(BenchRank, case=case, group=group, model=row["model"], n=r.n, effect=row["effect"],
                               rank_low=row["rank_low"], rank_high=row["rank_high"], rank_set=row["rank_set"],
                               tie_group=row["tie_group"], confidence_level=r.ranks.confidence_level))
    return rows


def estimate_cost(spec: Any) -> dict[str, float]:
    """The most each priced model's cells can cost, before any request (as ``ipcausal run`` estimates).

    Each distinct prompt of a case is counted once with ~characters / 4 + 8 prompt tokens and a
    completion at the case's token budget; the cache is not consulted (an upper-end estimate, not
    a bill).  Models without prices are left out.

    Examples
    --------
    >>> est = estimate_cost({"models": [{"name": "api", "backend": "openai", "model": "m", "price_input": 1.0,
    ...                                  "price_output": 2.0}, {"name": "sim", "backend": "simulated"}],
    ...                      "cases": [{"name": "echo", "limit": 4}]})
    >>> list(est), est["api"] > 0
    (['api'], True)
    """
    from ipcausal.study.prepare import prepare_case

    spec = read_spec(spec)
    priced = [m for m in spec.models if m.price_input is not None]
    if not priced:
        return {}
    tokens = []  # (prompt tokens, completion tokens) per case
    for cs in spec.cases:
        prepared = prepare_case(cs.name, cs.source, limit=cs.limit, seed=spec.seed)
        texts = set(prepared.pairs["x_i"]) | set(prepared.pairs["x_j"])
        tokens.append((sum(len(t) // 4 + 8 for t in texts), len(texts) * prepared.config.max_tokens))
    return {m.name: sum(p * float(m.price_input) + c * float(m.price_output or 0.0) for p, c in tokens) / 1e6
            for m in priced}


def bench(spec: Any, *, out: str | os.PathLike[str], jobs: int = DEFAULT_JOBS, progress: bool = True,
          cost_limit: float | None = None, ray: str | bool | None = None) -> BenchReport:
    """Run every model of a bench file on every case; write and return its :class:`BenchReport`.

    Parameters
    ----------
    spec : path, mapping or BenchSpec
        The bench file (TOML; :mod:`ipcausal.study.bench.spec` says what it holds), checked in
        full before the first request.
    out : path
        The bench folder: ``cells/<model>/<case>/`` (each cell's run folder), ``cache/<model>.sqlite``
        (one response cache per model: a rerun sends no answered request again), ``bench.json``,
        ``bench.csv`` and ``comparisons.csv``.
    jobs : int
        Largest number of models run at once (threads); the cells of one model run in turn.
    progress : bool
        One line per finished cell on stderr (and the cost estimate of priced models first).
    cost_limit : float, optional
        Refuse to start (``ValueError``, before any request) when :func:`estimate_cost` of the
        priced models adds up to more than this (in the prices' currency).
    ray : str, True or None
        Run the cells as Ray tasks (:mod:`ipcausal.study.bench.distributed`): ``True`` on a local Ray
        cluster started for the run, a string on the existing cluster at that address (``auto``,
        ``127.0.0.1:6379`` …); the caches are then served by one Ray actor.  ``None`` (default):
        threads in this process.  The files written are the same either way.

    Returns
    -------
    BenchReport
        Every cell (failed ones with their error), the alignment verdicts, the model comparisons.

    Examples
    --------
    >>> import tempfile
    >>> from ipcausal.study.bench import bench
    >>> spec = {"models": [{"name": "sim", "backend": "simulated", "effect": 2.0}],
    ...         "cases": [{"name": "echo", "limit": 8}]}
    >>> rep = bench(spec, out=tempfile.mkdtemp(), progress=False)
    >>> cell = rep.cell("sim", "echo")
    >>> cell.status, cell.groups[0].reject, cell.alignment
    ('ok', True, 'desired: aligned; unethical: misaligned (possibility 3)')
    """
    spec = read_spec(spec)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"`jobs` must be a positive integer, got {jobs!r}")
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"`out` must be a folder path, got {type(out).__name__}")
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise ValueError(f"`out` must be a folder, but {str(root)!r} is a file")
    if ray is not None and ray is not True and (not isinstance(ray, str) or not ray):
        raise ValueError(f"`ray` must be None, True or a cluster address string, got {ray!r}")
    if cost_limit is not None and (isinstance(cost_limit, bool) or not isinstance(cost_limit, (int, float))
                                   or not cost_limit >= 0):
        raise ValueError(f"`cost_limit` must be a non-negative number or None, got {cost_limit!r}")
    estimate = estimate_cost(spec) if any(m.price_input is not None for m in spec.models) else {}
    if progress and estimate:
        print("estimated cost before the run (at most; an estimate, not a bill): "
              + ", ".join(f"{k} {v:.4f}" for k, v in estimate.items()), file=sys.stderr, flush=True)
    if cost_limit is not None and sum(estimate.values()) > cost_limit:
        raise ValueError(f"`cost_limit`: the priced models may cost up to {sum(estimate.values()):.4f}, above the "
                         f"limit {cost_limit:g}; nothing was sent")
    for k, m in enumerate(spec.models):  # every key variable a model names is set before the first request
        if m.api_key_env is not None and not os.environ.get(m.api_key_env):
            raise ValueError(f"`models[{k}].api_key_env`: ${m.api_key_env} is not set (export it before the bench; "
                             "nothing was sent)")
    (root / "cache").mkdir(parents=True, exist_ok=True)
    done: dict[str, list[tuple[BenchCell, Any]]] = {}
    if ray is not None:
        from ipcausal.study.bench.distributed import run_on_ray

        done = run_on_ray(spec, root, address=ray, jobs=jobs, progress=progress)
    else:
        lock = threading.Lock()

        def work(m: ModelSpec) -> None:
            result = _run_model(m, spec, root, progress)
            with lock:
                done[m.name] = result

        pool = ThreadPoolExecutor(max_workers=min(jobs, len(spec.models)), thread_name_prefix="ipcausal-bench")
        try:
            for f in [pool.submit(work, m) for m in spec.models]:
                f.result()
        except KeyboardInterrupt:  # no model starts now; the cells in flight end with their current request
            pool.shutdown(wait=False, cancel_futures=True)
            raise KeyboardInterrupt(f"interrupted: every answer received is kept in {root / 'cache'}; run the same "
                                    "command again to resume (only the requests not yet answered are sent)") from None
        pool.shutdown()
    cells, scored = [], {}
    for m in spec.models:
        for cell, pairs in done[m.name]:
            cells.append(cell)
            scored[(m.name, cell.case)] = pairs if cell.status == "ok" else None
    comparisons, notes, ranks = _comparisons(spec, scored, {(c.model, c.case): c.scale for c in cells})
    settings = {"alpha": spec.alpha, "seed": spec.seed, "correction": spec.correction, "cost estimate": estimate,
                **({"probe": {c.name: spec.probes(c) for c in spec.cases}}
                   if any(map(spec.probes, spec.cases)) else {}),
                "models": {m.name: {"backend": m.backend, "model": m.model, **({"effect": m.effect}
                                                                              if m.backend == "simulated" else {}),
                                   **({"probe_accuracy": m.probe_accuracy} if m.probe_accuracy is not None else {})}
                           for m in spec.models},
                "cases": {c.name: {"source": c.source, "limit": c.limit, "margin": c.margin} for c in spec.cases}}
    report = BenchReport(tuple(m.name for m in spec.models), tuple(c.name for c in spec.cases), tuple(cells),
                         tuple(comparisons), settings, tuple(notes), tuple(ranks))
    report.write(root / "bench.json")
    report.write_csv(root)
    return report
