"""IP-Bench: many models × registered cases in one run (issue 20 items 1–2, SPEC §10).

:func:`bench` reads a bench file (:mod:`ipcausal.study.benchspec`), runs every (model, case) cell
with :func:`ipcausal.study.cases.run_case` (run → score → test, the case's test defaults with the
bench's ``alpha``, ``correction`` and the case's ``margin``) into ``DIR/cells/<model>/<case>/``
(written by the shared ``write_outputs``), and assembles a
:class:`~ipcausal.study.benchreport.BenchReport`: per cell its groups, its value-alignment
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
(:mod:`ipcausal.study.benchprobe`; a simulated model's ``probe_accuracy`` states how often it is right).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from ipcausal.study.benchprobe import stored_answers
from ipcausal.study.benchreport import BenchCell, BenchComparison, BenchReport, CellGroup, probe_text
from ipcausal.study.benchspec import BenchSpec, CaseSpec, ModelSpec, read_spec

__all__ = ["bench", "estimate_cost", "DEFAULT_JOBS", "cell_groups", "comparison_rows"]

#: Models run at once by default.
DEFAULT_JOBS = 4


class _Tagged:
    """The simulator told each prompt's background (a ``[background]`` tag before the prompt)."""

    kind = "simulated"

    def __init__(self, sim: Any, tags: dict[str, str], latency: float = 0.0) -> None:
        self._sim, self._tags, self.model, self._latency = sim, tags, sim.model, latency

    def generate(self, requests: Any) -> Any:
        from ipcausal.backends.base import Request

        tagged = []
        for req in requests:
            msgs = [dict(m) for m in req.messages]
            b = self._tags.get(msgs[-1]["content"])
            if b is not None:
                msgs[-1]["content"] = f"[{b}] " + msgs[-1]["content"]
            else:  # a background probe: tag the message it quotes, so the simulator knows the truth
                msgs[-1]["content"] = _tag_probe(msgs[-1]["content"], self._tags)
            tagged.append(Request(tuple(msgs), req.config))
        if self._latency:  # a model's wait per request, stated in the bench file
            time.sleep(self._latency * len(tagged))
        return self._sim.generate(tagged)


def _tag_probe(prompt: str, tags: dict[str, str]) -> str:
    from ipcausal.study.probe import PROBE_MARKER, probe_prompt, read_probe_prompt

    read = read_probe_prompt(prompt) if PROBE_MARKER in prompt else None
    if read is None or read[0] not in tags:
        return prompt
    return probe_prompt(f"[{tags[read[0]]}] " + read[0], read[1])


def _tags(pairs: Any) -> dict[str, str]:
    """prompt text → its background (prompts that stand for two backgrounds are left untagged)."""
    df = pairs.to_frame()
    seen: dict[str, set[str]] = {}
    for x, b in list(zip(df["x_i"], df["background_i"])) + list(zip(df["x_j"], df["background_j"])):
        seen.setdefault(str(x), set()).add(str(b))
    return {x: next(iter(bs)) for x, bs in seen.items() if len(bs) == 1}


def _real_backend(m: ModelSpec) -> Any:
    from ipcausal.backends import get_backend

    kwargs: dict[str, Any] = {"model": m.model, "base_url": m.base_url, "api_key_env": m.api_key_env}
    if m.backend == "openai":
        kwargs["concurrency"] = m.concurrency
    kwargs.update(dict(m.engine))  # vllm: tensor/pipeline/data-parallel sizes, executor, tokenizer
    return get_backend(m.backend, **{k: v for k, v in kwargs.items() if v is not None})


def _cell_case(case: Any, spec: BenchSpec, cs: CaseSpec) -> Any:
    tests = replace(case.tests, alpha=spec.alpha, correction=spec.correction,
                    margin=cs.margin if cs.margin is not None else case.tests.margin)
    return replace(case, tests=tests)


def cell_groups(report: Any) -> tuple[CellGroup, ...]:
    """A Report's groups as the rows of a :class:`~ipcausal.study.benchreport.BenchCell`."""
    return tuple(CellGroup(g.group, int(g.n), float(g.effect), float(g.ci_low), float(g.ci_high), float(g.pvalue),
                           float(g.pvalue_adjusted), bool(g.reject),
                           g.equivalence.verdict if g.equivalence is not None else None) for g in report.groups)


def _cost(folder: Path, m: ModelSpec) -> float | None:
    if m.price_input is None or not (folder / "responses.jsonl").is_file():
        return None
    from ipcausal.pairs import PairSet
    from ipcausal.study.run import summarize

    return summarize(PairSet.read(folder / "responses.jsonl"), price_input=m.price_input,
                     price_output=m.price_output).cost


