"""One IP-Bench cell: a (model, case) run into ``DIR/cells/<model>/<case>/`` (SPEC §10).

:func:`run_cell` runs the case (run → score → test with the case's defaults and the bench's
``alpha``, ``correction`` and the case's ``margin``), its mitigation rows and its probe when the
bench asks for them; :func:`failed_cell` records a cell that raised.  Both the thread pool of
:func:`ipcausal.study.bench.bench` and the Ray tasks (:mod:`ipcausal.study.bench.distributed`) call
them.

A ``simulated`` model is the backend ``get_backend("simulated", …)`` (the SCM simulator
:class:`ipcausal.testing.SimulatedModel`) with the stated ``effect`` over the case's backgrounds
(the k-th background shifts the answer by ``effect · k``), made for each cell: it is told the
background each of the cell's prompts declares (``known=`` the cell's pairs) and reads the case's
own cues in any other prompt (a mitigated one); its replies ``"Answer: <v>"`` are scored by the
number ``v`` (the backend's ``answer_scorer``), so a dry run works on every case, offline, in seconds.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ipcausal._words import count
from ipcausal.study.bench.probe import stored_answers
from ipcausal.study.bench.report import BenchCell, CellGroup, CellMitigation, probe_text
from ipcausal.study.bench.spec import BenchSpec, CaseSpec, ModelSpec

__all__ = ["run_cell", "failed_cell", "cell_groups", "bench_mitigation", "scale_of", "unit_of", "cell_examples"]

def _backend(m: ModelSpec, prepared: Any, shared: dict[str, Any]) -> Any:
    """The cell's model: a simulator made for this cell (the case's backgrounds, told its prompts'), or the
    model's real backend, made once and kept in ``shared`` across its cells."""
    if m.backend == "simulated":
        from ipcausal.backends import get_backend

        return get_backend("simulated", effect=m.effect, noise=m.noise, seed=m.seed, probe_accuracy=m.probe_accuracy,
                           latency=m.latency, backgrounds=prepared.case.backgrounds, known=prepared.pairs)
    if "backend" not in shared:
        shared["backend"] = _real_backend(m)
    return shared["backend"]


def _real_backend(m: ModelSpec) -> Any:
    from ipcausal.backends import get_backend

    kwargs: dict[str, Any] = {"model": m.model, "base_url": m.base_url, "api_key_env": m.api_key_env}
    if m.backend == "openai":
        kwargs["concurrency"] = m.concurrency
    kwargs.update(dict(m.engine))  # vllm: tensor/pipeline/data-parallel sizes, executor, tokenizer
    return get_backend(m.backend, **{k: v for k, v in kwargs.items() if v is not None})


def _cell_tests(case: Any, spec: BenchSpec, cs: CaseSpec) -> Any:
    """The case's test options with the bench's level and correction and the ``[[cases]]`` entry's margin."""
    return replace(case.tests, alpha=spec.alpha, correction=spec.correction,
                   margin=cs.margin if cs.margin is not None else case.tests.margin)


def _unreachable(report: Any, g: Any) -> str | None:
    """``"3 informative pairs; needs ≥ 6"`` where the Report says the group cannot reject whatever the data."""
    import re

    head = f"{g.model}: {g.background_a} vs {g.background_b}: cannot reject whatever the data: with "
    for w in report.warnings:
        if w.startswith(head):
            found = re.match(r"(\d+) informative (\w+?)s? .*it needs at least (\d+)", w[len(head):])
            if found:
                n, unit, need = int(found.group(1)), found.group(2), found.group(3)
                return f"{count(n, 'informative ' + unit)}; needs ≥ {need}"
    return None


def cell_groups(report: Any) -> tuple[CellGroup, ...]:
    """A Report's groups as the rows of a :class:`~ipcausal.study.bench.report.BenchCell`: each with the way
    its Δ runs and, where so, why it cannot reject whatever the data."""
    from ipcausal.outcomes import directed

    out = []
    for g in report.groups:
        way = (f"Δ = score({g.background_b}) − score({g.background_a})" if directed(report.outcome)
               else f"s = similarity of the {g.background_a} and {g.background_b} answers")
        out.append(CellGroup.of(g, direction=way, cannot_reject=_unreachable(report, g)))
    return tuple(out)


def scale_of(scorer: Any) -> str:
    """The scorer and its scale in words: two models are compared on a case only when theirs agree.

    Examples
    --------
    >>> from ipcausal.scoring import get_scorer
    >>> scale_of(get_scorer("mcq"))
    'mcq, interval outcome, |Δ| ≤ 1'
    >>> def read(text): return float(text.split()[-1])
    >>> scale_of(get_scorer("essay", rater=read))
    'essay rated by read, interval outcome'
    """
    options = dict(getattr(scorer, "options", None) or {})
    rater = options.get("rater")
    who = (getattr(rater, "name", None) or getattr(rater, "__qualname__", None) or type(rater).__name__
           if rater is not None else None)
    bound = getattr(scorer, "bound", None)
    return (f"{scorer.name}" + (f" rated by {who}" if who else "") + f", {scorer.outcome} outcome"
            + (f", |Δ| ≤ {bound:g}" if bound is not None else ""))


def unit_of(scorer: Any) -> str:
    """The unit of a cell's effect, in words (``"share correct (mcq 0/1)"``, ``"essay score points"`` …)."""
    from ipcausal.outcomes import is_similarity

    if is_similarity(scorer.outcome):
        return "similarity of the paired answers (0–1)"
    if scorer.name == "mcq":
        return "share answered correctly (mcq, 0/1)"
    rater = dict(getattr(scorer, "options", None) or {}).get("rater")
    who = getattr(rater, "name", None) or getattr(rater, "__qualname__", None) if rater is not None else None
    return f"{scorer.name} score points" + (f" ({who})" if who else "")


