"""``ipcausal demo``: the three case studies on the embedded demo sets with the local model."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

HELP = "run all three case studies on the embedded demo sets with the local SmolLM2 model"


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help=HELP, description=HELP + " (a few minutes on two CPU cores; "
                       "rerunning reuses the response cache in --out)")
    p.add_argument("--out", default="demo-out", help="output folder (default demo-out)")
    p.add_argument("--limit", type=int, help="items per case (default: the demo's own sizes)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from ipcausal.backends import get_backend
    from ipcausal.cases import CASES, run_case
    from ipcausal.report import format_text, write_report
    from ipcausal.scoring import EmbeddingSimilarity

    t0 = time.perf_counter()
    backend = get_backend("local")
    results = []
    for case in CASES:
        print(f"[{case}] running ...", file=sys.stderr, flush=True)
        results.append(run_case(case, backend, out=os.path.join(args.out, case), limit=args.limit, seed=args.seed,
                                progress=not args.no_progress,
                                embedder=EmbeddingSimilarity() if case == "culture" else None))
    sections = [r.section for r in results]
    html = write_report(sections, os.path.join(args.out, "report.html"), title="ipcausal demo — three case studies")
    write_report(sections, os.path.join(args.out, "report.md"), title="ipcausal demo — three case studies")
    for r in results:
        print(f"\n== {r.title} ==")
        print(format_text(r.report), end="")
        print("counts: " + ", ".join(f"{k} {v}" for k, v in r.counts.items()))
    print(f"\ncombined HTML report: {os.path.abspath(html)}")
    print(f"wall time: {time.perf_counter() - t0:.0f} s")
    return 0 if all(r.complete for r in results) else 3
