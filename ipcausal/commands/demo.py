"""``ipcausal demo``: the three case studies on the embedded demo sets with the local model."""

from __future__ import annotations

import argparse
import time
from typing import Any

from ipcausal.commands._common import add_out, add_progress, add_seed, positive_int

HELP = "run all three case studies on the embedded demo sets with the local SmolLM2 model"


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help=HELP, description=HELP + " (a few minutes on two CPU cores; "
                       "rerunning reuses the response cache in --out)")
    add_out(p, "output folder", default="demo-out")
    p.add_argument("--limit", type=positive_int, help="items per case (default: the demo's own sizes)")
    add_seed(p)
    add_progress(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from ipcausal.report import write_case_reports
    from ipcausal.study.cases import run_demo

    t0 = time.perf_counter()
    results = run_demo(args.out, limit=args.limit, progress=not args.no_progress, seed=args.seed)
    html = write_case_reports(results, args.out, title="ipcausal demo — three case studies")["report.html"]
    for r in results:
        print(f"\n== {r.title} ==")
        print(str(r.report), end="")
        print("counts: " + ", ".join(f"{k} {v}" for k, v in r.counts.items()))
    print(f"\ncombined HTML report: {os.path.abspath(html)}")
    print(f"wall time: {time.perf_counter() - t0:.0f} s")
    return 0 if all(r.complete for r in results) else 3
