"""``ipcausal power``: power of a planned study, or the pairs it needs (:func:`ipcausal.power`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ipcausal.commands._common import add_seed, finite_float, positive_float, positive_int, similarity_median, unit_level

HELP = "power of a planned study for one background pair, or the smallest number of pairs"


def register(sub: Any) -> None:
    from ipcausal._validate import ALTERNATIVES
    from ipcausal.study.defaults import DEFAULTS
    from ipcausal.study.power import POWER_METHODS

    p = sub.add_parser(
        "power",
        help=HELP,
        description=HELP + ". Interval outcomes: --effect is the mean difference (in units of --sd). "
        "Similarity outcomes: --effect is the probability that a pair's similarity falls below --m0 (0.5 = none).",
    )
    p.add_argument("--effect", type=finite_float, required=True, help="mean Δ (interval) or P(similarity < m0) (similarity)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--n", type=positive_int, help="number of pairs → power")
    which.add_argument("--power", type=unit_level, help="target power in (0, 1) → smallest number of pairs")
    p.add_argument("--alpha", type=unit_level, default=DEFAULTS["alpha"],
                   help=f"family-wise level (default {DEFAULTS['alpha']})")
    p.add_argument("--tests", type=positive_int, default=1, help="background pairs in the family (Bonferroni; default 1)")
    p.add_argument("--outcome", default="interval", choices=["interval", "similarity"])
    p.add_argument("--sd", type=positive_float, default=1.0, help="standard deviation of Δ (interval; default 1)")
    p.add_argument("--m0", type=similarity_median, default=DEFAULTS["m0"],
                   help=f"null median of the similarity (default {DEFAULTS['m0']})")
    p.add_argument("--method", default="auto", choices=POWER_METHODS)
    p.add_argument("--alternative", default=None, choices=ALTERNATIVES)
    p.add_argument("--sims", type=positive_int, default=2000, help="simulated data sets (--method simulate; default 2000)")
    add_seed(p, "seed of the simulation")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ipcausal.study.power import power

    result = power(
        args.effect,
        n=args.n,
        power=args.power,
        alpha=args.alpha,
        n_tests=args.tests,
        outcome=args.outcome,
        sd=args.sd,
        m0=args.m0,
        method=args.method,
        n_sim=args.sims,
        alternative=args.alternative,
        rng=args.seed,
    )
    sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n" if args.json else str(result))
    return 0
