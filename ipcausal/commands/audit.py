"""``ipcausal audit PAIRS --backend ... --scorer ... -o DIR``: an anytime-valid audit that stops early.

Writes into DIR: ``cache.sqlite`` (every answered request, as it arrives), ``responses.jsonl``
(the pairs sent, with the responses), ``pairs.jsonl`` (the scored pairs that entered the
e-processes), ``report.json`` (the Report; ``ipcausal report DIR/report.json`` renders it again)
and ``report.html``.  The same command run again (same PAIRS, same ``--seed``) replays the answered
pairs from the cache in the same order and asks the model only for what is missing.
Exit status 0, 2 on an error before the audit, 3 when some responses failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ipcausal.commands import _common
from ipcausal.commands._common import (
    add_backend,
    add_out,
    add_progress,
    add_seed,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    unit_level,
)

__all__ = ["register", "main", "summary_lines"]

HELP = "audit a model with an anytime-valid sequential test: stop sending pairs once every background pair is decided"


def register(sub: Any) -> None:
    """Add the ``audit`` sub-command to ``sub``."""
    from ipcausal.scoring import SCORERS, UNPARSEABLE_POLICIES
    from ipcausal._validate import ALTERNATIVES
    from ipcausal.stats.betting import METHODS
    from ipcausal.study.defaults import AUDIT_BATCH_SIZE as DEFAULT_BATCH_SIZE
    from ipcausal.study.defaults import AUDIT_CORRECTIONS as CORRECTIONS
    from ipcausal.study.defaults import DEFAULTS

    p = sub.add_parser("audit", help=HELP, description=HELP + ". Pairs go to the model in a seeded random order, "
                       "a batch at a time; after each batch every group's e-process is updated and the audit stops "
                       "when each is rejected (e-Holm across the background pairs), shown equivalent (--margin), "
                       "or the pairs run out. Writes cache.sqlite, responses.jsonl, pairs.jsonl, report.json and "
                       "report.html into OUT; the same command again resumes from the cache.")
    p.add_argument("pairs", metavar="PAIRS", help="PairSet with prompts x_i, x_j (.jsonl, .csv or .parquet)")
    add_backend(p, default="local")
    p.add_argument("--scorer", required=True, choices=SCORERS, help="how responses are scored")
    p.add_argument("--bound", type=positive_float, metavar="B",
                   help="largest possible |Δ| (default: 1 for mcq, 5 for essay ratings 1-6)")
    p.add_argument("--alpha", type=unit_level, default=DEFAULTS["alpha"],
                   help=f"family-wise level per model (default {DEFAULTS['alpha']})")
    p.add_argument("--correction", choices=CORRECTIONS, default=CORRECTIONS[0],
                   help=f"combine the background pairs' e-values (default {CORRECTIONS[0]})")
    p.add_argument("--margin", type=positive_float, metavar="EPS",
                   help="equivalence margin: stop a group whose confidence sequence lies inside (-EPS, EPS)")
    p.add_argument("--max-pairs", type=positive_int, metavar="N", help="send at most N pairs in all")
    p.add_argument("--batch-size", type=positive_int, default=DEFAULT_BATCH_SIZE, metavar="N",
                   help=f"pairs per batch (default {DEFAULT_BATCH_SIZE})")
    add_seed(p, "seed of the order in which the pairs are sent (and of generation)")
    p.add_argument("--bet", choices=METHODS, default="mixture", help="the betting strategy (default mixture)")
    p.add_argument("--alternative", choices=ALTERNATIVES, default=None,
                   help="H1's direction (default two-sided for scores, less for similarity)")
    p.add_argument("--m0", type=float, default=DEFAULTS["m0"],
                   help=f"null median of the similarity (default {DEFAULTS['m0']})")
    p.add_argument("--cluster", metavar="COLUMN", help="a column naming each pair's cluster (one observation each)")
    p.add_argument("--k", type=positive_int, metavar="K", help="points on the scale (scorer scale)")
    p.add_argument("--unparseable", choices=UNPARSEABLE_POLICIES, default="exclude")
    add_backend(p, prefix="judge-", what="LLM judge (scorers judge and essay)")
    p.add_argument("--max-tokens", type=positive_int, default=256, metavar="N", help="tokens per response (default 256)")
    p.add_argument("--temperature", type=float, default=0.0, metavar="T", help="0 = greedy (default)")
    p.add_argument("--system", metavar="TEXT", help="system message put before every prompt")
    p.add_argument("--concurrency", type=positive_int, metavar="K", help="requests in flight (openai; default 8)")
    add_out(p, "output folder (cache.sqlite, responses.jsonl, pairs.jsonl, report.json, report.html)")
    p.add_argument("--cache", metavar="FILE", help="response cache (default OUT/cache.sqlite)")
    g = p.add_argument_group("openai backend")
    g.add_argument("--api-key-env", default=None, metavar="VAR",
                   help="environment variable holding the API key (default OPENAI_API_KEY; one named here must be set; never written anywhere)")
    g.add_argument("--timeout", type=positive_float, default=60.0, metavar="SEC", help="per-request timeout")
    g.add_argument("--retries", type=non_negative_int, default=5, metavar="N", help="retries per request")
    g.add_argument("--price-input", type=non_negative_float, metavar="PRICE",
                   help="price per million prompt tokens (shows the cost saved)")
    g.add_argument("--price-output", type=non_negative_float, metavar="PRICE",
                   help="price per million completion tokens")
    add_progress(p)
    p.set_defaults(func=main)


def summary_lines(run: Any, *, price_input: float | None = None, price_output: float | None = None) -> list[str]:
    """The closing summary: per group pairs sent of available, why it stopped, e, p, CS; calls (and cost) saved."""
    from ipcausal.study.run import summarize
    from ipcausal.study.text import format_p, text_table

    r = run.report
    rows = [[g.group, f"{q.n_sent}/{q.n_available}", q.stop_reason, f"{q.e_value:.4g}", format_p(g.pvalue),
             format_p(g.pvalue_adjusted), f"{g.effect:.4g}", f"[{g.ci_low:.4g}, {g.ci_high:.4g}]"]
            for g in r.groups if (q := g.sequential) is not None]
    lines = text_table(rows, ["pair", "pairs sent", "stopped", "e-value", "p", "p adj", "effect", "CS"])
    c = run.counts
    share = c.requests_saved / c.requests_full if c.requests_full else 0.0
    lines.append(f"requests: {c.requests_sent} of the full design's {c.requests_full} "
                 f"({c.requests_saved} saved, {share:.0%}); asked of the model in this run: {c.requests_new}, "
                 f"from cache: {run.summary.from_cache}")
    if price_input is not None and price_output is not None and c.pairs_sent:
        s = summarize(run.responses, price_input=price_input, price_output=price_output)
        spent = (s.prompt_tokens * price_input + s.completion_tokens * price_output) / 1e6
        full = spent * c.pairs_available / c.pairs_sent
        lines.append(f"cost of the pairs sent: {spent:.4f}; the full design, extrapolated: {full:.4f}; "
                     f"saved: {full - spent:.4f} (new tokens in this run cost {s.cost:.4f})")
    verdict = "YES" if r.ip_detected else "no"
    stopped = r.audit.stopped if r.audit is not None else None
    lines.append(f"implicit personalization detected: {verdict} (stopped: {stopped})")
    return lines


def _scorer_options(args: argparse.Namespace, judge: Any) -> dict[str, Any]:
    """The scorer's options the flags give: the judge, ``--k``, ``--bound`` (each only where it applies)."""
    from ipcausal.cli import CliError
    from ipcausal.scoring import REGISTRY

    accepts = REGISTRY[args.scorer].accepts
    given = {"backend": judge, "k": args.k, "bound": args.bound}
    flags = {"backend": "--judge-backend", "k": "--k", "bound": "--bound"}
    for key, value in given.items():
        if value is not None and key not in accepts:
            if key == "bound":
                raise CliError(f"--bound applies to interval scorers only; scorer {args.scorer!r} gives "
                               "similarities (tested with the sequential sign test)")
            raise CliError(f"{flags[key]} does not apply to scorer {args.scorer!r}")
    return given


