"""``ipcausal check-case NAME``: validate a case (card, pairs, generator, placebo size, power, the reader on a
real model); exit 1 on a failure."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal.commands._common import add_backend, add_seed, make_backend, positive_int

#: The --backend value that skips the real-model step.
NO_BACKEND = "none"

HELP = "validate a registered case: its card, its pairs (check_pair), its generator, a placebo on the " \
       "simulator, the pairs its smallest effect needs, and whether its scorer reads a real model's replies"
#: The exit status when a check fails (2 stays a usage error).
EXIT_FAILED = 1


def register(sub: Any) -> None:
    p = sub.add_parser("check-case", help=HELP, description=HELP + f". Exit status {EXIT_FAILED} when a check "
                       "fails, 0 when all pass.")
    p.add_argument("case", metavar="NAME", help="a registered case (`ipcausal cases`)")
    p.add_argument("--source", help="a PairSet file to check instead of the case's demo set")
    p.add_argument("--placebo-runs", type=positive_int, default=20, metavar="R",
                   help="A-vs-A runs on the simulator (default 20)")
    p.add_argument("--fluency", choices=("auto", "on", "off"), default="auto",
                   help="the fluency step (local model): auto (when installed; shown as skip otherwise), on, off")
    add_seed(p, "first seed of the placebo runs (and the generation seed of the reads step)")
    add_backend(p, default="local", extra=(NO_BACKEND,),
                what="the reads step's real model (none: skip the step)")
    p.add_argument("--read-pairs", type=positive_int, default=5, metavar="N",
                   help="pairs the reads step sends to the backend (default 5)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="a table (default) or JSON")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ipcausal.cli import CliError
    from ipcausal.pairs import PairSet
    from ipcausal.study.checkcase import check_case

    pairs = None
    if args.source is not None:
        if not Path(args.source).is_file():
            raise CliError(f"--source: {args.source} is not a file (give a PairSet made by `ipcausal build`)")
        pairs = PairSet.read(args.source)
    if args.backend == NO_BACKEND:
        if args.model or args.base_url:
            raise CliError("--model/--base-url do not apply to --backend none")
        backend = None
    else:
        backend = make_backend(args)
    res = check_case(args.case, pairs=pairs, placebo_runs=args.placebo_runs, rng=args.seed, backend=backend,
                     read_pairs=args.read_pairs, fluency={"auto": None, "on": True, "off": False}[args.fluency])
    if args.format == "json":
        sys.stdout.write(json.dumps(res.to_dict(), indent=1, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(str(res))
    return 0 if res.passed else EXIT_FAILED