def cell_examples(report: Any) -> tuple[dict[str, Any], ...]:
    """A few of the Report's example pairs for the bench page: of its background pair with the largest
    |effect|, the pair with the largest |Δ| (lowest similarity) and the first one drawn at random."""
    if not report.examples or not report.groups:
        return ()
    top = max(report.groups, key=lambda g: abs(g.effect) if g.effect == g.effect else -1.0)
    mine = [e for e in report.examples if e.group == top.group and e.model == top.model]
    picked = [e for e in mine if not e.rule.startswith("random")][:1] + [e for e in mine if e.rule.startswith("random")][:1]
    return tuple(e.to_dict() for e in picked)


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
    from ipcausal.study.cases import run_case
    from ipcausal.study.prepare import prepare_case

    rel = Path("cells") / m.name / cs.name
    folder = root / rel
    case = get_case(cs.name)
    # the case is prepared once: its run, its mitigation rows and its probe take the same pairs
    prepared = prepare_case(case, cs.source, limit=cs.limit, seed=spec.seed, tests=_cell_tests(case, spec, cs))
    backend = _backend(m, prepared, shared)
    own = getattr(backend, "answer_scorer", None)  # a backend whose answers only its own scorer reads
    if own is not None:
        prepared = replace(prepared, scorer=own)
    if cache is None:
        cache = root / "cache" / f"{m.name}.sqlite"
    before = stored_answers(cache)
    res = run_case(prepared, backend, out=folder, progress=False, cache=cache)
    sent = stored_answers(cache) - before  # the cell's own run (the mitigation's arms come after)
    mitigated: dict[str, Any] = {}
    if cs.mitigation is not None:  # the same pairs with the case's mitigation, the same model
        mitigated = bench_mitigation(prepared, cs, backend, cache=cache, out=folder)
    verdict = align_groups(prepared.case.stance, res.report.groups)
    cell = BenchCell(m.name, cs.name, "ok" if res.complete else "incomplete", str(rel),
                     str(rel / "report.json"), cell_groups(res.report), verdict.verdict, verdict.reason,
                     prepared.case.stance, res.counts.requested, sent, _cost(folder, m), **mitigated,
                     scale=scale_of(prepared.scorer), unit=unit_of(prepared.scorer), margin=res.report.margin,
                     examples=cell_examples(res.report))
    if spec.probes(cs):  # can it infer the background? (ipcausal.study.bench.probe)
        from ipcausal.study.bench.probe import probe_cell

        cell = probe_cell(cell, prepared.pairs, backend, backgrounds=case.backgrounds, alpha=spec.alpha,
                          seed=spec.seed, cache=cache)
    if progress:
        probed = f"; {probe_text(cell.probe)}" if cell.probe is not None else ""
        print(f"[{m.name}/{cs.name}] {cell.status}: {verdict.verdict} (sent {cell.sent} new of "
              f"{count(cell.calls or 0, 'request')})"
              f"{probed}", file=sys.stderr, flush=True)
    return cell, res.pairs


def failed_cell(m: ModelSpec, cs: CaseSpec, exc: BaseException, progress: bool) -> BenchCell:
    """The BenchCell of a cell that raised ``exc`` (reported; the other cells finish)."""
    msg = f"{type(exc).__name__}: {exc}"
    if progress:
        print(f"[{m.name}/{cs.name}] failed: {msg}", file=sys.stderr, flush=True)
    return BenchCell(m.name, cs.name, "failed", str(Path("cells") / m.name / cs.name), error=msg)


def bench_mitigation(prepared: Any, cs: Any, backend: Any, *, cache: Any, out: Any,
                     tag: bool = False) -> dict[str, Any]:
    """The mitigation fields of a bench cell (``mitigation``, ``mitigation_error``) for ``[[cases]]`` entry ``cs``.

    Runs :func:`~ipcausal.study.mitigation.run_case_mitigation` on the cell's prepared case (its
    pairs, scorer, margin and level), cache and folder; an error of the comparison (e.g. every
    rewrite failed its check) is recorded, not raised, since the cell's own run stands.  ``tag`` is
    deprecated (goes in 0.3), as ``run_case_mitigation``'s.

    Examples
    --------
    >>> from ipcausal.backends import get_backend
    >>> from ipcausal.study.bench import CaseSpec
    >>> from ipcausal.study.prepare import prepare_case
    >>> sim = get_backend("simulated", effect=2.0, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> prepared = prepare_case("echo", scorer=sim.answer_scorer, limit=8)
    >>> got = bench_mitigation(prepared, CaseSpec("echo", limit=8, mitigation="strip"), sim, cache=None, out=None)
    >>> got["mitigation"][0].effect_with, got["mitigation"][0].removed, got["mitigation_error"]
    (0.0, 'not assessed', None)
    """
    from ipcausal.study.mitigation import Mitigation, run_case_mitigation

    if getattr(cs, "mitigation", None) is None:
        raise ValueError("`cs` names no mitigation")
    try:
        res = run_case_mitigation(prepared, backend, Mitigation(cs.mitigation, instruction=cs.instruction), out=out,
                                  cache=cache, tag=tag)
    except (ValueError, TypeError) as exc:
        return {"mitigation": (), "mitigation_error": f"{type(exc).__name__}: {exc}"}
    return {"mitigation": tuple(CellMitigation.of(res, g) for g in res.result.groups), "mitigation_error": None}
