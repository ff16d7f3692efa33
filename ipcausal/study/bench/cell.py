"""One IP-Bench cell: a (model, case) run into ``DIR/cells/<model>/<case>/`` (SPEC §10).

:func:`run_cell` runs the case (run → score → test with the case's defaults and the bench's
``alpha``, ``correction`` and the case's ``margin``), its mitigation rows and its probe when the
bench asks for them; :func:`failed_cell` records a cell that raised.  Both the thread pool of
:func:`ipcausal.study.bench.bench` and the Ray tasks (:mod:`ipcausal.study.bench.distributed`) call
them.

A ``simulated`` model is the SCM simulator :class:`ipcausal.testing.SimulatedModel` with the
stated ``effect`` over the case's backgrounds (the k-th background shifts the answer by
``effect · k``).  The bench tells it each prompt's background (a tag the simulator reads and that
leaves the prompt's meaning unchanged) and scores its ``"Answer: <v>"`` replies by the number
``v``, so a dry run works on any case with an interval outcome, offline, in seconds.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ipcausal.study.bench.probe import stored_answers
from ipcausal.study.bench.report import BenchCell, CellGroup, CellMitigation, probe_text
from ipcausal.study.bench.spec import BenchSpec, CaseSpec, ModelSpec

__all__ = ["run_cell", "failed_cell", "cell_groups", "bench_mitigation"]

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
    """A Report's groups as the rows of a :class:`~ipcausal.study.bench.report.BenchCell`."""
    return tuple(CellGroup(g.group, int(g.n), float(g.effect), float(g.ci_low), float(g.ci_high), float(g.pvalue),
                           float(g.pvalue_adjusted), bool(g.reject),
                           g.equivalence.verdict if g.equivalence is not None else None,
                           d_z=_dz(g), mde=g.mde.effect if g.mde is not None and not g.reject else None)
                 for g in report.groups)


def _dz(g: Any) -> float | None:
    d = getattr(g.detail, "effect_size", None)
    return None if d is None or d != d else float(d)


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
        mitigated = bench_mitigation(case, cs, getattr(backend, "_sim", backend), scorer=scorer, seed=spec.seed,
                                     cache=cache, out=folder, tag=m.backend == "simulated")
    verdict = align_groups(case.stance, res.report.groups)
    c = res.counts
    cell = BenchCell(m.name, cs.name, "ok" if res.complete else "incomplete", str(rel),
                     str(rel / "report.json"), cell_groups(res.report), verdict.verdict, verdict.reason, case.stance,
                     int(c["requested"]), sent, _cost(folder, m), **mitigated)
    if spec.probes(cs):  # can it infer the background? (ipcausal.study.bench.probe)
        from ipcausal.study.bench.probe import probe_cell

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


def bench_mitigation(case: Any, cs: Any, backend: Any, *, scorer: Any, seed: int, cache: Any, out: Any,
                     tag: bool = False) -> dict[str, Any]:
    """The mitigation fields of a bench cell (``mitigation``, ``mitigation_error``) for ``[[cases]]`` entry ``cs``.

    Runs :func:`~ipcausal.study.mitigation.run_case_mitigation` on the cell's case (its margin and level), pairs, cache and
    folder; an error of the comparison (e.g. every rewrite failed its check) is recorded, not raised,
    since the cell's own run stands.

    Examples
    --------
    >>> from ipcausal.study.bench import CaseSpec
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=2.0, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> from ipcausal.scoring import get_scorer
    >>> got = bench_mitigation("echo", CaseSpec("echo", limit=8, mitigation="strip"), sim, tag=True,
    ...                        scorer=get_scorer("essay", rater=SimulatedModel.read), seed=0, cache=None, out=None)
    >>> got["mitigation"][0].effect_with, got["mitigation"][0].removed, got["mitigation_error"]
    (0.0, 'not assessed', None)
    """
    from ipcausal.study.mitigation.case import run_case_mitigation
    from ipcausal.study.mitigation.transforms import Mitigation

    if getattr(cs, "mitigation", None) is None:
        raise ValueError("`cs` names no mitigation")
    try:
        res = run_case_mitigation(case, backend, Mitigation(cs.mitigation, instruction=cs.instruction),
                                  pairs=cs.source, out=out, scorer=scorer, limit=cs.limit, seed=seed, cache=cache,
                                  tag=tag)
    except (ValueError, TypeError) as exc:
        return {"mitigation": (), "mitigation_error": f"{type(exc).__name__}: {exc}"}
    r = res.result
    rows = tuple(CellMitigation(res.mitigation, g.group, int(g.n), float(g.effect_without), float(g.effect_with),
                                float(g.change), float(g.change_ci_low), float(g.change_ci_high),
                                float(g.change_pvalue), res.status(g), int(r.n_failed_check)) for g in r.groups)
    return {"mitigation": rows, "mitigation_error": None}
