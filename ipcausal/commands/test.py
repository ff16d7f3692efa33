"""``ipcausal test FILE``: run :func:`ipcausal.test` on a scored PairSet file."""

from __future__ import annotations

import argparse
import sys
from typing import Any

HELP = "test every background pair for implicit personalization"


def register(sub: Any) -> None:
    p = sub.add_parser("test", help=HELP, description=HELP + " (prints the report, or JSON with --json)")
    p.add_argument("file", help="scored pairs (.jsonl, .csv or .parquet)")
    p.add_argument("--outcome", default="auto", choices=["auto", "interval", "similarity"])
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--correction", default="bonferroni",
                   choices=["bonferroni", "sidak", "holm", "holm-sidak", "hochberg", "bh", "by", "none"])
    p.add_argument("--m0", type=float, default=0.8, help="null median of the similarity (default 0.8)")
    p.add_argument("--method", default="auto", choices=["auto", "exact", "monte-carlo", "saddlepoint"])
    p.add_argument("--resamples", type=int, default=None, help="Monte Carlo resamples L (default 100000)")
    p.add_argument("--seed", type=int, default=None, help="seed for Monte Carlo and the bootstrap")
    p.add_argument("--paper-compat", action="store_true",
                   help="reproduce the study's released code (p = b/L, L=1000; sign test 'greater'; no correction)")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import warnings

    from ipcausal.api import test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warnings are part of the report itself
        report = test(
            args.file,
            outcome=args.outcome,
            alpha=args.alpha,
            correction=args.correction,
            m0=args.m0,
            method=args.method,
            n_resamples=args.resamples,
            rng=args.seed,
            paper_compat=args.paper_compat,
        )
    sys.stdout.write(report.to_json() + "\n" if args.json else str(report))
    return 0
