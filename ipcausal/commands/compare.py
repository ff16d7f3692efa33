"""``ipcausal compare``: two models' harness results tested against each other, paired by item.

``ipcausal compare lm-eval A B`` reads two ``lm_eval --log_samples`` outputs of the same tasks,
matches the documents on ``doc_id`` per task and, per task and metric, prints the exact paired
test of B − A (exact McNemar for 0/1 metrics), its interval and the p adjusted over the tasks
(:func:`ipcausal.interop.compare_lm_eval`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal.commands._common import add_out, unit_level

__all__ = ["register"]

HELP = "compare two models' harness results, paired by item (lm-eval --log_samples)"


def register(subparsers: Any) -> None:
    """Add ``compare`` and its sub-commands to the ``ipcausal`` parser."""
    p = subparsers.add_parser("compare", help=HELP, description=HELP + ".")
    sub = p.add_subparsers(dest="harness", metavar="HARNESS")
    p.set_defaults(func=lambda args: _no_harness())
    lm = sub.add_parser("lm-eval", help="model B against model A on the same lm-eval tasks, per document",
                        description="Match the documents of two `lm_eval --log_samples` outputs on doc_id per task; "
                        "per task and metric test the paired differences B − A exactly (0/1 metrics: exact McNemar "
                        "on the discordant documents), give an interval for mean(B − A) and adjust p over the tasks. "
                        "Documents in one output only, or with another doc_hash, are named (and an error unless "
                        "--allow-missing).")
    lm.add_argument("a", metavar="A", help="model A: a samples_TASK_*.jsonl file or lm-eval's output folder")
    lm.add_argument("b", metavar="B", help="model B: the same tasks")
    lm.add_argument("--correction", default="holm", metavar="NAME",
                    help="adjustment over the (task, metric) rows: holm (default), bonferroni, hochberg, bh, by, none …")
    lm.add_argument("--alpha", type=unit_level, default=0.05, metavar="A", help="level of `reject` (default 0.05)")
    lm.add_argument("--confidence-level", type=unit_level, default=0.95, metavar="L",
                    help="level of the interval for mean(B − A) (default 0.95)")
    lm.add_argument("--metric", action="append", metavar="NAME", help="only this metric (repeatable; default all)")
    lm.add_argument("--allow-missing", action="store_true",
                    help="leave out (and list) documents that are not in both or whose doc_hash differs")
    add_out(lm, "write the table (.csv or .jsonl)", required=False)
    lm.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    lm.set_defaults(func=_lm_eval)


def _no_harness() -> int:
    from ipcausal.cli import CliError

    raise CliError("choose what to compare: lm-eval (see ipcausal compare --help)")


def _lm_eval(args: argparse.Namespace) -> int:
    import json

    from ipcausal.interop.lm_eval_compare import compare_lm_eval, write_table

    res = compare_lm_eval(args.a, args.b, correction=args.correction, alpha=args.alpha,
                          confidence_level=args.confidence_level, metrics=args.metric, allow_missing=args.allow_missing)
    if args.out:
        write_table(res, args.out)
    if args.json:
        print(json.dumps(res.to_dict(), indent=2, default=str))
    else:
        head = f"{'task':<24} {'metric':<14} {'n':>5} {'A':>7} {'B':>7} {'B − A':>8} {'interval':>19} " \
               f"{'B>A':>4} {'A>B':>4} {'p':>9} {'p adj':>9}"
        print(head)
        for r in res.rows:
            label = r["task"] if r["filter"] == "none" else f"{r['task']}/{r['filter']}"
            ci = f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"
            star = " *" if r["reject"] else ""
            print(f"{label:<24} {r['metric']:<14} {r['n']:>5} {r['mean_a']:>7.3f} {r['mean_b']:>7.3f} "
                  f"{r['statistic']:>+8.3f} {ci:>19} {r['b_better']:>4} {r['a_better']:>4} {r['pvalue']:>9.3g} "
                  f"{r['pvalue_adjusted']:>9.3g}{star}")
        print(f"paired by doc_id; {res.correction} over {len(res.rows)} rows; * = adjusted p <= {res.alpha:g}; "
              f"intervals at {res.confidence_level:g}")
    for label, m in res.missing.items():
        print(f"ipcausal compare lm-eval: {label}: left out {len(m['only_a'])} doc(s) only in A {m['only_a'][:10]}, "
              f"{len(m['only_b'])} only in B {m['only_b'][:10]}, {len(m['mismatched'])} with another doc_hash "
              f"{m['mismatched'][:10]}", file=sys.stderr)
    for s in res.skipped:
        print(f"ipcausal compare lm-eval: skipped {s}", file=sys.stderr)
    return 0
