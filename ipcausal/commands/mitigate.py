"""``ipcausal mitigate PAIRS --mitigation M --scorer S --backend ... -o DIR``: does a mitigation remove IP?"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ipcausal.commands._common import (
    add_backend,
    add_out,
    add_progress,
    add_seed,
    make_backend,
    positive_float,
    positive_int,
    unit_level,
)

HELP = "run pairs without and with a mitigation and test per background pair what it changed"


def register(sub: Any) -> None:
    from ipcausal.scoring import SCORERS, SIMILARITY_SCORERS
    from ipcausal.study.defaults import MITIGATION_KINDS as KINDS

    p = sub.add_parser("mitigate", help=HELP, description=HELP + " (SPEC §10). Writes mitigation.json, "
                       "mitigation.txt, checks.csv, pairs_without.jsonl and pairs_with.jsonl into --out; the "
                       "responses of both runs are cached in DIR/cache.sqlite.")
    p.add_argument("pairs", metavar="PAIRS", help="a PairSet file (e.g. made by `ipcausal build`)")
    p.add_argument("--mitigation", required=True, choices=KINDS,
                   help="markers: British markers to American; dialect: recorded AAE/ESL edits undone; "
                        "strip: belief prefix and [background] tags removed; instruct: a system instruction; "
                        "rewrite: an LLM (--rewriter-backend) restates each prompt in Standard American English")
    p.add_argument("--instruction", help="the system instruction of --mitigation instruct (default: the built-in one)")
    p.add_argument("--scorer", required=True, choices=list(SCORERS),
                   help="a scorer of `ipcausal score`: an interval scorer (the change of mean Δ; removed only when "
                        "TOST within --margin shows it) or a similarity scorer ("
                        + ", ".join(s for s in SCORERS if s in SIMILARITY_SCORERS)
                        + ": the change of s per pair; removed only when median s with it is shown above m0)")
    add_backend(p, default="local")
    add_backend(p, prefix="judge-", what="LLM judge of the essay scorer")
    add_backend(p, prefix="rewriter-", what="LLM that rewrites each prompt (--mitigation rewrite)")
    p.add_argument("--max-tokens", type=positive_int, default=256, help="generation limit (default 256)")
    p.add_argument("--margin", type=positive_float, metavar="EPS",
                   help="equivalence margin: 'removed' only when the effect with the mitigation is shown within ±EPS")
    p.add_argument("--alpha", type=unit_level, default=0.05, help="level (default 0.05)")
    p.add_argument("--cluster", metavar="COLUMN", help="flip whole clusters (e.g. prompt_id, question_id)")
    add_seed(p)
    add_out(p, "output folder")
    add_progress(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ipcausal.backends.base import GenerationConfig
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.cli import CliError
    from ipcausal.pairs import PairSet
    from ipcausal.study.mitigation import CaseMitigation, Mitigation, evaluate_mitigation, write_mitigation
    from ipcausal.study.options import RunOptions

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out: {out} is a file; give a folder")
    if not Path(args.pairs).is_file():
        raise CliError(f"PAIRS: {args.pairs} is not a file")
    if args.instruction is not None and args.mitigation != "instruct":
        raise CliError("--instruction is an option of --mitigation instruct")
    if (args.mitigation == "rewrite") != (args.rewriter_backend is not None):
        raise CliError("--mitigation rewrite needs --rewriter-backend (the model that rewrites), and "
                       "--rewriter-backend applies to it only")
    pairs = PairSet.read(args.pairs)
    rewriter = make_backend(args, prefix="rewriter-")
    mitigation = Mitigation(args.mitigation, instruction=args.instruction, rewriter=rewriter)
    judge = make_backend(args, prefix="judge-")
    backend = make_backend(args)
    out.mkdir(parents=True, exist_ok=True)
    store = ResponseCache(out / "cache.sqlite")
    try:
        before = len(store)
        res = evaluate_mitigation(
            pairs, backend, mitigation, scorer=args.scorer, scoring={"backend": judge} if judge is not None else None,
            margin=args.margin, alpha=args.alpha, cluster=args.cluster, rng=args.seed,
            run_options=RunOptions(config=GenerationConfig(max_tokens=args.max_tokens, seed=args.seed), cache=store),
            progress=not args.no_progress)
        sent = len(store) - before
    finally:
        store.close()
    write_mitigation(CaseMitigation.of(res, mitigation, sent=sent), out, text=str(res))
    print(res)
    print(f"written: {out}/mitigation.json, mitigation.txt, checks.csv, pairs_without.jsonl, pairs_with.jsonl")
    return 0
