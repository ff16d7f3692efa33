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

A ``simulated`` model is the SCM simulator :class:`ipcausal.testing.SimulatedModel` with the
stated ``effect`` over the case's backgrounds (the k-th background shifts the answer by
``effect · k``).  The bench tells it each prompt's background (a tag the simulator reads and that
leaves the prompt's meaning unchanged) and scores its ``"Answer: <v>"`` replies by the number
``v``, so a dry run works on any case with an interval outcome, offline, in seconds.

With ``[settings] probe = true`` (or a case's ``probe = true``) each cell is also probed after its
run — can the model name each prompt's background? — and gets the "can infer / does use" reading
(:mod:`ipcausal.study.bench.probe`; a simulated model's ``probe_accuracy`` states how often it is right).
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ipcausal.study.bench.cell import failed_cell, run_cell
from ipcausal.study.bench.report import BenchCell, BenchComparison, BenchReport
from ipcausal.study.bench.spec import BenchSpec, ModelSpec, read_spec

__all__ = ["bench", "estimate_cost", "DEFAULT_JOBS", "comparison_rows"]

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


def _comparisons(spec: BenchSpec, scored: dict[tuple[str, str], Any]) -> tuple[list[BenchComparison], list[str]]:
    from ipcausal.study.cases import _cluster_column
    from ipcausal.study.compare import compare_runs

    rows, notes = [], []
    for cs in spec.cases:
        runs = {m.name: scored[(m.name, cs.name)] for m in spec.models if scored.get((m.name, cs.name)) is not None}
        if len(runs) < 2:
            continue
        if any("score_i" not in ps for ps in runs.values()):
            notes.append(f"{cs.name}: models not compared (the comparison needs an interval outcome)")
            continue
        first = next(iter(runs.values()))
        cluster = _cluster_column(first)
        if cluster is not None and any(cluster not in ps for ps in runs.values()):
            cluster = None
        try:
            res = compare_runs(runs, cluster=cluster, rng=spec.seed)
        except ValueError as exc:
            notes.append(f"{cs.name}: models not compared ({exc})")
            continue
        rows += comparison_rows(cs.name, res)
    return rows, notes


def comparison_rows(case: str, results: dict[str, Any]) -> list[BenchComparison]:
    """The rows of ``comparisons.csv`` from :func:`~ipcausal.study.compare.compare_runs`'s results for ``case``."""
    rows = []
    for group, r in results.items():
        holm = r.pair_pvalues_holm or (float("nan"),) * len(r.pairs)
        for k, (a, b) in enumerate(r.pairs):
            rows.append(BenchComparison(case, group, a, b, int(r.n), float(r.differences[k]), float(r.ci_low[k]),
                                        float(r.ci_high[k]), float(r.pair_pvalues[k]), float(r.adjusted_pvalues[k]),
                                        float(holm[k])))
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
    from ipcausal.cases.registry import get_case
    from ipcausal.study.cases import prepare_case

    spec = read_spec(spec)
    priced = [m for m in spec.models if m.price_input is not None]
    if not priced:
        return {}
    tokens = []  # (prompt tokens, completion tokens) per case
    for cs in spec.cases:
        case = get_case(cs.name)
        ps, _, _ = prepare_case(case, cs.source, limit=cs.limit, seed=spec.seed)
        texts = set(ps["x_i"]) | set(ps["x_j"])
        tokens.append((sum(len(t) // 4 + 8 for t in texts), len(texts) * case.source(cs.source is not None).max_tokens))
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

        with ThreadPoolExecutor(max_workers=min(jobs, len(spec.models)), thread_name_prefix="ipcausal-bench") as pool:
            for f in [pool.submit(work, m) for m in spec.models]:
                f.result()
    cells, scored = [], {}
    for m in spec.models:
        for cell, pairs in done[m.name]:
            cells.append(cell)
            scored[(m.name, cell.case)] = pairs if cell.status == "ok" else None
    comparisons, notes = _comparisons(spec, scored)
    settings = {"alpha": spec.alpha, "seed": spec.seed, "correction": spec.correction, "cost estimate": estimate,
                **({"probe": {c.name: spec.probes(c) for c in spec.cases}}
                   if any(map(spec.probes, spec.cases)) else {}),
                "models": {m.name: {"backend": m.backend, "model": m.model, **({"effect": m.effect}
                                                                              if m.backend == "simulated" else {}),
                                   **({"probe_accuracy": m.probe_accuracy} if m.probe_accuracy is not None else {})}
                           for m in spec.models},
                "cases": {c.name: {"source": c.source, "limit": c.limit, "margin": c.margin} for c in spec.cases}}
    report = BenchReport(tuple(m.name for m in spec.models), tuple(c.name for c in spec.cases), tuple(cells),
                         tuple(comparisons), settings, tuple(notes))
    report.write(root / "bench.json")
    report.write_csv(root)
    return report