def main(args: argparse.Namespace) -> int:
    """Run the ``audit`` sub-command; returns the exit status."""
    from ipcausal.backends import BackendError, GenerationConfig
    from ipcausal.cli import EXIT_INCOMPLETE, EXIT_OK, CliError
    from ipcausal.pairs import PairSet
    from ipcausal.report import Section, write_report
    from ipcausal.scoring import get_scorer
    from ipcausal.study.audit import audit
    from ipcausal.study.options import AuditSettings, RunOptions
    from ipcausal.study.record import RunRecord, write_outputs

    if (args.price_input is None) != (args.price_output is None):
        raise CliError("give both --price-input and --price-output to see the cost")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out: {out} is a file; give a folder")
    pairs = PairSet.read(args.pairs)
    if len(pairs) == 0:
        raise CliError(f"{args.pairs} holds no pairs: there is nothing to audit")
    config = GenerationConfig(max_tokens=args.max_tokens, temperature=args.temperature, seed=args.seed)
    options: dict[str, Any] = {}
    if args.backend == "openai":
        options = {"api_key_env": args.api_key_env, "timeout": args.timeout, "max_retries": args.retries,
                   "concurrency": args.concurrency}
    backend = _common.make_backend(args, **options)
    judge = _common.make_backend(args, prefix="judge-")
    cache = Path(args.cache) if args.cache else out / "cache.sqlite"
    settings = AuditSettings(alpha=args.alpha, correction=args.correction, margin=args.margin,
                             batch_size=args.batch_size, max_pairs=args.max_pairs, m0=args.m0,
                             alternative=args.alternative, method=args.bet, cluster=args.cluster)
    out.mkdir(parents=True, exist_ok=True)
    try:
        scorer = get_scorer(args.scorer, **_scorer_options(args, judge))
        res = audit(pairs, backend=backend, scorer=scorer, settings=settings, rng=args.seed,
                    options=RunOptions(config=config, system=args.system, concurrency=args.concurrency, cache=cache),
                    unparseable=args.unparseable, progress=not args.no_progress)
    except BackendError as exc:  # the preflight check: the server cannot be reached
        raise CliError(str(exc)) from None
    finally:
        for b in (backend, judge):
            close = getattr(b, "close", None)
            if callable(close):
                close()
    settings = {"model": str(getattr(backend, "model", "?")), "backend": str(args.backend),
                "generation": config.to_dict(), "scorer": args.scorer, "seed": args.seed}
    title = f"Audit of {Path(args.pairs).name}"
    cost = None
    if args.price_input is not None and args.price_output is not None:
        from ipcausal.study.run import summarize

        cost = summarize(res.responses, price_input=args.price_input, price_output=args.price_output).cost
    write_outputs(out, res.report, RunRecord(title, res.counts, {}, settings, {}, cost), responses=res.responses,
                  scored=res.scored)
    write_report(Section(title, res.report, res.counts.to_dict(), settings), out / "report.html",
                 title="ipcausal audit")
    print(str(res.report))
    for line in summary_lines(res, price_input=args.price_input, price_output=args.price_output):
        print(line)
    print(f"ipcausal audit: wrote {out}/report.json, report.html, responses.jsonl (cache: {cache})", file=sys.stderr)
    if not res.summary.complete:
        print(f"warning: {res.summary.failed} response(s) failed; rerun the same command to retry them",
              file=sys.stderr)
        return EXIT_INCOMPLETE
    return EXIT_OK