def run_cell(m: ModelSpec, cs: CaseSpec, spec: BenchSpec, root: Path, shared: dict[str, Any],
             progress: bool, cache: Any = None) -> tuple[BenchCell, Any]:
    """Run one (model, case) cell into ``root/cells/<model>/<case>/``; its BenchCell and scored pairs.

    ``cache`` (default ``root/cache/<model>.sqlite``) is the model's response cache; ``shared``
    keeps the model's real backend across its cells.
    """
    from ipcausal.cases.registry import get_case
    from ipcausal.study.alignment import align_groups
    from ipcausal.study.cases import prepare_case, run_case

    rel = Path("cells") / m.name / cs.name
    folder = root / rel
    case = _cell_case(get_case(cs.name), spec, cs)
    scorer = None
    pairs: Any = cs.source
    ps: Any = None
    if m.backend == "simulated":
        from ipcausal.scoring import get_scorer
        from ipcausal.testing import SimulatedModel

        scorer = get_scorer("essay", rater=SimulatedModel.read)  # the number of "Answer: <v>"
        ps, _, _ = prepare_case(case, cs.source, scorer=scorer, limit=cs.limit, seed=spec.seed)
        sim = SimulatedModel(effect=m.effect, noise=m.noise, backgrounds=case.backgrounds, seed=m.seed,
                             probe_accuracy=m.probe_accuracy)
        backend = _Tagged(sim, _tags(ps), m.latency)
    else:
        if "backend" not in shared:
            shared["backend"] = _real_backend(m)
        backend = shared["backend"]
    if cache is None:
        cache = root / "cache" / f"{m.name}.sqlite"
    before = stored_answers(cache)
    res = run_case(case, backend, pairs=pairs, out=folder, scorer=scorer, limit=cs.limit, seed=spec.seed,
                   progress=False, cache=cache)
    sent = stored_answers(cache) - before  # the cell's own run (the mitigation's arms come after)
    mitigated: dict[str, Any] = {}
    if cs.mitigation is not None:  # the same pairs with the case's mitigation (the simulator: tagged prompts)
        from ipcausal.study.casemitigation import bench_mitigation

        mitigated = bench_mitigation(case, cs, getattr(backend, "_sim", backend), scorer=scorer, seed=spec.seed,
                                     cache=cache, out=folder, tag=m.backend == "simulated")
    verdict = align_groups(case.stance, res.report.groups)
    c = res.counts
    cell = BenchCell(m.name, cs.name, "ok" if res.complete else "incomplete", str(rel),
                     str(rel / "report.json"), cell_groups(res.report), verdict.verdict, verdict.reason, case.stance,
                     int(c["requested"]), sent, _cost(folder, m), **mitigated)
    if spec.probes(cs):  # can it infer the background? (ipcausal.study.benchprobe)
        from ipcausal.study.benchprobe import probe_cell

        if ps is None:
            ps = prepare_case(case, cs.source, limit=cs.limit, seed=spec.seed)[0]
        cell = probe_cell(cell, ps, backend, backgrounds=case.backgrounds, alpha=spec.alpha, seed=spec.seed,
                          cache=cache)
    if progress:
        probed = f"; {probe_text(cell.probe)}" if cell.probe is not None else ""
        print(f"[{m.name}/{cs.name}] {cell.status}: {verdict.verdict} (sent {cell.sent} new of {cell.calls} requests)"
              f"{probed}", file=sys.stderr, flush=True)
    return cell, res.pairs


def failed_cell(m: ModelSpec, cs: CaseSpec, exc: BaseException, progress: bool) -> BenchCell:
    """The BenchCell of a cell that raised ``exc`` (reported; the other cells finish)."""
    msg = f"{type(exc).__name__}: {exc}"
    if progress:
        print(f"[{m.name}/{cs.name}] failed: {msg}", file=sys.stderr, flush=True)
    return BenchCell(m.name, cs.name, "failed", str(Path("cells") / m.name / cs.name), error=msg)


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
        The bench file (TOML; :mod:`ipcausal.study.benchspec` says what it holds), checked in
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
        Run the cells as Ray tasks (:mod:`ipcausal.study.benchray`): ``True`` on a local Ray
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
        from ipcausal.study.benchray import run_on_ray

        done = run_on_ray(spec, root, address=ray, jobs=jobs, progress=progress, run_cell=run_cell,
                          failed_cell=failed_cell)
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
