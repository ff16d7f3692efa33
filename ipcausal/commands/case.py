"""``ipcausal case {culture,education,echo} --backend ... --out DIR``: one case study end to end."""

from __future__ import annotations

import argparse
import sys
from typing import Any

HELP = "run one case study end to end: pairs -> model -> scores -> tests -> report (resumable)"


def make_backend(kind: str | None, model: str | None, base_url: str | None) -> Any:
    from ipcausal.backends import get_backend

    if kind is None:
        return None
    kw: dict[str, Any] = {}
    if model:
        kw["model"] = model
    if base_url:
        kw["base_url"] = base_url
    return get_backend(kind, **kw)


def register(sub: Any) -> None:
    p = sub.add_parser("case", help=HELP, description=HELP + ". Writes responses.jsonl, pairs.jsonl, "
                       "report.json, report.md and report.html into --out; a rerun takes answered requests "
                       "from DIR/cache.sqlite.")
    p.add_argument("case", choices=["culture", "education", "echo"])
    p.add_argument("--source", help="a PairSet file made by `ipcausal build` (default: the embedded demo set)")
    p.add_argument("--backend", choices=["local", "openai", "vllm"], default="local", help="model under test")
    p.add_argument("--model", help="model name or path (backend-specific)")
    p.add_argument("--base-url", help="server URL (openai backend)")
    p.add_argument("--judge-backend", choices=["local", "openai", "vllm"],
                   help="LLM judge: culture -> similarity 1-5, education -> rubric 1-6")
    p.add_argument("--judge-model", help="judge model name or path")
    p.add_argument("--judge-base-url", help="judge server URL")
    p.add_argument("--limit", type=int, help="use only the first N items")
    p.add_argument("--max-tokens", type=int,
                   help="generation limit (default: demo sets 40/112/8, --source 256/640/16 for culture/education/echo)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--unparseable", choices=["exclude", "zero"], default="exclude")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ipcausal.backends.base import GenerationConfig
    from ipcausal.cases import _MAX_TOKENS, _SOURCE_MAX_TOKENS, run_case
    from ipcausal.cli import EXIT_INCOMPLETE
    from ipcausal.report import format_text

    backend = make_backend(args.backend, args.model, args.base_url)
    judge = make_backend(args.judge_backend, args.judge_model, args.judge_base_url)
    budget = (_SOURCE_MAX_TOKENS if args.source else _MAX_TOKENS)[args.case]
    config = GenerationConfig(max_tokens=args.max_tokens or budget, seed=args.seed)
    res = run_case(args.case, backend, pairs=args.source, out=args.out, judge_backend=judge, limit=args.limit,
                   config=config, unparseable=args.unparseable, seed=args.seed, progress=not args.no_progress)
    print(f"== {res.title} ==")
    print(format_text(res.report))
    print("counts: " + ", ".join(f"{k} {v}" for k, v in res.counts.items()))
    print(f"report: {res.files.get('report.html')}")
    if not res.complete:
        print("warning: some requests failed; rerun the same command to retry them", file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0
