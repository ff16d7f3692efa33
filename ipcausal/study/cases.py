"""Any registered case end to end: pairs → run → score → test → report.

A case is a :class:`ipcausal.cases.Case` (the three built-ins, ``culture``, ``education`` and
``echo``, and any a plugin publishes; see ``ipcausal cases``).  :func:`run_case` takes its pairs
(the case's embedded demo set by default, or a PairSet file built with ``ipcausal build``), runs
them through a backend with a response cache in the output folder (so a killed run resumes
without asking the model again), scores them with the case's scorer, tests them with the case's
test defaults and writes ``responses.jsonl``, ``pairs.jsonl`` (scored), ``dropped.jsonl`` (if
any), ``report.json`` and ``meta.json`` (the Report with the run's counts and settings;
``ipcausal case`` and ``ipcausal demo`` render it as ``report.md``/``report.html`` with
:mod:`ipcausal.report`, which this module does not import).  :func:`run_demo` runs the
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
from ipcausal.study.record import RunRecord, dropped_by_reason, write_outputs

__all__ = ["CaseResult", "prepare_case", "run_case", "run_case_sequential", "run_demo", "max_tokens_for",
           "case_test_options", "unscored_report"]


def max_tokens_for(case: Any, *, demo: bool) -> int:
    """The generation budget of ``case``: its demo set's, or its full-size pairs'.

    Examples
    --------
    >>> max_tokens_for("echo", demo=True), max_tokens_for("education", demo=False)
    (8, 640)
    """
    from ipcausal.cases.registry import get_case

    return get_case(case).source(given=not demo).max_tokens


@dataclass(frozen=True)
class CaseResult:
    """One case run: scored pairs, the test report, counts, settings and the files written."""

    case: str
    title: str
    pairs: PairSet
    report: Any
    counts: dict[str, Any]
    settings: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)
    complete: bool = True


def _cluster_column(ps: PairSet) -> str | None:
    """The natural cluster id the builders write (``question_id``, ``prompt_id``), when a background pair
    really has several pairs of one cluster (otherwise every cluster is a single pair: no cluster)."""
    df = ps.to_frame()
    for col in ("question_id", "prompt_id"):
        if col in df.columns:
            key = df["background_i"].astype(str) + "|" + df["background_j"].astype(str)
            if "model" in df.columns:
                key = key + "|" + df["model"].astype(str)
            if df.assign(_k=key).duplicated(["_k", col]).any():
                return col
    return None


def case_test_options(case: Any, pairs: PairSet) -> tuple[dict[str, Any], str | None]:
    """The keywords of :func:`ipcausal.test` for a run of ``case`` on ``pairs``, and a note or None.

    A case whose test options name a cue column (``strata``) gets the per-cue rows when the
    pairs have that column; pairs built without it (an older build, the user's own) are tested
    without them, and the note says so.
    """
    from dataclasses import replace

    options = case.tests.kwargs()
    design = options.get("design")
    column = design.strata if design is not None else None
    if column is not None and column not in pairs:
        options["design"] = replace(design, strata=None)
        return options, f"not run: the pairs have no `{column}` column (build them again to record it)"
    return options, None


def _check_limit(limit: Any) -> None:
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ValueError(f"`limit` must be a positive integer or None, got {limit!r}")


def _case_pairs(case: Any, pairs: Any, limit: int | None, seed: int) -> tuple[PairSet, str, Any]:
    """``(pairs, label, source)``: the given pairs (a PairSet or file) or the case's demo set, and the
    :class:`~ipcausal.cases.PairSource` whose budget and scorer a run on them uses."""
    if isinstance(pairs, (str, os.PathLike)):
        pairs = PairSet.read(pairs)
    _check_limit(limit)
    if pairs is None:
        src = case.source(given=False)
        ps = src.load(seed, limit if limit is not None else src.limit)
        if not isinstance(ps, PairSet):
            raise TypeError(f"case {case.name!r}: its demo `load` returned a {type(ps).__name__}, not a PairSet")
        return ps, src.label, src
    if isinstance(pairs, PairSet):
        src = case.source(given=True)
        return (pairs.head(limit) if limit is not None else pairs), "given pairs", src


    raise TypeError("`pairs` must be a PairSet, a file path or None")


def prepare_case(
    case: Any,
    pairs: PairSet | str | os.PathLike[str] | None = None,
    *,
    scorer: Any = None,
    judge: bool = False,
    limit: int | None = None,
    unparseable: str = "exclude",
    seed: int = 0,
) -> tuple[PairSet, str, Any]:
    """Check a case's inputs before any model is loaded or asked: ``(pairs, source, scorer)``.

    Reads (or builds) the pairs, applies ``limit``, picks the scorer (``scorer``, a Scorer or a
    registered name; else the case's for these pairs, its judged variant with ``judge``) and
    checks with :func:`ipcausal.scoring.check_scorer` that the pairs have the columns it needs and
    that a judge is given when it needs one (``judge``: whether a judge backend will be given).
    ``ipcausal case`` calls it before it loads the model; :func:`run_case` before the first request.

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records([{"pair_id": 1, "background_i": "true_belief",
    ...     "background_j": "false_belief", "x_i": "q?", "x_j": "q?"}])
    >>> prepare_case("echo", ps)
    Traceback (most recent call last):
    ...
    ValueError: scorer 'mcq' needs the column `options` in `pairs`
    """
    from ipcausal.cases.registry import get_case
    from ipcausal.scoring import check_policy, check_scorer, get_scorer

    case = get_case(case)
    _check_limit(limit)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer, got {seed!r}")
    check_policy(unparseable)
    if not isinstance(judge, bool):
        raise TypeError(f"`judge` must be True or False, got {judge!r}")
    ps, source, _ = _case_pairs(case, pairs, limit, seed)
    if len(ps) == 0:
        raise ValueError("`pairs` holds no pairs: there is nothing to run")
    if scorer is None:
        made = case.judged if judge and case.judged is not None else case.scorer_for(given=pairs is not None)
    else:
        made = get_scorer(scorer)
    check_scorer(made, ps.columns, backend=True if judge else None)
    return ps, source, made


def run_case(
    case: Any,
    backend: Any,
    *,
    pairs: PairSet | str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    scorer: Any = None,
    limit: int | None = None,
    config: Any = None,
    unparseable: str = "exclude",
    seed: int = 0,
    progress: bool = True,
    samples: int = 1,
    cache: str | os.PathLike[str] | Any | None = None,
) -> CaseResult:
    """Read (or make) the pairs of ``case``, run them on ``backend``, score, test and report.

    Parameters
    ----------
    case : str or Case
        A registered case (``ipcausal cases``; :func:`ipcausal.cases.get_case`) or a Case.
    backend : Backend
        The model under test.
    pairs : PairSet or path, optional
        Pairs to use (e.g. from ``ipcausal build``); default the case's embedded demo set.
    out : path, optional
        Output folder (created); holds the response cache, so a rerun resumes.
    scorer : Scorer or str, optional
        How to score (:func:`ipcausal.scoring.get_scorer`, made with its options); default the
        case's for these pairs.  With an LLM judge: ``case.scorer_for(given, judge=backend)``
        (culture → judge similarity 1–5, education → rubric rating 1–6).
    limit : int, optional
        Use only the first ``limit`` items (default: the demo set's own size).
    config : GenerationConfig, optional
        Generation settings (default: greedy, seed ``seed``, the case's budget for these pairs —
        for the built-ins 40/112/8 tokens on the demo sets of culture/education/echo, 256/640/16
        on given pairs).
    unparseable : {"exclude", "zero"}
        Policy for unscoreable answers.
    seed : int
        Seed for pair generation and the tests' randomness.
    progress : bool
        Progress bars on stderr.
    samples : int
        With r ≥ 2 (a case scored by a free-text similarity, embedding or judge): ask for r sampled
        answers per prompt (temperature 0.7 unless ``config`` sets one) and test with
        :func:`ipcausal.distribution_test` — does the background change the distribution of the
        answer? — instead of the m0 sign test.
    cache : path, optional
        The response cache, a path or a ResponseCache (default ``out/cache.sqlite``; a bench shares one per model).

    Returns
    -------
    CaseResult

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=0.5, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> res = run_case("echo", sim, limit=4, unparseable="zero", progress=False)
    >>> res.title, res.counts["requested"]
    ('Echo chamber: the user states a true vs a false belief', 8)
    """
    from ipcausal.backends.base import Backend, GenerationConfig
    from ipcausal.cases.registry import get_case
    from ipcausal.scoring import NoScorablePairs, score_pairs
    from ipcausal.study.run import run, summarize
    from ipcausal.study.test import MonteCarloResolutionWarning, test

    case = get_case(case)
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend")
    # everything that can be checked is checked before the first request
    ps, source, made = prepare_case(case, pairs, scorer=scorer, limit=limit, unparseable=unparseable, seed=seed)
    src = case.source(given=pairs is not None)
    if config is None:
        config = GenerationConfig(max_tokens=src.max_tokens, temperature=0.0, seed=seed)
    if not isinstance(config, GenerationConfig):
        raise TypeError("`config` must be a GenerationConfig")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"`samples` must be a positive integer, got {samples!r}")
    if samples > 1:
        if made.name not in ("embedding", "judge"):
            raise ValueError(f"`samples` > 1 (the distribution test of free text) needs a free-text similarity "
                             f"(embedding or judge), not {made.name!r}")
        from dataclasses import replace as _replace

        config = _replace(config, n=samples, temperature=config.temperature or 0.7)
    outdir = Path(out) if out is not None else None
    if outdir is not None:
        if outdir.exists() and not outdir.is_dir():
            raise ValueError(f"`out` must be a folder, but {str(outdir)!r} is a file")
        outdir.mkdir(parents=True, exist_ok=True)
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
        scored = score_pairs(answered, made, unparseable=unparseable)
    except NoScorablePairs as exc:  # nothing to test: the responses and the reason are still written
        scored = None
        score_counts, dropped, desc = exc.counts, exc.dropped, exc.scorer or made.describe()
        report = unscored_report(case, score_counts, desc)
    else:
        score_counts, dropped, desc = scored.counts, scored.dropped, scored.scorer
        options, cue_note = case_test_options(case, scored.pairs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MonteCarloResolutionWarning)  # kept in the report's warnings
            if samples >= 2:
                # r sampled answers per side: the free-text test of Definition 1, no m0 threshold
                report = _distribution_report(scored.pairs, made, seed)
            else:
                report = test(scored.pairs, rng=seed, cluster=_cluster_column(scored.pairs), **options)
    counts = {
        "pairs": len(ps),
        "requested": summary.requested,
        "completed": summary.completed,
        "from cache": summary.from_cache,
        "failed": summary.failed,
        "unparseable": score_counts["unparseable"],
        "excluded": len(ps) - score_counts["scored"],
        "scored": score_counts["scored"],
    }
    settings = {
        "model": str(getattr(backend, "model", "?")),
        "backend": str(getattr(backend, "kind", "?")),
        "generation": config.to_dict(),
        "pairs from": source,
        "scorer": desc,
        "unparseable policy": unparseable,
        "seed": seed,
        "run seconds": round(t_run, 1) if earlier is None or summary.from_cache < summary.completed else earlier,
    }
    if earlier is not None and summary.completed and summary.from_cache == summary.completed:
        # a rerun answered from the cache keeps the first run's time and shows its own apart
        settings["rerun seconds (from cache)"] = round(t_run, 1)
    if pairs is None:
        settings.update(src.settings)
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
                              meta={"case": case.name, "title": case.title, "counts": counts, "settings": settings})
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


def _distribution_report(pairs: PairSet, scorer: Any, seed: int) -> Any:
    """The distribution test of r sampled answers per side, with ``scorer``'s similarity."""
    from ipcausal.scoring import EmbeddingSimilarity
    from ipcausal.study.distribution import distribution_test

    similarity: Any = scorer.name
    if scorer.name == "embedding":
        emb = scorer.options.get("embedder") or EmbeddingSimilarity()  # a batch scorer: one pair at a time here
        similarity = lambda a, b: float(emb([a], [b])[0])  # noqa: E731
    return distribution_test(pairs, similarity=similarity, rng=seed, backend=scorer.options.get("backend"))


def run_case_sequential(case: Any, backend: Any, *, pairs: PairSet | str | os.PathLike[str] | None = None,
                        out: str | os.PathLike[str] | None = None, scorer: Any = None, limit: int | None = None,
                        config: Any = None, unparseable: str = "exclude", seed: int = 0, progress: bool = True,
                        settings: Any = None) -> CaseResult:
    """:func:`run_case` as an anytime-valid audit (:func:`ipcausal.audit`): stop once every pair is decided.

    Same pairs, scorer and output files as :func:`run_case` (``responses.jsonl`` then holds only the
    pairs sent); ``seed`` also fixes the order of the pairs, so a rerun with the same ``out``
    resumes from ``out/cache.sqlite``.  ``settings`` (an :class:`~ipcausal.study.options.AuditSettings`:
    ``alpha``, ``margin``, ``max_pairs``, ``batch_size``, ``correction`` …) go to the audit; its
    ``cluster`` is the case's natural cluster when none is set.

    Examples
    --------
    >>> from ipcausal.study.options import AuditSettings
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=0.5, seed=1, backgrounds=("true_belief", "false_belief"))
    >>> res = run_case_sequential("echo", sim, limit=8, unparseable="zero", progress=False,
    ...                           settings=AuditSettings(batch_size=4))
    >>> res.title, res.counts["pairs_available"]
    ('Echo chamber: the user states a true vs a false belief (sequential audit)', 8)
    """
    from dataclasses import replace

    from ipcausal.backends.base import GenerationConfig
    from ipcausal.cases.registry import get_case
    from ipcausal.scoring import get_scorer
    from ipcausal.study.audit import audit
    from ipcausal.study.options import AuditSettings, RunOptions, given

    case = get_case(case)
    ps, source, src = _case_pairs(case, pairs, limit, seed)
    if config is None:
        config = GenerationConfig(max_tokens=src.max_tokens, seed=seed)
    made = get_scorer(scorer) if scorer is not None else case.scorer_for(given=pairs is not None)
    settings = given(settings, AuditSettings, "settings")
    if settings.cluster is None:
        settings = replace(settings, cluster=_cluster_column(ps))
    outdir = Path(out) if out is not None else None
    if outdir is not None:
        outdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    res = audit(ps, backend=backend, scorer=made, settings=settings, rng=seed, unparseable=unparseable,
                options=RunOptions(config=config, cache=outdir / "cache.sqlite" if outdir else None),
                progress=progress)
    counts = dict(res.counts)
    counts.update({"completed": res.summary.completed, "from cache": res.summary.from_cache,
                   "failed": res.summary.failed})
    run_settings = {"model": str(getattr(backend, "model", "?")), "backend": str(getattr(backend, "kind", "?")),
                    "generation": config.to_dict(), "pairs from": source, "scorer": made.name, "seed": seed,
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

    _check_limit(limit)
    if backend is None:
        from ipcausal.backends import get_backend

        backend = get_backend("local")
    root = Path(out)
    results = []
    for c in DEMO_CASES:
        if progress:
            print(f"[{c}] running ...", file=sys.stderr, flush=True)
        results.append(run_case(c, backend, out=root / c, limit=limit, progress=progress, seed=seed))
    return results
