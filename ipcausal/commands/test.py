"""``ipcausal test FILE...``: run :func:`ipcausal.test` on scored PairSet files.

Several files are stacked into one PairSet (a pair's key is (``model``, ``pair_id``), so the runs of
two models may share pair ids; each model is its own test family).  ``--on-missing drop`` leaves
out the pairs whose outcome is missing, prints how many (and their lines) and records the count
in the Report file's ``counts`` (``-o``), which ``ipcausal report`` shows.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal.commands._common import add_out, add_seed, add_test_options, test_kwargs

HELP = "test every background pair for implicit personalization"


def register(sub: Any) -> None:
    p = sub.add_parser("test", help=HELP, description=HELP + ". Prints the report (or JSON with --json); "
                       "-o writes it as a Report file that `ipcausal report` renders without testing again.")
    p.add_argument("file", nargs="+", metavar="FILE",
                   help="scored pairs (.jsonl, .csv or .parquet); several files are tested together")
    p.add_argument("--on-missing", choices=("error", "drop"), default="error",
                   help="a pair without an outcome (null or absent score/similarity): stop with the lines "
                        "(default) or drop it, counted in the output and the Report's counts")
    add_test_options(p)
    p.add_argument("--human", metavar="LABELS.csv",
                   help="human scores of a random subset of the pairs (columns pair_id, human_i, human_j, or the "
                        "rating sheet of `ipcausal validate sample` with its key): adds, per background pair, the "
                        "effect on the human scale by PPI++, the judge's agreement with people and a test of its "
                        "bias by background")
    p.add_argument("--human-key", metavar="KEY", help="the key of the draw the labels belong to (default: "
                   "LABELS.key.json beside them, when there is one)")
    add_seed(p, "seed for Monte Carlo and the bootstrap")
    add_out(p, "also write the Report as JSON (render it with `ipcausal report FILE -o report.html`)",
            required=False)
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.set_defaults(func=main)


def read_pairs(files: list[str], on_missing: str = "error") -> tuple[Any, dict[str, int]]:
    """The PairSet of one or several files, and the counts of what ``on_missing="drop"`` left out.

    Prints one line per file that lost pairs (how many, and the first lines) on stderr.
    """
    from ipcausal.pairs import PairSet

    sets, read, dropped = [], 0, 0
    for f in files:
        if on_missing == "drop":
            ps, lines = PairSet.read_dropping_missing(f)
            if lines:
                shown = ", ".join(str(k) for k in lines[:5]) + (f" and {len(lines) - 5} more" if len(lines) > 5 else "")
                print(f"{f}: dropped {len(lines)} pair{'s' * (len(lines) != 1)} without an outcome "
                      f"(line{'s' * (len(lines) != 1)} {shown})", file=sys.stderr)
        else:
            ps, lines = PairSet.read(f), []
        sets.append(ps)
        read += len(ps) + len(lines)
        dropped += len(lines)
    try:
        pairs = sets[0] if len(sets) == 1 else PairSet.concat(sets)
    except ValueError as exc:
        hint = "; give each run a `model` column" if "duplicate" in str(exc) else ""
        raise ValueError(f"{', '.join(files)}: {exc}{hint}") from None
    counts = {"pairs read": read, "dropped (missing outcome)": dropped, "tested": len(pairs)} if on_missing == "drop" \
        else {}
    return pairs, counts


def main(args: argparse.Namespace) -> int:
    import warnings

    from ipcausal.study.test import MonteCarloResolutionWarning, test

    from ipcausal.cli import CliError

    pairs, counts = read_pairs(args.file, args.on_missing)
    labels = None
    if args.human is not None:
        from ipcausal.study.human import read_human

        labels = read_human(args.human, key=args.human_key)
    elif args.human_key is not None:
        raise CliError("--human-key is an option of --human")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MonteCarloResolutionWarning)  # printed in the report itself
        report = test(pairs, **test_kwargs(args), human=labels)
    if args.out:
        import dataclasses
        from pathlib import Path

        from ipcausal.study.groups import UNKNOWN_MODEL
        from ipcausal.study.record import RunRecord, write_report_file

        models = ", ".join(sorted({g.model for g in report.groups} - {UNKNOWN_MODEL}))
        title = ", ".join(Path(f).name for f in args.file) + (f" — {models}" if models else "")  # input and model
        # the counts `ipcausal score` wrote beside a single file (FILE's .meta.json) travel with the report,
        # with what --on-missing drop left out
        settings = {"model": models} if models else {}
        record = RunRecord.read(args.file[0]) if len(args.file) == 1 else None
        if labels is not None:  # the labels' provenance is part of how the data was obtained
            record = dataclasses.replace(record or RunRecord(), labels=labels.provenance())
        if record is None and not counts:  # nothing was counted: no record is made up
            path = report.write(args.out, title=title, settings=settings or None)
        else:
            record = record or RunRecord()
            record = dataclasses.replace(record, title=record.title or title, counts={**record.counts, **counts},
                                         settings={**record.settings, **settings})
            path = write_report_file(args.out, report, record)
        print(f"report written: {path}", file=sys.stderr)
    if args.json:
        sys.stdout.write(report.to_json() + "\n")
    else:
        from ipcausal.report.explain import plain_lines, report_text

        sys.stdout.write(report_text(report) + "in plain words:\n" + "".join(f"  - {x}\n" for x in plain_lines(report)))
    return 0
