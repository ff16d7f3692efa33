"""Any registered case end to end: pairs → run → score → test → report.

A case is a :class:`ipcausal.cases.Case` (the three built-ins, ``culture``, ``education`` and
``echo``, and any a plugin publishes; see ``ipcausal cases``).  :func:`prepare_case`
(:mod:`ipcausal.study.prepare`) fixes its pairs (the case's embedded demo set by default, or a
PairSet file built with ``ipcausal build``), scorer, generation settings and test options in a
:class:`~ipcausal.study.prepare.PreparedCase`; :func:`run_case` runs them through a backend with
a response cache in the output folder (so a killed run resumes without asking the model again),
scores them with the case's scorer, tests them with the case's test defaults and writes
``responses.jsonl``, ``pairs.jsonl`` (scored), ``dropped.jsonl`` (if any), ``report.json`` and
``meta.json`` (the Report with the run's counts and settings; ``ipcausal case`` and ``ipcausal
demo`` render it as ``report.md``/``report.html`` with :mod:`ipcausal.report`, which this module
does not import).  :func:`run_demo` runs the
built-in cases on their demo sets with the local model.  Nothing here branches on a case's name:
what differs between cases is a field of its Case.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ipcausal.outcomes import directed
from ipcausal.pairs import PairSet
from ipcausal.study.prepare import (
    PREPARE_KEYS,
    PreparedCase,
    as_prepared,
    case_test_options,
    check_limit,
    max_tokens_for,
    prepare_case,
)
from ipcausal.study.record import Counts, RunRecord, dropped_by_reason, write_outputs

__all__ = ["CaseResult", "PreparedCase", "prepare_case", "run_case", "run_case_sequential", "run_demo",
           "max_tokens_for", "case_test_options", "unscored_report"]


@dataclass(frozen=True)
class CaseResult:
    """One case run: scored pairs, the test report, its :class:`~ipcausal.study.record.Counts`, settings and the
    files written."""

    case: str
    title: str
    pairs: PairSet
    report: Any
    counts: Counts
    settings: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)
    complete: bool = True


def run_case(
    case: Any,
    backend: Any,
    *,
    out: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | Any | None = None,
    progress: bool = True,
    samples: int = 1,
    pairs: Any = None,
    scorer: Any = None,
    limit: int | None = None,
    config: Any = None,
    unparseable: str | None = None,
    seed: int | None = None,
) -> CaseResult:
    """Run a prepared case on ``backend``: its pairs → the model → scores → tests → report.

    Parameters
    ----------
    case : PreparedCase, str or Case
        The case with its pairs, scorer, generation settings and test options
        (:func:`prepare_case`); a registered case's name (``ipcausal cases``) or a Case is
        prepared with the defaults (its embedded demo set).
    backend : Backend
        The model under test.
    out : path, optional
        Output folder (created); holds the response cache, so a rerun resumes.
    cache : path, optional
        The response cache, a path or a ResponseCache (default ``out/cache.sqlite``; a bench shares one per model).
    progress : bool
        Progress bars on stderr.
    samples : int
        With r ≥ 2 (a case scored by a free-text similarity, embedding or judge): ask for r sampled
        answers per prompt (temperature 0.7 unless the config sets one) and test with
        :func:`ipcausal.distribution_test` — does the background change the distribution of the
        answer? — instead of the m0 sign test.
    pairs, scorer, limit, config, unparseable, seed
        Deprecated (until 0.3): the keywords of :func:`prepare_case`; pass ``prepare_case(case, …)``.

    Returns
    -------
    CaseResult

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=0.5, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> res = run_case(prepare_case("echo", limit=4, unparseable="zero"), sim, progress=False)
    >>> res.title, res.counts.requested
    ('Echo chamber: the user states a true vs a false belief', 8)
    """
    from ipcausal.backends.base import Backend
    from ipcausal.scoring import NoScorablePairs, score_pairs
    from ipcausal.study.run import run, summarize
    from ipcausal.study.test import MonteCarloResolutionWarning, test

    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend")
    # everything that can be checked is checked before the first request
    prepared = as_prepared(case, dict(zip(PREPARE_KEYS, (pairs, scorer, limit, config, unparseable, seed))),
                           "run_case")
    case, ps, made, config, seed = prepared.case, prepared.pairs, prepared.scorer, prepared.config, prepared.seed
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"`samples` must be a positive integer, got {samples!r}")
    if samples > 1:
        if made.name not in ("embedding", "judge"):
            raise ValueError(f"`samples` > 1 (the distribution test of free text) needs a free-text similarity "
                             f"(embedding or judge), not {made.name!r}")
        from dataclasses import replace as _replace

        config = _replace(config, n=samples, temperature=config.temperature or 0.7)
    outdir = _outdir(out)
    if cache is None and outdir is not None:
        cache = outdir / "cache.sqlite"
    from ipcausal.backends.cache import ResponseCache

    if cache is not None and not isinstance(cache, ResponseCache):
        cache = str(cache)
    earlier = _earlier_run_seconds(outdir)

    t0 = time.perf_counter()
    answered = run(ps, backend, cache=cache, config=config, progress=progress)
    summary = summarize(answered)
    t_run = time.perf_counter() - t0

    try:
        scored = score_pairs(answered, made, unparseable=prepared.unparseable)
    except NoScorablePairs as exc:  # nothing to test: the responses and the reason are still written
        scored = None
        score_counts, dropped, desc = exc.counts, exc.dropped, exc.scorer or made.describe()
        report = unscored_report(case, score_counts, desc)
    else:
        score_counts, dropped, desc = scored.counts, scored.dropped, scored.scorer
        options, cue_note = prepared.test_options(scored.pairs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MonteCarloResolutionWarning)  # kept in the report's warnings
            if samples >= 2:
                # r sampled answers per side: the free-text test of Definition 1, no m0 threshold
                report = _distribution_report(scored.pairs, made, seed)
            else:
                report = test(scored.pairs, rng=seed, cluster=prepared.cluster, **options)
    counts = Counts(pairs=len(ps), requested=summary.requested, completed=summary.completed,
                    from_cache=summary.from_cache, failed=summary.failed, unparseable=score_counts["unparseable"],
                    excluded=len(ps) - score_counts["scored"], scored=score_counts["scored"])
    settings = {
        "model": str(getattr(backend, "model", "?")),
        "backend": str(getattr(backend, "kind", "?")),
        "generation": config.to_dict(),
        "pairs from": prepared.label,
        "scorer": desc,
        "unparseable policy": prepared.unparseable,
        "seed": seed,
        "run seconds": round(t_run, 1) if earlier is None or summary.from_cache < summary.completed else earlier,
    }
    if earlier is not None and summary.completed and summary.from_cache == summary.completed:
        # a rerun answered from the cache keeps the first run's time and shows its own apart
        settings["rerun seconds (from cache)"] = round(t_run, 1)
    if not prepared.given:
        settings.update(prepared.source.settings)
    if scored is not None and cue_note:
        settings["per-cue rows"] = cue_note
    files: dict[str, str] = {}
    if outdir is not None:
        seconds = {"run": settings["run seconds"]}
        if "rerun seconds (from cache)" in settings:
            seconds["rerun (from cache)"] = settings["rerun seconds (from cache)"]
        record = RunRecord(case.title, counts, dropped_by_reason(dropped), settings, seconds, summary.cost)
        files = write_outputs(outdir, report, record, responses=answered,
                              scored=scored.pairs if scored is not None else None, dropped=dropped,
                              meta={"case": case.name, "title": case.title, "counts": counts.to_dict(),
                                    "settings": settings})
    return CaseResult(case.name, case.title, scored.pairs if scored is not None else answered.head(0), report, counts,
                      settings, files, complete=summary.failed == 0 and scored is not None)


def unscored_report(case: Any, counts: dict[str, int], scorer: str) -> Any:
    """The Report of a run that scored no pair: no groups, and a warning that says why.

    Examples
    --------
    >>> r = unscored_report("echo", {"requested": 6, "scored": 0, "unparseable": 6}, "mcq")
    >>> r.groups, r.warnings[0][:60]
    ((), 'no pair could be scored: 6 of 6 pairs had an answer the scor')
    """
    from ipcausal.cases.registry import get_case
    from ipcausal.study.results import Report

    case = get_case(case)
    n = int(counts.get("requested", 0))
    parts = [f"{counts[k]} {what}" for k, what in (("unparseable", "unparseable"), ("missing", "without a response"),
                                                   ("failed", "whose judge failed")) if counts.get(k)]
    unread = int(counts.get("unparseable", 0))
    lead = (f"{unread} of {n} pairs had an answer the scorer ({scorer}) could not read" if unread
            else f"none of the {n} pairs had both answers")
    why = (f"no pair could be scored: {lead} ({', '.join(parts) or 'none scored'}); nothing was tested — "
           "`ipcausal failures OUT` lists the replies")
    tests = case.tests
    return Report(groups=(), outcome=case.outcome.name, alpha=tests.alpha, correction=tests.correction,
                  method="not run", m0=tests.m0 if not directed(case.outcome.name) else None, paper_compat=False,
                  null_hypothesis="not tested: no pair could be scored", direction="", warnings=(why,))


def _outdir(out: Any) -> Path | None:
    """The output folder ``out`` (created), or None; a file there is an error."""
    if out is None:
        return None
    outdir = Path(out)
    if outdir.exists() and not outdir.is_dir():
        raise ValueError(f"`out` must be a folder, but {str(outdir)!r} is a file")
    outdir.mkdir(parents=True, exist_ok=True)
    return outdir


def _distribution_report(pairs: PairSet, scorer: Any, seed: int) -> Any:
    """The distribution test of r sampled answers per side, with ``scorer``'s similarity."""
    from ipcausal.scoring import EmbeddingSimilarity
    from ipcausal.study.distribution import distribution_test

    similarity: Any = scorer.name
    if scorer.name == "embedding":
        emb = scorer.options.get("embedder") or EmbeddingSimilarity()  # a batch scorer: one pair at a time here
        similarity = lambda a, b: float(emb([a], [b])[0])  # noqa: E731
    return distribution_test(pairs, similarity=similarity, rng=seed, backend=scorer.options.get("backend"))


