"""``ipcausal test FILE``: run :func:`ipcausal.test` on a scored PairSet file."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal.commands._common import add_out, add_seed, add_test_options, test_kwargs

HELP = "test every background pair for implicit personalization"


def register(sub: Any) -> None:
    p = sub.add_parser("test", help=HELP, description=HELP + ". Prints the report (or JSON with --json); "
                       "-o writes it as a Report file that `ipcausal report` renders without testing again.")
    p.add_argument("file", help="scored pairs (.jsonl, .csv or .parquet)")
    add_test_options(p)
    add_seed(p, "seed for Monte Carlo and the bootstrap")
    add_out(p, "also write the Report as JSON (render it with `ipcausal report FILE -o report.html`)",
            required=False)
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import warnings

    from ipcausal.study.test import MonteCarloResolutionWarning, test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MonteCarloResolutionWarning)  # printed in the report itself
        report = test(args.file, **test_kwargs(args))
    if args.out:
        from ipcausal.study.record import RunRecord, write_report_file

        # the counts `ipcausal score` wrote beside the file (FILE's .meta.json) travel with the report
        path = write_report_file(args.out, report, RunRecord.read(args.file))
        print(f"report written: {path}", file=sys.stderr)
    if args.json:
        sys.stdout.write(report.to_json() + "\n")
    else:
        from ipcausal.report.explain import plain_lines, report_text

        sys.stdout.write(report_text(report) + "in plain words:\n" + "".join(f"  - {x}\n" for x in plain_lines(report)))
    return 0
