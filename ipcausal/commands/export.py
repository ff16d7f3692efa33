"""``ipcausal export``: write pairs for other tools — a blinded rating sheet, an inspect_ai dataset, an lm-eval task."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal._words import count
from ipcausal.commands._common import add_out, add_seed, positive_int

__all__ = ["register"]

HELP = "write pairs for people or other harnesses (validation sheet, inspect_ai dataset, lm-eval task)"


def register(subparsers: Any) -> None:
    """Add ``export`` and its sub-commands to the ``ipcausal`` parser."""
    p = subparsers.add_parser("export", help=HELP, description=HELP + ".")
    sub = p.add_subparsers(dest="target", metavar="FORMAT")
    p.set_defaults(func=lambda args: _no_format())

    v = sub.add_parser("validation", help="a blinded CSV rating sheet (one row per pair) and its key",
                       description="Write a CSV for human raters: the two texts of each pair in a seeded random "
                       "order (text_a, text_b), with the questions same_meaning (yes/no) and sounds_like_target "
                       "(A/B/both/neither). The side order goes to a key file (default SHEET.key.json) that "
                       "`ipcausal import validation` reads; do not give it to the raters.")
    v.add_argument("pairs", metavar="PAIRS", help="pairs (.jsonl, .csv or .parquet)")
    add_out(v, "the rating sheet (.csv)")
    v.add_argument("--key", metavar="FILE", help="where to write the key (default: SHEET.key.json)")
    add_seed(v, "seed of the side order (recorded in the key)")
    v.set_defaults(func=_validation)

    i = sub.add_parser("inspect", help="an inspect_ai dataset: one sample per side of each pair",
                       description="Write JSON Lines for inspect_ai's json_dataset: id PAIR:i / PAIR:j, input, "
                       "target (with --target or a `target` column) and metadata (pair_id, side, background, pair).")
    i.add_argument("pairs", metavar="PAIRS", help="pairs (.jsonl, .csv or .parquet)")
    add_out(i, "the dataset (.jsonl)")
    i.add_argument("--target", metavar="COLUMN", help="column that becomes each sample's target (default: `target`)")
    i.set_defaults(func=_inspect)

    lm = sub.add_parser("lm-eval", help="a local lm-evaluation-harness task (JSONL + YAML) in a folder",
                        description="Write DIR/TASK.jsonl (one row per side) and DIR/TASK.yaml (generate_until, "
                        "dataset_path: json) for `lm_eval --include_path DIR --tasks TASK --log_samples`.")
    lm.add_argument("pairs", metavar="PAIRS", help="pairs (.jsonl, .csv or .parquet)")
    add_out(lm, "the task folder")
    lm.add_argument("--task", default="ipcausal_pairs", metavar="NAME", help="task name (default ipcausal_pairs)")
    lm.add_argument("--target", metavar="COLUMN", help="column that becomes the target (default: `target`)")
    lm.add_argument("--max-gen-toks", type=positive_int, default=64, metavar="N", help="tokens per answer (default 64)")
    lm.set_defaults(func=_lm_eval)


def _no_format() -> int:
    from ipcausal.cli import CliError

    raise CliError("choose what to export: validation, inspect or lm-eval (see ipcausal export --help)")


def _validation(args: argparse.Namespace) -> int:
    from ipcausal.interop.validation import export_validation

    sheet, key = export_validation(args.pairs, args.out, key=args.key, rng=args.seed)
    print(f"ipcausal export validation: wrote the sheet {sheet} and its key {key} (keep the key from the raters)",
          file=sys.stderr)
    return 0


def _inspect(args: argparse.Namespace) -> int:
    from ipcausal.interop.inspect import export_inspect

    out = export_inspect(args.pairs, args.out, target=args.target)
    n = sum(1 for line in out.read_text(encoding="utf-8").splitlines() if line.strip())
    print(f"ipcausal export inspect: wrote {count(n, 'sample')} to {out}", file=sys.stderr)
    return 0


def _lm_eval(args: argparse.Namespace) -> int:
    from ipcausal.interop.lm_eval import export_lm_eval

    yaml = export_lm_eval(args.pairs, args.out, task=args.task, target=args.target, max_gen_toks=args.max_gen_toks)
    print(f"ipcausal export lm-eval: wrote task {args.task!r} to {yaml.parent} "
          f"(lm_eval --include_path {yaml.parent} --tasks {args.task} --log_samples ...)", file=sys.stderr)
    return 0
