"""``ipcausal bench BENCH.toml -o DIR``: every model of a bench file on every case (IP-Bench, issue 20)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ipcausal.commands._common import add_out, add_progress, non_negative_float, positive_int

HELP = "run several models on several cases (a bench file): the models x cases table, alignment, comparisons"


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help=HELP, description=HELP + ". Writes DIR/cells/<model>/<case>/ (each cell's "
                       "run folder), DIR/cache/<model>.sqlite (one response cache per model: rerun the same "
                       "command to resume), DIR/bench.json, DIR/bench.csv, DIR/comparisons.csv and DIR/bench.md. "
                       "See docs/bench.md for the bench file.")
    p.add_argument("spec", metavar="BENCH.toml", nargs="?", help="the bench file: [[models]], [[cases]], [settings]")
    p.add_argument("--released", metavar="DIR",
                   help="instead of a bench file: the study's released outputs (../shared/data/jiarui-liu-IP), "
                        "all its models x the three cases with the stated method")
    add_out(p, "bench folder")
    p.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                   help="models run at once (default 4); the cells of one model run in turn")
    p.add_argument("--cost-limit", type=non_negative_float, metavar="X",
                   help="refuse to start when the priced models' estimated cost (at most) exceeds X")
    p.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                   help="run the cells as Ray tasks: on the cluster at ADDRESS (auto, 127.0.0.1:6379 ...) or, "
                        "without ADDRESS, on a local Ray cluster started for the run (needs ipcausal[ray])")
    add_progress(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ipcausal.cli import EXIT_INCOMPLETE, CliError
    from ipcausal.report.bench import write_bench_markdown
    from ipcausal.study.bench import DEFAULT_JOBS, bench
    from ipcausal.study.bench import probe_text
    from ipcausal.study.bench import read_spec

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out: {out} is a file; give a folder")
    if (args.spec is None) == (args.released is None):
        raise CliError("give a bench file (BENCH.toml) or --released DIR, not both or neither")
    if args.released is not None:
        from ipcausal.study.bench import released_bench

        if not Path(args.released).is_dir():
            raise CliError(f"--released: {args.released} is not a folder (the study's released outputs)")
        if args.jobs is not None or args.cost_limit is not None or args.ray is not None:
            raise CliError("--jobs, --cost-limit and --ray are for a bench file; --released asks no model")
        report = released_bench(args.released, out=out)
        md = write_bench_markdown(report, out, title="IP-Bench: the study's released outputs")
    else:
        if not Path(args.spec).is_file():
            raise CliError(f"BENCH.toml: {args.spec} is not a file")
        spec = read_spec(args.spec)  # every key is checked before a model is built or asked
        if args.ray is not None:
            try:
                from ipcausal.study.bench import require_ray

                require_ray()
            except ImportError as exc:
                raise CliError(f"--ray: {exc}") from None
        try:
            report = bench(spec, out=out, jobs=args.jobs or DEFAULT_JOBS, progress=not args.no_progress,
                           cost_limit=args.cost_limit, ray=args.ray)
        except KeyboardInterrupt as exc:  # the resume hint, also for a Ray run
            raise KeyboardInterrupt(str(exc) or f"interrupted: every answer received is kept in {out / 'cache'}; "
                                    "run the same command again to resume (only the requests not yet answered "
                                    "are sent)") from None
        md = write_bench_markdown(report, out)
    width = max(len(m) for m in report.models)
    for c in report.cells:
        verdict = c.alignment if c.status != "failed" else f"failed: {c.error}"
        probed = f"  | {probe_text(c.probe)}" if c.probe is not None else ""
        print(f"{c.model:<{width}}  {c.case:<10}  {verdict}{probed}")
    print(f"table: {md}\nfiles: {out / 'bench.json'}, {out / 'bench.csv'}, {out / 'comparisons.csv'}")
    probe_failed = [c for c in report.cells if c.probe is not None and (c.probe.error or c.probe.failed)]
    if probe_failed:
        print(f"warning: the probe of {len(probe_failed)} cell(s) did not finish; rerun the same command to retry "
              "(answered requests come from the cache)", file=sys.stderr)
    if report.failed or probe_failed:
        if report.failed:
            print(f"warning: {len(report.failed)} cell(s) did not finish; rerun the same command to retry them "
                  "(answered requests come from the cache)", file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0
