"""``ipcausal case NAME --backend ... -o DIR``: one registered case end to end (built-in or plugin)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ipcausal._words import count
from ipcausal.commands._common import (
    add_backend,
    add_open,
    add_out,
    add_progress,
    add_seed,
    make_backend,
    open_report,
    positive_float,
    positive_int,
    unit_level,
)

HELP = "run one case study end to end: pairs -> model -> scores -> tests -> report (resumable)"


def register(sub: Any) -> None:
    from ipcausal.scoring import UNPARSEABLE_POLICIES
    from ipcausal.study.defaults import DEFAULTS

    p = sub.add_parser("case", help=HELP, description=HELP + ". Writes responses.jsonl, pairs.jsonl, "
                       "report.json, report.md and report.html into --out; a rerun takes answered requests "
                       "from DIR/cache.sqlite.")
    # the name is checked when the command runs, so that `--help` never loads a case plugin
    p.add_argument("case", metavar="NAME",
                   help="a registered case: culture, education, echo, learner, age, or one a plugin adds "
                        "(`ipcausal cases`)")
    p.add_argument("--source", help="a PairSet file made by `ipcausal build` (default: the embedded demo set)")
    add_backend(p, default="local")
    p.add_argument("--effect", type=float, default=0.0, metavar="X",
                   help="--backend simulated: the background's known effect on the answer (default 0)")
    add_backend(p, prefix="judge-", what="LLM judge (culture: similarity 1-5; education: rubric 1-6)")
    p.add_argument("--limit", type=positive_int, help="use only the first N items")
    p.add_argument("--max-tokens", type=positive_int,
                   help="generation limit (default: the case's; built-ins: demo sets 40/112/8, --source "
                        "256/640/16 for culture/education/echo)")
    add_seed(p)
    p.add_argument("--unparseable", choices=UNPARSEABLE_POLICIES, default="exclude")
    p.add_argument("--samples", type=positive_int, default=1, metavar="R",
                   help="free-text cases (culture): R >= 2 sampled answers per prompt, tested with the "
                        "distribution test (no m0 threshold)")
    add_out(p, "output folder")
    add_progress(p)
    add_open(p)
    from ipcausal.study.defaults import MITIGATION_KINDS

    g = p.add_argument_group("mitigation (--mitigation)")
    g.add_argument("--mitigation", choices=MITIGATION_KINDS,
                   help="also run the case with this mitigation applied to both prompts of every pair, on the "
                        "same pairs and cache, and report per background pair the effect without and with, the "
                        "test of the change, and 'removed' only where shown (mitigation.json/.txt, checks.csv)")
    g.add_argument("--instruction", metavar="TEXT", help="--mitigation instruct: the system instruction")
    add_backend(g, prefix="rewriter-", what="--mitigation rewrite: the LLM that restates each prompt in Standard "
                                            "American English")
    q = p.add_argument_group("sequential audit (--sequential)")
    q.add_argument("--sequential", action="store_true",
                   help="run the case as an anytime-valid audit (`ipcausal audit`): stop sending pairs once "
                        "every background pair is decided")
    q.add_argument("--alpha", type=unit_level, default=DEFAULTS["alpha"],
                   help=f"family-wise level (default {DEFAULTS['alpha']})")
    q.add_argument("--margin", type=positive_float, metavar="EPS",
                   help="equivalence margin (with --mitigation: 'removed' needs the effect with it shown within "
                        "±EPS; default the case's own, and without one removal is not assessed)")
    q.add_argument("--max-pairs", type=positive_int, metavar="N", help="send at most N pairs")
    p.set_defaults(func=main)


def _backend(args: argparse.Namespace, prepared: Any) -> Any:
    """The model under test; ``--backend simulated``: the SCM simulator over the case's backgrounds, told the
    background each of the case's prompts declares (it reads the case's cues in any other, a mitigated one)."""
    from ipcausal.cli import CliError

    if args.backend != "simulated":
        if args.effect:
            raise CliError("--effect is an option of --backend simulated")
        return make_backend(args)
    from ipcausal.scoring.read import NumberReader

    # a case that reads a level 1..k from the reply gets simulated answers on that scale
    rater = prepared.case.scorer_for(given=prepared.given).options.get("rater")
    on_scale = isinstance(rater, NumberReader) and rater.low == 1 and float(rater.high).is_integer()
    return make_backend(args, effect=args.effect, backgrounds=prepared.case.backgrounds, seed=args.seed,
                        known=prepared.pairs, levels=int(rater.high) if on_scale else None)


def main(args: argparse.Namespace) -> int:
    from ipcausal.backends.base import GenerationConfig
    from ipcausal.cases import get_case
    from ipcausal.cli import EXIT_INCOMPLETE, CliError
    from ipcausal.study.cases import prepare_case, run_case
    from ipcausal.study.defaults import DEFAULTS

    if args.mitigation is not None and args.sequential:
        raise CliError("--mitigation and --sequential do not combine: the mitigation comparison runs both arms "
                       "on all the pairs (run them apart)")
    if args.mitigation is not None and args.samples > 1:
        raise CliError("--mitigation takes one answer per prompt: drop --samples")
    if args.instruction is not None and args.mitigation != "instruct":
        raise CliError("--instruction is an option of --mitigation instruct")
    if (args.mitigation == "rewrite") != (args.rewriter_backend is not None):
        raise CliError("--mitigation rewrite needs --rewriter-backend (the model that rewrites), and "
                       "--rewriter-backend applies to it only")
    if args.mitigation is not None and args.max_pairs is not None:
        raise CliError("--max-pairs is an option of --sequential")
    if not args.sequential and args.mitigation is None and (args.margin is not None or args.max_pairs is not None
                                                            or args.alpha != DEFAULTS["alpha"]):
        raise CliError("--alpha, --margin and --max-pairs are options of --sequential (--alpha and --margin "
                       "also of --mitigation)")
    case = get_case(args.case)
    tests = None
    if args.mitigation is not None and (args.margin is not None or args.alpha != DEFAULTS["alpha"]):
        from dataclasses import replace

        # the case's tests with this level and margin: both the case run and the comparison use them
        tests = replace(case.tests, alpha=args.alpha,
                        margin=args.margin if args.margin is not None else case.tests.margin)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out: {out} is a file; give a folder")
    if args.source is not None and not Path(args.source).is_file():
        raise CliError(f"--source: {args.source} is not a file (give a PairSet made by `ipcausal build`)")
    # the pairs, the scorer's columns and the judge are checked before any model is loaded or asked
    config = GenerationConfig(max_tokens=args.max_tokens, seed=args.seed) if args.max_tokens else None
    prepared = prepare_case(case, args.source, judge=args.judge_backend is not None, limit=args.limit,
                            config=config, unparseable=args.unparseable, seed=args.seed, tests=tests)
    prepared = prepared.with_judge(make_backend(args, prefix="judge-"))
    backend = _backend(args, prepared)
    own = getattr(backend, "answer_scorer", None)  # a backend whose answers only its own scorer reads
    if own is not None and args.judge_backend is None:
        from dataclasses import replace

        prepared = replace(prepared, scorer=own)
    progress = not args.no_progress
    if args.sequential:
        from ipcausal.study.cases import run_case_sequential
        from ipcausal.study.options import AuditSettings

        res = run_case_sequential(prepared, backend, out=out, progress=progress,
                                  settings=AuditSettings(alpha=args.alpha, margin=args.margin,
                                                         max_pairs=args.max_pairs))
    else:
        res = run_case(prepared, backend, out=out, progress=progress, samples=args.samples)
    from ipcausal.commands.demo import print_case
    from ipcausal.report import DEMO_NEXT, DEMO_NOTE, write_case_reports

    # the default local model on the embedded demo set is the demo's plumbing check: say so
    demo_like = args.backend == "local" and not args.model and not args.source
    write_case_reports(res, notes=(DEMO_NOTE, DEMO_NEXT) if demo_like else ())
    print(f"== {res.title} ==")
    print_case(res)
    print(f"report: {res.files.get('report.html')}")
    if demo_like:
        print("\n" + DEMO_NOTE + "\n" + DEMO_NEXT)
    if args.mitigation is not None:
        from ipcausal.study.mitigation import Mitigation, run_case_mitigation

        mitigation = Mitigation(args.mitigation, instruction=args.instruction,
                                rewriter=make_backend(args, prefix="rewriter-"))
        mres = run_case_mitigation(prepared, backend, mitigation, out=out)
        write_case_reports(res, notes=(DEMO_NOTE, DEMO_NEXT) if demo_like else ())  # now with its mitigation table
        print()
        print(mres)
        print(f"mitigation: {mres.files.get('mitigation.txt')} (sent {count(mres.sent, 'new request')})")
    if args.open and res.files.get("report.html"):
        open_report(res.files["report.html"])
    scored = res.counts.scored if res.counts.scored is not None else res.counts.pairs_scored  # a run, an audit
    if scored == 0:
        print(f"error: no pair could be scored, so nothing was tested; `ipcausal failures {out}` lists the "
              "replies the scorer could not read", file=sys.stderr)
        return EXIT_INCOMPLETE
    if not res.complete:
        print("warning: some requests failed; rerun the same command to retry them", file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0
