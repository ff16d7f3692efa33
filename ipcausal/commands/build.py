"""``ipcausal build``: make a PairSet (and its JSON manifest) from a dataset source.

Sub-commands: ``ambrqa``, ``essays``, ``farm`` (from the user's source files), ``questions`` (your
own prompts, one generator; :mod:`ipcausal.builders.questions`) and ``demo`` (our embedded demo sets).  The manifest is written next to the output as
``<name>.manifest.json`` unless ``--manifest`` says otherwise.  LLM-based steps use
``--backend`` and cache every response (default ``OUT.cache.sqlite``), so a rebuild with
the same seed is identical and free.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ipcausal._words import count
from ipcausal.commands._common import add_backend, add_out, add_seed, make_backend, positive_int

__all__ = ["register"]

HELP = "make paired prompts (a PairSet) from a dataset source or your own prompts"


def _flags(p: argparse.ArgumentParser, *, llm: bool, seed: bool = True) -> None:
    from ipcausal.builders import ON_PROBLEM

    add_out(p, "output PairSet (.jsonl, .csv or .parquet)")
    p.add_argument("--manifest", metavar="FILE", help="manifest path (default: next to OUT, NAME.manifest.json)")
    if seed:
        add_seed(p)
    p.add_argument("--on-problem", choices=ON_PROBLEM, default="drop",
                   help="a pair that fails the pair checks (numbers, options, names, URLs, question form): "
                        "drop it (default) or keep it flagged in `check_problems`")
    if llm:
        g = p.add_argument_group("LLM backend (for generated text)")
        add_backend(g, what="model used by the LLM generators (default: none, offline steps only)")
        g.add_argument("--cache", metavar="FILE", help="response cache (default: OUT.cache.sqlite)")
        g.add_argument("--no-cache", action="store_true", help="do not cache LLM responses")
        g.add_argument("--max-tokens", type=positive_int, metavar="N",
                       help="token limit per LLM generation (default: per step)")
        g.add_argument("--max-attempts", type=positive_int, default=3, metavar="N",
                       help="tries per LLM rewrite (default 3)")


def register(subparsers: Any) -> None:
    """Add ``build`` and its sub-commands to the ``ipcausal`` parser."""
    p = subparsers.add_parser("build", help=HELP,
                              description="Build a PairSet plus a JSON manifest (sources with SHA-256, counts, "
                              "skipped items with reasons, settings).")
    sub = p.add_subparsers(dest="dataset", metavar="DATASET")
    p.set_defaults(func=lambda args: _no_dataset(p))

    a = sub.add_parser("ambrqa", help="American vs British English question pairs (GlobalOpinionQA + factual)",
                       description="Opinion half from a GlobalOpinionQA CSV (original format or the 825-row US/UK "
                       "subset); factual half generated with --backend.")
    a.add_argument("--global-opinions", metavar="CSV", help="GlobalOpinionQA CSV")
    a.add_argument("--stylish", metavar="DIR", help="factual half offline from the study's UK-styled rewrites "
                   "(stylish_question_by_domain/; the paper's 825)")
    a.add_argument("--stylish-ambiguous", action="store_true",
                   help="with --stylish: also swap rewrites whose markers are all ambiguous (may change meaning)")
    a.add_argument("--limit", type=positive_int, metavar="N", help="only the first N opinion questions")
    a.add_argument("--no-factual", action="store_true", help="with --backend: skip the factual half")
    a.add_argument("--topics-per-domain", type=positive_int, default=2, metavar="N", help="factual half (default 2)")
    a.add_argument("--questions-per-topic", type=positive_int, default=2, metavar="N", help="factual half (default 2)")
    _flags(a, llm=True)
    a.set_defaults(func=_ambrqa)

    e = sub.add_parser("essays", help="SAE vs AAE vs ESL essay-prompt pairs from your SAE prompts",
                       description="Rewrite each SAE prompt into AAE and ESL English (LLM style transfer, or "
                       "seeded ESL rules with --esl-rules) and pair all styles.")
    e.add_argument("--prompts", required=True, metavar="FILE", help="SAE prompts (.jsonl with `prompt`, .csv, .txt)")
    e.add_argument("--styles", default="aae,esl", metavar="LIST", help="comma-separated: aae, esl (default both)")
    e.add_argument("--esl-rules", action="store_true", help="make ESL offline with seeded rules (no LLM)")
    e.add_argument("--n-errors", type=positive_int, default=3, metavar="N", help="ESL errors per prompt (default 3)")
    e.add_argument("--limit", type=positive_int, metavar="N", help="only the first N prompts")
    e.add_argument("--aae-rules", action="store_true",
                   help="make AAE offline with the rule-based features (an approximation; no LLM)")
    e.add_argument("--n-features", type=positive_int, metavar="N",
                   help="AAE features per prompt with --aae-rules (default: every one that applies)")
    _flags(e, llm=True)
    e.set_defaults(func=_essays)

    f = sub.add_parser("farm", help="true- vs false-belief prompt pairs from the Farm dataset",
                       description="One pair per item and statement domain (same/foreign); statements from the "
                       "items when present, else written by --backend.")
    f.add_argument("--source", required=True, metavar="DIR", help="Farm directory (Boolq/NQ1/NQ2/TruthfulQA .jsonl)")
    f.add_argument("--domains", default="same,foreign", metavar="LIST", help="statement domains (default same,foreign)")
    f.add_argument("--limit", type=positive_int, metavar="N", help="only the first N items per file")
    f.add_argument("--drop-identical", action="store_true", help="skip pairs whose two statements are identical")
    _flags(f, llm=True)
    f.set_defaults(func=_farm)

    q = sub.add_parser("questions", help="pairs from your own prompts (.txt, .csv, .jsonl) with one generator",
                       description="Run one generator on each of your prompts and check each pair. Writes the "
                       "pairs, a manifest, and OUT.skipped.jsonl: every prompt that made no pair, with the reason "
                       "(no marker found; only ambiguous markers, with the --allow that swaps them; a failed "
                       "check). Pairs whose x_j keeps a marker of the source variety are flagged in `mixed`.")
    q.add_argument("source", metavar="FILE", help="your prompts: .txt (one per line), .csv or .jsonl "
                   "(field prompt, question or text; optional id; belief: true_statement, false_statement)")
    q.add_argument("--generator", required=True, choices=_questions_choice("GENERATORS"),
                   help="markers: US/UK English words; aae, esl: the offline rules; belief: true vs false belief")
    q.add_argument("--direction", choices=_questions_choice("DIRECTIONS"), default="us-uk",
                   help="markers: the variety of your prompts -> the variety of x_j (default us-uk)")
    q.add_argument("--allow", nargs="+", default=[], metavar="WORD",
                   help="markers: ambiguous words to swap all the same (e.g. --allow trunk line)")
    q.add_argument("--n-errors", type=positive_int, default=3, metavar="N", help="esl: errors per prompt (default 3)")
    q.add_argument("--n-features", type=positive_int, metavar="N", help="aae: features per prompt (default: all)")
    q.add_argument("--fluency", choices=("auto", "on", "off"), default="auto",
                   help="the fluency check of every twin with the local model: auto (when the model is "
                        "installed; the manifest says whether it ran), on (required), off")
    _flags(q, llm=False)
    q.set_defaults(func=_questions)

    d = sub.add_parser("demo", help="one of our embedded demo sets (culture, education, echo)",
                       description="Pairs from the small demo sets shipped with ipcausal.")
    d.add_argument("name", metavar="NAME", help="culture | education | echo")
    _flags(d, llm=True)
    d.set_defaults(func=_demo)


def _questions_choice(name: str) -> tuple[str, ...]:
    import ipcausal.builders as builders  # light: the face serves the choices without loading a builder

    return tuple(getattr(builders, f"QUESTION_{name}"))


def _no_dataset(p: argparse.ArgumentParser) -> int:
    from ipcausal.cli import CliError

    raise CliError("choose a dataset: ambrqa, essays, farm, questions or demo (see ipcausal build --help)")


def _questions(args: argparse.Namespace) -> int:
    import sys

    from ipcausal.builders.questions import build_questions

    if args.allow and args.generator != "markers":
        from ipcausal.cli import CliError

        raise CliError("--allow is for --generator markers only")
    res = build_questions(args.source, generator=args.generator, direction=args.direction, allow=args.allow,
                          n_errors=args.n_errors, n_features=args.n_features, rng=args.seed,
                          on_problem=args.on_problem, fluency={"auto": None, "on": True, "off": False}[args.fluency])
    out, man = res.write(args.out, args.manifest)
    n, k = len(res.pairs), len(res.skipped)
    print(f"ipcausal build questions: wrote {n} pair{'s' * (n != 1)} to {out} from {n + k} prompts; "
          f"{k} made no pair (reasons below and in {out.with_name(out.stem + '.skipped.jsonl')}); "
          f"{len(res.mixed)} mixed; manifest {man}", file=sys.stderr)
    for line in res.lines():
        print("  " + line, file=sys.stderr)
    return 0


def _backend(args: argparse.Namespace) -> Any:
    backend = make_backend(args)
    if backend is None or args.no_cache:
        return backend
    from ipcausal.backends.cache import CachedBackend

    cache = Path(args.cache) if args.cache else Path(args.out).with_name(Path(args.out).name + ".cache.sqlite")
    return CachedBackend(backend, cache)


def _finish(result: Any, args: argparse.Namespace, what: str) -> int:
    import sys

    out, man = result.write(args.out, args.manifest)
    m = result.manifest
    skipped = m.get("n_skipped", 0)
    extra = f", {skipped} skipped (reasons in {man})" if skipped else ""
    print(f"ipcausal build {what}: wrote {count(len(result.pairs), 'pair')} to {out}{extra}; manifest {man}", file=sys.stderr)
    checks = m.get("checks") or {}
    if checks:
        print("pair checks: " + ", ".join(f"{k} {v}" for k, v in sorted(checks.items())), file=sys.stderr)
    return 0


def _ambrqa(args: argparse.Namespace) -> int:
    from ipcausal.builders import build_ambrqa
    from ipcausal.cli import CliError

    if not args.global_opinions and not args.backend and not args.stylish:
        raise CliError("give --global-opinions CSV (opinion half) and/or --stylish DIR or --backend (factual half)")
    if args.global_opinions and not Path(args.global_opinions).is_file():
        raise CliError(f"{args.global_opinions}: no such file (expected a GlobalOpinionQA CSV)")
    backend = _backend(args)
    res = build_ambrqa(args.global_opinions, stylish=args.stylish, stylish_ambiguous=args.stylish_ambiguous,
                       backend=backend, limit=args.limit,
                       factual=None if backend is None else (not args.no_factual and not args.stylish),
                       topics_per_domain=args.topics_per_domain, questions_per_topic=args.questions_per_topic,
                       rng=args.seed, max_tokens=args.max_tokens or 160, max_attempts=args.max_attempts,
                       on_problem=args.on_problem)
    return _finish(res, args, "ambrqa")


def _essays(args: argparse.Namespace) -> int:
    from ipcausal.builders import build_essays
    from ipcausal.cli import CliError

    if not Path(args.prompts).is_file():
        raise CliError(f"{args.prompts}: no such file (expected SAE essay prompts as .jsonl, .csv or .txt)")
    styles = [s.strip() for s in args.styles.split(",") if s.strip()]
    needs = [s for s in styles if (s == "aae" and not args.aae_rules) or (s == "esl" and not args.esl_rules)]
    if needs and not args.backend:
        raise CliError(f"style(s) {','.join(needs)} need --backend (or --aae-rules / --esl-rules, or drop them "
                       "from --styles)")
    res = build_essays(args.prompts, styles=styles, backend=_backend(args), esl_rules=args.esl_rules,
                       n_errors=args.n_errors, limit=args.limit, rng=args.seed, max_tokens=args.max_tokens or 256,
                       max_attempts=args.max_attempts, aae_rules=args.aae_rules, n_features=args.n_features,
                       on_problem=args.on_problem)
    return _finish(res, args, "essays")


def _farm(args: argparse.Namespace) -> int:
    from ipcausal.builders import build_farm
    from ipcausal.cli import CliError

    if not Path(args.source).exists():
        raise CliError(f"{args.source}: no such directory (expected the Farm JSONL files)")
    domains = tuple(s.strip() for s in args.domains.split(",") if s.strip())
    res = build_farm(args.source, backend=_backend(args), domains=domains, limit=args.limit, rng=args.seed,
                     drop_identical=args.drop_identical, max_tokens=args.max_tokens or 120,
                     on_problem=args.on_problem)
    return _finish(res, args, "farm")


def _demo(args: argparse.Namespace) -> int:
    from ipcausal.builders import build_demo

    if getattr(args, "backend", None):
        from ipcausal.cli import CliError

        raise CliError("build demo is offline: it takes no --backend")
    res = build_demo(args.name, args.seed, on_problem=args.on_problem)
    return _finish(res, args, f"demo {args.name}")
