"""``ipcausal import``: read other tools' output back as pairs — ratings, inspect_ai logs, lm-eval samples.

The module is ``import_`` because ``import`` is a Python keyword; the command is ``ipcausal import``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal._words import count

__all__ = ["register"]

HELP = "read ratings or other harnesses' results back as pairs (validation sheets, inspect_ai logs, lm-eval samples)"


def register(subparsers: Any) -> None:
    """Add ``import`` and its sub-commands to the ``ipcausal`` parser."""
    p = subparsers.add_parser("import", help=HELP, description=HELP + ".")
    sub = p.add_subparsers(dest="source", metavar="FORMAT")
    p.set_defaults(func=lambda args: _no_format())

    v = sub.add_parser("validation", help="attach raters' sheets to the pairs; flag or drop rejected pairs",
                       description="Read one filled-in sheet per rater (from `ipcausal export validation`), attach "
                       "the ratings, flag rejected pairs in the column `validation` (or drop them with --drop) and, "
                       "with two or more raters, print raw agreement and Cohen's kappa per question.")
    v.add_argument("sheets", nargs="+", metavar="SHEET", help="filled-in sheets (.csv), one per rater")
    v.add_argument("--pairs", required=True, metavar="PAIRS", help="the pairs that were exported")
    v.add_argument("-o", "--out", required=True, metavar="FILE", help="pairs with the ratings (.jsonl, .csv, .parquet)")
    v.add_argument("--key", metavar="FILE", help="the key written with the sheet (default: SHEET.key.json)")
    v.add_argument("--drop", action="store_true", help="drop rejected pairs instead of flagging them")
    v.add_argument("--json", action="store_true", help="print the counts and agreement as JSON on stdout")
    v.set_defaults(func=_validation)

    i = sub.add_parser("inspect", help="inspect_ai eval logs of an exported dataset, paired back",
                       description="Read inspect eval logs (read_eval_log), pair the samples by metadata, keep the "
                       "model output as y_i/y_j and, with --scorer, that scorer's value as score_i/score_j.")
    i.add_argument("logs", nargs="+", metavar="LOG", help="inspect eval logs (.eval or .json)")
    i.add_argument("-o", "--out", required=True, metavar="FILE", help="pairs (.jsonl, .csv or .parquet)")
    i.add_argument("--scorer", metavar="NAME", help="scorer whose value becomes the score (default: texts only)")
    i.add_argument("--allow-missing", action="store_true", help="drop samples whose other side is missing")
    i.add_argument("--model", action="append", metavar="NAME",
                   help="the model column: once for every LOG, or once per LOG in order (default: each log's "
                   "model; two runs of one model with other -M arguments need a name each)")
    i.set_defaults(func=_inspect)

    lm = sub.add_parser("lm-eval", help="lm-evaluation-harness --log_samples files, paired by doc fields",
                        description="Read samples_TASK_*.jsonl from `lm_eval --log_samples`, pair rows by the doc "
                        "fields named, keep the responses as y_i/y_j and, with --metric, the metric as the score.")
    lm.add_argument("samples", nargs="+", metavar="SAMPLES", help="lm-eval samples files (.jsonl)")
    lm.add_argument("-o", "--out", required=True, metavar="FILE", help="pairs (.jsonl, .csv or .parquet)")
    lm.add_argument("--metric", metavar="NAME", help="per-sample metric that becomes the score (acc, exact_match ...)")
    lm.add_argument("--pair-field", default="pair_id", metavar="FIELD", help="doc field of the pair (default pair_id)")
    lm.add_argument("--side-field", default="side", metavar="FIELD", help="doc field of the side (default side)")
    lm.add_argument("--background-field", default="background", metavar="FIELD",
                    help="doc field of the background (default background; else the side label)")
    lm.add_argument("--sides", default="i,j", metavar="I,J",
                    help="side labels of x_i and x_j (default i,j); 'all' pairs every two sides of a pair key")
    lm.add_argument("--text", default="filtered_resps", choices=("filtered_resps", "resps"),
                    help="which response to keep as text (default filtered_resps)")
    lm.add_argument("--model", metavar="NAME", help="model name (default: from lm-eval's results_*.json)")
    lm.add_argument("--allow-missing", action="store_true", help="drop rows whose other side is missing")
    lm.set_defaults(func=_lm_eval)


def _no_format() -> int:
    from ipcausal.cli import CliError

    raise CliError("choose what to import: validation, inspect or lm-eval (see ipcausal import --help)")


def _report(res: Any, args: argparse.Namespace, what: str) -> int:
    out = res.pairs.write(args.out)
    extra = f"; dropped {count(len(res.unpaired), 'sample')} without a partner" if res.unpaired else ""
    print(f"ipcausal import {what}: {count(res.n_samples, 'sample')} -> {count(len(res.pairs), 'pair')} in {out}{extra}",
          file=sys.stderr)
    return 0


def _validation(args: argparse.Namespace) -> int:
    import json

    from ipcausal.interop.validation import import_validation

    res = import_validation(args.sheets, args.pairs, key=args.key, drop=args.drop)
    out = res.pairs.write(args.out)
    if args.json:
        sys.stdout.write(json.dumps(res.to_dict()) + "\n")
    else:
        sys.stdout.write(res.summary() + "\n")
    print(f"ipcausal import validation: wrote {count(len(res.pairs), 'pair')} to {out}", file=sys.stderr)
    return 0


def _inspect(args: argparse.Namespace) -> int:
    from ipcausal.interop.inspect import import_inspect

    from ipcausal.cli import CliError

    model = args.model
    if model is not None and len(model) not in (1, len(args.logs)):
        raise CliError(f"--model: give one name for every LOG or one per LOG ({len(args.logs)}), got {len(model)}")
    if model is not None and len(model) == 1:
        model = model[0]
    return _report(import_inspect(args.logs, scorer=args.scorer, allow_missing=args.allow_missing, model=model),
                   args, "inspect")


def _lm_eval(args: argparse.Namespace) -> int:
    from ipcausal.cli import CliError
    from ipcausal.interop.lm_eval import import_lm_eval

    if args.sides == "all":
        sides = None
    else:
        sides = tuple(s.strip() for s in args.sides.split(","))
        if len(sides) != 2 or not all(sides) or sides[0] == sides[1]:
            raise CliError(f"--sides must be two different labels I,J (or 'all'), got {args.sides!r}")
    res = import_lm_eval(args.samples, metric=args.metric, pair_field=args.pair_field, side_field=args.side_field,
                         background_field=args.background_field or None, sides=sides, text_field=args.text,
                         model=args.model, allow_missing=args.allow_missing)
    return _report(res, args, "lm-eval")
