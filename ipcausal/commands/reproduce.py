"""``ipcausal reproduce --released DIR``: the study's result tables from its released outputs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal.commands._common import add_out, add_seed, comma_list, positive_int, unit_level

HELP = "recompute the study's result tables from the authors' released outputs (both modes)"


def register(sub: Any) -> None:
    p = sub.add_parser("reproduce", help=HELP, description=HELP)
    p.add_argument("--released", required=True, metavar="DIR",
                   help="folder with the jiarui-liu/IP layout (case_1/, case_2/, case_3/)")
    from ipcausal.study.defaults import CASES, DEFAULTS

    p.add_argument("--cases", default=CASES, type=comma_list(CASES), metavar="LIST",
                   help="comma-separated subset of culture,education,echo (default: all)")
    p.add_argument("--alpha", type=unit_level, default=DEFAULTS["alpha"],
                   help=f"family-wise level (default {DEFAULTS['alpha']})")
    p.add_argument("--resamples", type=positive_int, default=1000,
                   help="L of the paper-compatible Monte Carlo (default 1000)")
    add_seed(p, "seed of the paper-compatible Monte Carlo")
    add_out(p, "also write the full table as CSV", required=False)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ipcausal.study.reproduce import md_lines, reproduce

    cases = tuple(args.cases)
    rep = reproduce(args.released, cases=cases, alpha=args.alpha, n_resamples_paper=args.resamples, rng=args.seed)
    out = [rep.to_markdown(), "### IP verdict per model (stated: Bonferroni within each model; paper-compat: "
           "any uncorrected rejection)", ""]
    v = rep.verdicts()
    out += md_lines(["case", "questions", "model", "IP (stated)", "H0 rejected (paper-compat)"],
                    [[r.case, r.subset, r.model, "yes" if r.ip else "no", "yes" if r.ip_paper else "no"]
                     for r in v.itertuples()])
    sys.stdout.write("\n".join(out) + "\n")
    if args.out:
        rep.table.to_csv(args.out, index=False)
    return 0
