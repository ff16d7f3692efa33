"""``ipcausal validate sample PAIRS -n 80 --rng 0 -o sheet.csv``: the seeded subset of pairs for people to rate.

People's scores of a uniformly random subset of the scored pairs let ``ipcausal test PAIRS --human
sheet.csv`` estimate the effect on the human scale (PPI++) and test whether the judge's error
differs between the backgrounds.  ``sample`` draws that subset (whole clusters with ``--cluster``)
and writes the rating sheet — one row per response, in a seeded random order, a ``human`` column to
fill in — and its key ``sheet.key.json`` (keep it from the raters; ``--human`` reads it to map the
rows back and to record that the labels are the package's own draw).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal.commands._common import add_out, non_negative_int, positive_int

HELP = "draw a seeded random subset of scored pairs for people to rate (for `ipcausal test --human`)"


def register(sub: Any) -> None:
    p = sub.add_parser("validate", help=HELP, description=HELP + ".")
    s = p.add_subparsers(dest="what", metavar="STEP")
    p.set_defaults(func=lambda args: _no_step())
    q = s.add_parser("sample", help="write the rating sheet of a uniformly random, seeded subset and its key",
                     description="Draw N pairs uniformly at random (seeded; whole clusters with --cluster) from "
                     "the scored pairs and write a CSV with one row per response (item, prompt, response, human, "
                     "comment) in a seeded random order, and SHEET.key.json. Raters fill in `human` on the "
                     "scale of the scores; `ipcausal test PAIRS --human SHEET` then reads them.")
    q.add_argument("pairs", metavar="PAIRS", help="scored pairs with their responses (.jsonl, .csv or .parquet)")
    q.add_argument("-n", type=positive_int, required=True, metavar="N",
                   help="pairs to draw (clusters with --cluster); 80 is a good start (docs/statistics.md)")
    q.add_argument("--rng", "--seed", dest="rng", type=non_negative_int, default=0, metavar="S",
                   help="seed of the draw and the row order (default 0; recorded in the key)")
    q.add_argument("--cluster", metavar="COLUMN", help="draw whole clusters named by this column")
    add_out(q, "the rating sheet (.csv)")
    q.set_defaults(func=_sample)


def _no_step() -> int:
    from ipcausal.cli import CliError

    raise CliError("choose a step: sample (see ipcausal validate --help)")


def _sample(args: argparse.Namespace) -> int:
    from ipcausal.study.human import write_human_sheet

    sheet, key = write_human_sheet(args.pairs, args.out, n=args.n, rng=args.rng, cluster=args.cluster)
    rows = sum(1 for _ in sheet.open(encoding="utf-8")) - 1
    print(f"ipcausal validate sample: wrote {rows} responses of {args.n} {'clusters' if args.cluster else 'pairs'} "
          f"(seed {args.rng}) to {sheet} and the key {key} (keep the key from the raters); then "
          f"`ipcausal test {args.pairs} --human {sheet}`", file=sys.stderr)
    return 0
