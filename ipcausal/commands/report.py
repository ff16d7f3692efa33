"""``ipcausal report RESULTS -o report.html``: Markdown or self-contained HTML from scored pairs or case folders."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

HELP = "write a Markdown or HTML report (plots embedded) from scored pairs or case output folders"


def register(sub: Any) -> None:
    p = sub.add_parser("report", help=HELP, description=HELP + ". RESULTS: scored pair files or folders written "
                       "by `ipcausal case`; several make one combined report.")
    p.add_argument("results", nargs="+", help="scored pairs file(s) or case folder(s)")
    p.add_argument("-o", "--output", required=True, help="report file: .html, .md, .json or .txt")
    p.add_argument("--title", default="ipcausal report")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--correction", default="bonferroni",
                   choices=["bonferroni", "sidak", "holm", "holm-sidak", "hochberg", "bh", "by", "none"])
    p.add_argument("--m0", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=0, help="seed for Monte Carlo and the bootstrap (default 0)")
    p.add_argument("--paper-compat", action="store_true", help="the study's released-code mode (see docs)")
    p.set_defaults(func=main)


def _section(path: Path, args: argparse.Namespace) -> Any:
    from ipcausal.api import test
    from ipcausal.pairs import PairSet
    from ipcausal.report import Section

    counts: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    title = path.stem
    if path.is_dir():
        meta_path, pairs_path = path / "meta.json", path / "pairs.jsonl"
        if not pairs_path.is_file():
            raise FileNotFoundError(f"{path} has no pairs.jsonl (not an `ipcausal case` output folder)")
        if meta_path.is_file():
            meta = json.loads(meta_path.read_text())
            counts, settings, title = meta.get("counts", {}), meta.get("settings", {}), meta.get("title", path.name)
        else:
            title = path.name
    else:
        pairs_path = path
        meta_path = path.with_suffix("").with_name(path.with_suffix("").name + ".meta.json")
        if meta_path.is_file():
            meta = json.loads(meta_path.read_text())
            counts, settings = meta.get("counts", {}), {"scorer": meta.get("scorer")}
    ps = PairSet.read(pairs_path)
    if "model" in ps and "model" not in settings:
        settings["model"] = ", ".join(sorted(set(ps["model"].dropna().astype(str))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = test(ps, alpha=args.alpha, correction=args.correction, m0=args.m0, rng=args.seed,
                   paper_compat=args.paper_compat)
    return Section(title, rep, ps, counts, settings)


def main(args: argparse.Namespace) -> int:
    from ipcausal.report import write_report

    sections = [_section(Path(r), args) for r in args.results]
    out = write_report(sections, args.output, title=args.title)
    print(f"report written: {out}", file=sys.stderr)
    return 0
