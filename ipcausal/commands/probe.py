"""``ipcausal probe PAIRS --backend …``: can the model infer the background each prompt implies?

Shows the model every distinct prompt of the pairs, asks which background its writer most likely
has (options shuffled per prompt with ``--seed``), and tests the accuracy against chance with
the exact binomial test (:func:`ipcausal.probe`).  ``-o`` writes the :class:`ProbeResult` as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ipcausal.commands._common import (
    add_backend,
    add_out,
    add_seed,
    make_backend,
    non_negative_int,
    positive_float,
    positive_int,
    unit_level,
)

__all__ = ["register", "main", "probe_lines"]

HELP = "can the model infer the background? ask it, test its accuracy against chance"


def register(sub: Any) -> None:
    """Add the ``probe`` sub-command to ``sub``."""
    p = sub.add_parser("probe", help=HELP, description=HELP + ". Every distinct prompt of the pairs is shown "
                       "with the backgrounds as lettered options (shuffled per prompt); answers that name no "
                       "option are counted as unparseable and left out of the exact binomial test.")
    p.add_argument("pairs", metavar="PAIRS", help="PairSet (.jsonl, .csv or .parquet) with x_i/x_j and backgrounds")
    add_backend(p, default="local")
    p.add_argument("--backgrounds", metavar="A,B,...", type=lambda t: [x.strip() for x in t.split(",") if x.strip()],
                   help="the options offered (default: the backgrounds of the pairs); chance is 1 / their number")
    p.add_argument("--alternative", choices=("greater", "two-sided", "less"), default="greater",
                   help="H1 of the binomial test (default greater: better than chance)")
    p.add_argument("--confidence-level", type=unit_level, default=0.95, metavar="C",
                   help="of the exact (Clopper–Pearson) interval of the accuracy (default 0.95)")
    p.add_argument("--max-tokens", type=positive_int, default=16, metavar="N", help="tokens per answer (default 16)")
    p.add_argument("--system", metavar="TEXT", help="system message put before every probe prompt")
    p.add_argument("--concurrency", type=positive_int, metavar="K", help="requests in flight (openai; default 8)")
    p.add_argument("--cache", metavar="FILE", help="keep the answers in this response cache (a rerun asks nothing new)")
    add_seed(p, "seed of the options' order")
    add_out(p, "also write the ProbeResult as JSON", required=False)
    p.add_argument("--json", action="store_true", help="print the ProbeResult as JSON on stdout")
    g = p.add_argument_group("openai backend")
    g.add_argument("--api-key-env", default=None, metavar="VAR",
                   help="environment variable holding the API key (default OPENAI_API_KEY; one named here must be set; the key is never written anywhere)")
    g.add_argument("--timeout", type=positive_float, default=60.0, metavar="SEC", help="per-request timeout (default 60)")
    g.add_argument("--retries", type=non_negative_int, default=5, metavar="N", help="retries per request (default 5)")
    p.set_defaults(func=main)


def _make_backend(args: argparse.Namespace) -> Any:
    options: dict[str, Any] = {}
    if args.backend == "openai":
        options = {"api_key_env": args.api_key_env, "timeout": args.timeout, "max_retries": args.retries,
                   "concurrency": args.concurrency}
    return make_backend(args, **options)


def probe_lines(res: Any) -> list[str]:
    """The probe's result as text lines (overall, then one line per background)."""
    lines = [f"probe of {res.model}: {res.correct} of {res.n} answered prompts named the right background "
             f"(accuracy {res.accuracy:.3f}, chance {res.chance:.3f}; {res.unparseable} unparseable, "
             f"{res.failed} failed)",
             f"exact binomial test ({res.alternative}): p = {res.pvalue:.4g}; "
             f"{res.confidence_level:.0%} Clopper–Pearson interval [{res.ci_low:.3f}, {res.ci_high:.3f}]"]
    for b, row in res.per_background.items():
        acc = "n/a" if not row["n"] else f"{row['accuracy']:.3f}"
        lines.append(f"  {b}: {row['correct']} of {row['n']} right (accuracy {acc}), "
                     f"{row['unparseable']} unparseable, {row['failed']} failed; answered {row['answered']}")
    return lines


def main(args: argparse.Namespace) -> int:
    """Run the ``probe`` sub-command; returns the exit status."""
    from ipcausal.backends import BackendError, GenerationConfig
    from ipcausal.cli import CliError
    from ipcausal.pairs import PairSet
    from ipcausal.study.probe import probe

    pairs = PairSet.read(args.pairs)
    if len(pairs) == 0:
        raise CliError(f"{args.pairs} holds no pairs: there is nothing to probe")
    backend = _make_backend(args)
    if backend is None:
        raise CliError("--backend is required")
    try:
        res = probe(pairs, backend, backgrounds=args.backgrounds, rng=args.seed, system=args.system,
                    config=GenerationConfig(max_tokens=args.max_tokens, temperature=0.0, seed=args.seed),
                    alternative=args.alternative, confidence_level=args.confidence_level,
                    concurrency=args.concurrency, cache=args.cache)
    except BackendError as exc:
        raise CliError(str(exc)) from None
    finally:
        close = getattr(backend, "close", None)
        if callable(close):
            close()
    text = json.dumps(res.to_dict(), indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        print(f"probe result written: {args.out}", file=sys.stderr)
    sys.stdout.write(text + "\n" if args.json else "\n".join(probe_lines(res)) + "\n")
    return 0