def run_case_sequential(case: Any, backend: Any, *, out: str | os.PathLike[str] | None = None, settings: Any = None,
                        progress: bool = True, pairs: Any = None, scorer: Any = None, limit: int | None = None,
                        config: Any = None, unparseable: str | None = None, seed: int | None = None) -> CaseResult:
    """:func:`run_case` as an anytime-valid audit (:func:`ipcausal.audit`): stop once every pair is decided.

    Same prepared case (pairs, scorer, generation settings: :func:`prepare_case`) and output files
    as :func:`run_case` (``responses.jsonl`` then holds only the pairs sent); the seed also fixes the
    order of the pairs, so a rerun with the same ``out`` resumes from ``out/cache.sqlite``.
    ``settings`` (an :class:`~ipcausal.study.options.AuditSettings`: ``alpha``, ``margin``,
    ``max_pairs``, ``batch_size``, ``correction`` …) go to the audit; its ``cluster`` is the case's
    natural cluster when none is set.  ``pairs``, ``scorer``, ``limit``, ``config``, ``unparseable``
    and ``seed`` are deprecated (until 0.3): pass ``prepare_case(case, …)``.

    Examples
    --------
    >>> from ipcausal.study.options import AuditSettings
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=0.5, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> res = run_case_sequential(prepare_case("echo", limit=8, unparseable="zero"), sim, progress=False,
    ...                           settings=AuditSettings(batch_size=4))
    >>> res.title, res.counts.pairs_available
    ('Echo chamber: the user states a true vs a false belief (sequential audit)', 8)
    """
    from dataclasses import replace

    from ipcausal.study.audit import audit
    from ipcausal.study.options import AuditSettings, RunOptions, given

    prepared = as_prepared(case, dict(zip(PREPARE_KEYS, (pairs, scorer, limit, config, unparseable, seed))),
                           "run_case_sequential")
    case, ps, made, config, seed = prepared.case, prepared.pairs, prepared.scorer, prepared.config, prepared.seed
    settings = given(settings, AuditSettings, "settings")
    if settings.cluster is None:
        settings = replace(settings, cluster=prepared.cluster)
    outdir = _outdir(out)
    t0 = time.perf_counter()
    res = audit(ps, backend=backend, scorer=made, settings=settings, rng=seed, unparseable=prepared.unparseable,
                options=RunOptions(config=config, cache=outdir / "cache.sqlite" if outdir else None),
                progress=progress)
    counts = replace(res.counts, completed=res.summary.completed, from_cache=res.summary.from_cache,
                     failed=res.summary.failed)
    run_settings = {"model": str(getattr(backend, "model", "?")), "backend": str(getattr(backend, "kind", "?")),
                    "generation": config.to_dict(), "pairs from": prepared.label, "scorer": made.name, "seed": seed,
                    "sequential": True, "run seconds": round(time.perf_counter() - t0, 1)}
    title = case.title + " (sequential audit)"
    scored = res.scored if res.scored is not None else res.responses
    files: dict[str, str] = {}
    if outdir is not None:
        record = RunRecord(title, counts, {}, run_settings, {"run": run_settings["run seconds"]}, res.summary.cost)
        files = write_outputs(outdir, res.report, record, responses=res.responses, scored=scored)
    return CaseResult(case.name, title, scored, res.report, counts, run_settings, files, res.summary.complete)


