"""``ipcausal case {culture,education,echo} --backend ... -o DIR``: one case study end to end."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal.commands._common import (
    add_backend,
    add_out,
    add_progress,
    add_seed,
    make_backend,
    positive_float,
    positive_int,
    unit_level,
)

HELP = "run one case study end to end: pairs -> model -> scores -> tests -> report (resumable)"


def register(sub: Any) -> None:
    from ipcausal.scoring import UNPARSEABLE_POLICIES
    from ipcausal.study.defaults import CASES

    p = sub.add_parser("case", help=HELP, description=HELP + ". Writes responses.jsonl, pairs.jsonl, "
                       "report.json, report.md and report.html into --out; a rerun takes answered requests "
                       "from DIR/cache.sqlite.")
    p.add_argument("case", choices=CASES)
    p.add_argument("--source", help="a PairSet file made by `ipcausal build` (default: the embedded demo set)")
    add_backend(p, default="local")
    add_backend(p, prefix="judge-", what="LLM judge (culture: similarity 1-5; education: rubric 1-6)")
    p.add_argument("--limit", type=positive_int, help="use only the first N items")
    p.add_argument("--max-tokens", type=positive_int,
                   help="generation limit (default: demo sets 40/112/8, --source 256/640/16 for culture/education/echo)")
    add_seed(p)
    p.add_argument("--unparseable", choices=UNPARSEABLE_POLICIES, default="exclude")
    add_out(p, "output folder")
    add_progress(p)
    q = p.add_argument_group("sequential audit (--sequential)")
    q.add_argument("--sequential", action="store_true",
                   help="run the case as an anytime-valid audit (`ipcausal audit`): stop sending pairs once "
                        "every background pair is decided")
    q.add_argument("--alpha", type=unit_level, default=0.05, help="family-wise level (default 0.05)")
    q.add_argument("--margin", type=positive_float, metavar="EPS", help="equivalence margin")
    q.add_argument("--max-pairs", type=positive_int, metavar="N", help="send at most N pairs")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ipcausal.backends.base import GenerationConfig
    from ipcausal.cli import EXIT_INCOMPLETE
    from ipcausal.study.cases import max_tokens_for, run_case

    backend = make_backend(args)
    judge = make_backend(args, prefix="judge-")
    budget = max_tokens_for(args.case, demo=not args.source)
    config = GenerationConfig(max_tokens=args.max_tokens or budget, seed=args.seed)
    if not args.sequential and (args.margin is not None or args.max_pairs is not None or args.alpha != 0.05):
        from ipcausal.cli import CliError

        raise CliError("--alpha, --margin and --max-pairs are options of --sequential")
    if args.sequential:
        from ipcausal.study.cases import run_case_sequential

        res = run_case_sequential(args.case, backend, pairs=args.source, out=args.out, judge_backend=judge,
                                  limit=args.limit, config=config, unparseable=args.unparseable, seed=args.seed,
                                  progress=not args.no_progress, alpha=args.alpha, margin=args.margin,
                                  max_pairs=args.max_pairs)
    else:
        res = run_case(args.case, backend, pairs=args.source, out=args.out, judge_backend=judge, limit=args.limit,
                       config=config, unparseable=args.unparseable, seed=args.seed, progress=not args.no_progress)
    from ipcausal.report import write_case_reports

    write_case_reports(res)
    print(f"== {res.title} ==")
    print(str(res.report))
    print("counts: " + ", ".join(f"{k} {v}" for k, v in res.counts.items()))
    print(f"report: {res.files.get('report.html')}")
    if not res.complete:
        print("warning: some requests failed; rerun the same command to retry them", file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0
