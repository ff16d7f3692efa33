"""``ipcausal run``: send both prompts of every pair to a model, with a resumable cache.

Exit status: 0 when every response was obtained, 2 on an error before the run, 3 when the
run finished with responses missing (run the same command again to retry them).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ipcausal._words import count
from ipcausal.commands._common import (
    add_backend,
    add_out,
    add_progress,
    add_currency,
    add_seed,
    make_backend,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    unit_interval,
)

__all__ = ["register", "main", "default_cache_path", "estimate_line"]


def default_cache_path(out: str | os.PathLike[str]) -> Path:
    """The cache used when ``--cache`` is not given: ``<out>.cache.sqlite`` next to the output.

    Examples
    --------
    >>> default_cache_path("results/run.jsonl").as_posix()
    'results/run.jsonl.cache.sqlite'
    """
    if not isinstance(out, (str, os.PathLike)) or not os.fspath(out):
        raise ValueError(f"`out` must be a file path, got {out!r}")
    p = Path(out)
    return p.with_name(p.name + ".cache.sqlite")


def estimate_line(pairs: Any, max_completion: int, price_input: float, price_output: float, currency: str,
                  *, system: str | None = None) -> str:
    """The cost estimate printed before a run: prompt tokens from the prompts' length, completions at the limit.

    Prompt tokens are estimated as characters / 4 (plus a few per message); each distinct
    prompt is counted once (the run sends it once) and the cache is not consulted, so the
    figure is an upper-end estimate, not a bill.

    Examples
    --------
    >>> from ipcausal import PairSet
    >>> ps = PairSet.from_records([{"pair_id": 1, "background_i": "US", "background_j": "UK",
    ...     "x_i": "a" * 400, "x_j": "b" * 400}])
    >>> print(estimate_line(ps, 100, 1.0, 2.0, "EUR"))  # doctest: +NORMALIZE_WHITESPACE
    estimated cost before the run: at most 0.0006 EUR (2 requests, ~216 prompt tokens estimated from the
    prompts' length, up to 200 completion tokens; an estimate, not a bill)
    """
    texts = set(pairs["x_i"]) | set(pairs["x_j"])
    extra = len(system) if system else 0
    prompt_tokens = sum((len(t) + extra) // 4 + 8 for t in texts)
    completion = len(texts) * max_completion
    cost = (prompt_tokens * price_input + completion * price_output) / 1e6
    return (f"estimated cost before the run: at most {cost:.4f} {currency} ({count(len(texts), 'request')}, "
            f"~{prompt_tokens} prompt tokens estimated from the prompts' length, up to {completion} completion "
            "tokens; an estimate, not a bill)")


HELP = "get the model's responses to both prompts of every pair"


def register(subparsers: Any) -> None:
    """Add the ``run`` sub-command to ``subparsers``."""
    p = subparsers.add_parser(
        "run",
        help=HELP,
        description="Send x_i and x_j of every pair to a model and write the PairSet with y_i and y_j. "
        "Responses are cached as they arrive (by default in OUT.cache.sqlite), so a killed run started "
        "again with the same arguments only asks for what is missing. Exit status 3: some responses failed.",
    )
    p.add_argument("pairs", metavar="PAIRS", help="input PairSet (.jsonl, .csv or .parquet)")
    add_backend(p, default="local")
    p.add_argument("--max-tokens", type=positive_int, default=256, metavar="N", help="tokens per response (default 256)")
    p.add_argument("--temperature", type=non_negative_float, default=0.0, metavar="T",
                   help="0 = greedy (default); at most 5")
    p.add_argument("--top-p", type=unit_interval, default=1.0, metavar="P", help="nucleus sampling, in (0, 1] (default 1)")
    add_seed(p, "sampling seed")
    p.add_argument("--n", type=positive_int, default=1, metavar="N",
                   help="samples per prompt (default 1; y_* is the first, samples_* keep all)")
    p.add_argument("--repeat-penalty", type=positive_float, default=1.0, metavar="R",
                   help="> 0; default 1.0 (sent explicitly)")
    p.add_argument("--stop", action="append", default=[], metavar="TEXT", help="stop sequence (repeatable)")
    p.add_argument("--system", metavar="TEXT", help="system message put before every prompt")
    p.add_argument("--concurrency", type=positive_int, metavar="K", help="requests in flight (openai; default 8)")
    p.add_argument("--limit", type=positive_int, metavar="N", help="only the first N pairs (a quick look first)")
    add_out(p, "output PairSet (.jsonl, .csv or .parquet)")
    p.add_argument("--cache", metavar="FILE", help="response cache (default: OUT.cache.sqlite)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write a cache (no resume)")
    g = p.add_argument_group("openai backend")
    g.add_argument("--api-key-env", default=None, metavar="VAR",
                   help="environment variable holding the API key (default OPENAI_API_KEY; one named here must be set; the key is never written anywhere)")
    g.add_argument("--timeout", type=positive_float, default=60.0, metavar="SEC",
                   help="per-request timeout (default 60)")
    g.add_argument("--retries", type=non_negative_int, default=5, metavar="N", help="retries per request (default 5)")
    g.add_argument("--price-input", type=non_negative_float, metavar="PRICE",
                   help="price per million prompt tokens (shows cost)")
    g.add_argument("--price-output", type=non_negative_float, metavar="PRICE",
                   help="price per million completion tokens")
    add_currency(g)
    v = p.add_argument_group("vllm backend")
    v.add_argument("--tokenizer", metavar="PATH", help="tokenizer folder (for a GGUF model)")
    v.add_argument("--tensor-parallel-size", type=positive_int, default=1, metavar="N", help="GPUs per layer")
    v.add_argument("--pipeline-parallel-size", type=positive_int, default=1, metavar="N", help="pipeline stages")
    v.add_argument("--distributed-executor-backend", choices=("mp", "ray"), help="ray: spread over a Ray cluster")
    add_progress(p)
    p.set_defaults(func=main)


def _make_backend(args: argparse.Namespace) -> Any:
    options: dict[str, Any] = {}
    if args.backend == "openai":
        options = {"api_key_env": args.api_key_env, "timeout": args.timeout, "max_retries": args.retries,
                   "concurrency": args.concurrency}
    elif args.backend == "vllm":
        options = {"tensor_parallel_size": args.tensor_parallel_size,
                   "pipeline_parallel_size": args.pipeline_parallel_size,
                   "distributed_executor_backend": args.distributed_executor_backend, "tokenizer": args.tokenizer}
    return make_backend(args, **options)


def main(args: argparse.Namespace) -> int:
    """Run the ``run`` sub-command; returns the exit status (0, 2 or 3)."""
    from ipcausal.backends import BackendError, GenerationConfig
    from ipcausal.cli import EXIT_INCOMPLETE, EXIT_OK, CliError
    from ipcausal.pairs import FORMATS, PairSet
    from ipcausal.study.run import run, summarize

    out = Path(args.out)
    if out.suffix.lower() not in FORMATS:
        raise CliError(f"--out: unknown file type {out.suffix!r}; use one of {', '.join(sorted(FORMATS))}")
    if args.no_cache and args.cache:
        raise CliError("--cache and --no-cache exclude each other")
    if (args.price_input is None) != (args.price_output is None):
        raise CliError("give both --price-input and --price-output to see the cost")
    config = GenerationConfig(max_tokens=args.max_tokens, temperature=args.temperature, top_p=args.top_p,
                              seed=args.seed, stop=tuple(args.stop), n=args.n, repeat_penalty=args.repeat_penalty)
    pairs = PairSet.read(args.pairs)
    if args.limit is not None:
        pairs = pairs.head(args.limit)
    if len(pairs) == 0:
        raise CliError(f"{args.pairs} holds no pairs: there is nothing to run")
    cache = None if args.no_cache else Path(args.cache) if args.cache else default_cache_path(out)
    if args.price_input is not None:
        print(estimate_line(pairs, args.max_tokens * args.n, args.price_input, args.price_output, args.currency,
                            system=args.system), file=sys.stderr)
    backend = _make_backend(args)
    try:
        result = run(pairs, backend, cache=cache, config=config, system=args.system,
                     concurrency=args.concurrency, progress=not args.no_progress)
    except BackendError as exc:  # the preflight check: the server cannot be reached
        raise CliError(str(exc)) from None
    finally:
        close = getattr(backend, "close", None)
        if callable(close):
            close()
    result.write(out)
    summary = summarize(result, price_input=args.price_input, price_output=args.price_output)

    print(f"ipcausal run: wrote {count(len(result), 'pair')} to {out}" + (f" (cache: {cache})" if cache else ""),
          file=sys.stderr)
    print(summary.format(currency=args.currency), file=sys.stderr)
    return EXIT_OK if summary.complete else EXIT_INCOMPLETE
