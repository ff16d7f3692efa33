"""``ipcausal demo``: the three case studies on the embedded demo sets with the local model."""

from __future__ import annotations

import argparse
import time
from typing import Any

from ipcausal.commands._common import add_open, add_out, add_progress, add_seed, open_report, positive_int

HELP = "run all three case studies on the embedded demo sets with the local SmolLM2 model"


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help=HELP, description=HELP + " (a few minutes on two CPU cores; "
                       "rerunning reuses the response cache in --out)")
    add_out(p, "output folder", default="demo-out")
    p.add_argument("--limit", type=positive_int, help="items per case (default: the demo's own sizes)")
    add_seed(p)
    add_progress(p)
    add_open(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from pathlib import Path

    from ipcausal.cli import CliError

    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise CliError(f"--out: {args.out} is a file; give a folder")
    from ipcausal.report import DEMO_NEXT, DEMO_NOTE, write_case_reports
    from ipcausal.study.cases import run_demo

    print(DEMO_NOTE + "\n")
    t0 = time.perf_counter()
    results = run_demo(args.out, limit=args.limit, progress=not args.no_progress, seed=args.seed)
    html = write_case_reports(results, args.out, title="ipcausal demo — three case studies",
                              notes=(DEMO_NOTE, DEMO_NEXT))["report.html"]
    for r in results:
        print(f"\n== {r.title} ==")
        print_case(r)
    print(f"\ncombined HTML report: {os.path.abspath(html)}")
    print(f"wall time: {time.perf_counter() - t0:.0f} s")
    print("\n" + DEMO_NOTE + "\n" + DEMO_NEXT)
    if args.open:
        open_report(html)
    return 0 if all(r.complete for r in results) else 3


def print_case(r: object) -> None:
    """The terminal summary of one case: plain-language lines, the report, the counts explained."""
    from ipcausal.report import count_notes, plain_lines
    from ipcausal.report.explain import report_text

    res: Any = r
    print("in plain words:")
    for line in plain_lines(res.report):
        print(f"  - {line}")
    print()
    print(report_text(res.report), end="")
    counts = res.counts.to_dict()
    print("counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for note in count_notes(counts):
        print(f"  {note}")