def _earlier_run_seconds(outdir: Path | None) -> float | None:
    """The model time of the run that filled ``outdir``'s cache (from its meta.json), if any."""
    if outdir is None or not (outdir / "meta.json").is_file():
        return None
    try:
        v = json.loads((outdir / "meta.json").read_text()).get("settings", {}).get("run seconds")
    except (OSError, ValueError):
        return None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def run_demo(
    out: str | os.PathLike[str] = "demo-out",
    *,
    backend: Any = None,
    limit: int | None = None,
    progress: bool = True,
    seed: int = 0,
) -> list[CaseResult]:
    """The study's three cases (:data:`~ipcausal.cases.registry.DEMO_CASES`) on their embedded demo sets with the local model, each into ``out/<case>``.

    Render them with :func:`ipcausal.report.write_case_reports` (``ipcausal demo`` does).

    Examples
    --------
    >>> results = run_demo("demo-out")  # doctest: +SKIP
    """
    from ipcausal.cases.registry import DEMO_CASES

    check_limit(limit)
    if backend is None:
        from ipcausal.backends import get_backend

        backend = get_backend("local")
    root = Path(out)
    results = []
    for c in DEMO_CASES:
        if progress:
            print(f"[{c}] running ...", file=sys.stderr, flush=True)
        results.append(run_case(prepare_case(c, limit=limit, seed=seed), backend, out=root / c, progress=progress))
    return results
