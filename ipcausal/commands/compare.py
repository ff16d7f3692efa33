"""``ipcausal compare``: two models' harness results tested against each other, paired by item.

``ipcausal compare lm-eval A B`` reads two ``lm_eval --log_samples`` outputs of the same tasks,
matches the documents on ``doc_id`` per task and, per task and metric, prints the exact paired
test of B − A (exact McNemar for 0/1 metrics), its interval and the p adjusted over the tasks
(:func:`ipcausal.interop.compare_lm_eval`).  ``ipcausal compare inspect LOG_A LOG_B`` does the
same for two inspect_ai eval logs, matching samples on (id, epoch) per task and testing each
scorer (:func:`ipcausal.interop.inspect.compare_logs`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ipcausal._words import count
from ipcausal.commands._common import add_out, unit_level

__all__ = ["register"]

HELP = "compare two models' harness results, paired by item (lm-eval --log_samples, inspect_ai logs)"


def _shared(p: argparse.ArgumentParser, rows: str) -> None:
    p.add_argument("--correction", default="holm", metavar="NAME",
                   help=f"adjustment over the {rows} rows: holm (default), bonferroni, hochberg, bh, by, none …")
    p.add_argument("--alpha", type=unit_level, default=0.05, metavar="A", help="level of `reject` (default 0.05)")
    p.add_argument("--confidence-level", type=unit_level, default=0.95, metavar="L",
                   help="level of the interval for mean(B − A) (default 0.95)")
    add_out(p, "write the table (.csv or .jsonl)", required=False)
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")


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
    lm.add_argument("--metric", action="append", metavar="NAME", help="only this metric (repeatable; default all)")
    lm.add_argument("--allow-missing", action="store_true",
                    help="leave out (and list) documents that are not in both or whose doc_hash differs")
    _shared(lm, "(task, metric)")
    lm.set_defaults(func=_lm_eval)

    ins = sub.add_parser("inspect", help="model B against model A on the same inspect_ai tasks, per sample",
                         description="Match the samples of two models' inspect eval logs on (id, epoch) per task; "
                         "per task and scorer test the paired differences B − A exactly (a 0/1 scorer with one "
                         "epoch: exact McNemar on the discordant samples; a sample's epochs, or with --cluster a "
                         "group of samples, flip together), give an interval for mean(B − A) and adjust p over "
                         "the rows. Samples in one log only, with another input or target, errored or unscored "
                         "are named (and an error unless --allow-missing).")
    ins.add_argument("a", metavar="LOG_A", help="model A: an inspect eval log (.eval or .json) or a folder of logs")
    ins.add_argument("b", metavar="LOG_B", help="model B: the same tasks")
    ins.add_argument("--scorer", action="append", metavar="NAME", help="only this scorer (repeatable; default all)")
    ins.add_argument("--cluster", metavar="KEY",
                     help="sample metadata key whose samples flip together (e.g. pair_id); default: the sample id")
    ins.add_argument("--allow-missing", action="store_true",
                     help="leave out (and list) samples not in both, changed, errored or without a numeric score")
    _shared(ins, "(task, scorer)")
    ins.set_defaults(func=_inspect)


def _no_harness() -> int:
    from ipcausal.cli import CliError

    raise CliError("choose what to compare: lm-eval or inspect (see ipcausal compare --help)")


_WHY = {"only_a": "only in A", "only_b": "only in B", "mismatched": "changed between the two (another doc_hash, "
        "input or target)", "errored_a": "errored in A", "errored_b": "errored in B"}


def _print(res: Any, args: argparse.Namespace, what: str, key: str, matched: str, unit: str) -> int:
    import json

    from ipcausal.interop.lm_eval_compare import write_table

    if args.out:
        write_table(res, args.out)
    if args.json:
        print(json.dumps(res.to_dict(), indent=2, default=str))
    else:
        head = f"{'task':<24} {key:<14} {'n':>5} {'A':>7} {'B':>7} {'B − A':>8} {'interval':>19} " \
               f"{'B>A':>4} {'A>B':>4} {'p':>9} {'p adj':>9}"
        print(head)
        for r in res.rows:
            label = r["task"] if r.get("filter", "none") == "none" else f"{r['task']}/{r['filter']}"
            ci = f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"
            star = " *" if r["reject"] else ""
            print(f"{label:<24} {r[key]:<14} {r['n']:>5} {r['mean_a']:>7.3f} {r['mean_b']:>7.3f} "
                  f"{r['statistic']:>+8.3f} {ci:>19} {r['b_better']:>4} {r['a_better']:>4} {r['pvalue']:>9.3g} "
                  f"{r['pvalue_adjusted']:>9.3g}{star}")
        models = {(r["model_a"], r["model_b"]) for r in res.rows if "model_a" in r}
        for ma, mb in sorted(models):
            print(f"A = {ma}; B = {mb}")
        units = sorted({r.get("unit", unit) for r in res.rows})
        print(f"paired by {matched}; unit of randomisation: {', '.join(units)}; {res.correction} over "
              f"{count(len(res.rows), 'row')}; * = adjusted p <= {res.alpha:g}; "
              f"intervals at {res.confidence_level:g}")
    for label, m in res.missing.items():
        parts = [f"{len(v)} {_WHY[k]} {v[:10]}" for k, v in m.items() if k != "unscored" and v]
        parts += [f"{len(v)} without a numeric {sc} {v[:10]}" for sc, v in m.get("unscored", {}).items()]
        print(f"ipcausal compare {what}: {label}: left out " + ", ".join(parts), file=sys.stderr)
    for s in res.skipped:
        print(f"ipcausal compare {what}: skipped {s}", file=sys.stderr)
    return 0


def _lm_eval(args: argparse.Namespace) -> int:
    from ipcausal.interop.lm_eval_compare import compare_lm_eval

    res = compare_lm_eval(args.a, args.b, correction=args.correction, alpha=args.alpha,
                          confidence_level=args.confidence_level, metrics=args.metric, allow_missing=args.allow_missing)
    return _print(res, args, "lm-eval", "metric", "doc_id", "document")


def _inspect(args: argparse.Namespace) -> int:
    from ipcausal.interop.inspect_compare import compare_logs

    res = compare_logs(args.a, args.b, correction=args.correction, alpha=args.alpha,
                       confidence_level=args.confidence_level, scorers=args.scorer, cluster=args.cluster,
                       allow_missing=args.allow_missing)
    return _print(res, args, "inspect", "scorer", "(id, epoch)", "sample")
