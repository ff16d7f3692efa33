"""``ipcausal score PAIRS --scorer NAME -o FILE``: add outcomes (similarity or scores) to answered pairs.

``--scorer`` takes any scorer in :data:`ipcausal.scoring.registry.REGISTRY`: the built-in ones, and
yours after ``--plugin MODULE_OR_FILE`` has imported the Python module whose top level calls
``ipcausal.scoring.registry.register(Scorer(...))`` (docs/cli.md, "Your own scorer").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ipcausal._words import count
from ipcausal.commands._common import add_backend, add_out, make_backend, non_negative_int, positive_int

HELP = "score the responses of answered pairs (similarity or per-response scores)"


def score_summary(counts: Any, scorer: str, out: Any) -> str:
    """The closing line of ``ipcausal score``: what was scored, what was dropped or zeroed, and where it went.

    Examples
    --------
    >>> score_summary({"requested": 5, "scored": 5, "unparseable": 0, "missing": 0, "failed": 0, "zeroed": 0},
    ...               "mcq", "scored.jsonl")
    'scored 5 of 5 pairs with mcq; written to scored.jsonl'
    >>> score_summary({"requested": 5, "scored": 4, "unparseable": 2, "missing": 0, "failed": 0, "zeroed": 1},
    ...               "mcq", "s.jsonl")
    'scored 4 of 5 pairs with mcq (2 unparseable: 1 pair dropped, 1 pair scored 0); written to s.jsonl'
    """
    c = dict(counts)
    notes = []
    if c.get("unparseable"):
        dropped = c["requested"] - c["scored"] - c.get("missing", 0) - c.get("failed", 0)
        parts = []
        if dropped > 0:
            parts.append(f"{dropped} pair{'s' * (dropped != 1)} dropped")
        if c.get("zeroed"):
            parts.append(f"{c['zeroed']} pair{'s' * (c['zeroed'] != 1)} scored 0")
        notes.append(f"{c['unparseable']} unparseable" + (": " + ", ".join(parts) if parts else ""))
    if c.get("missing"):
        notes.append(f"{c['missing']} without a response (dropped)")
    if c.get("failed"):
        notes.append(f"{c['failed']} judge failures (dropped)")
    extra = f" ({'; '.join(notes)})" if notes else ""
    return f"scored {c['scored']} of {count(c['requested'], 'pair')} with {scorer}{extra}; written to {out}"


def load_plugins(plugins: Any) -> None:
    """Import each ``--plugin`` (a dotted module name, or a ``.py`` file by its path)."""
    import importlib
    import importlib.util

    from ipcausal.cli import CliError

    for ref in plugins:
        path = Path(ref)
        if ref.endswith(".py"):
            if not path.is_file():
                raise CliError(f"--plugin: {ref} does not exist")
            spec = importlib.util.spec_from_file_location(f"ipcausal_plugin_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
            spec.loader.exec_module(module)  # type: ignore[union-attr]
        else:
            try:
                importlib.import_module(ref)
            except ModuleNotFoundError as exc:
                raise CliError(f"--plugin: cannot import {ref!r} ({exc}); give a module on the Python path or a "
                               ".py file") from None


def scorer_name(name: str) -> str:
    """``name`` when it is a registered scorer; else a one-line error listing the registered ones.

    Examples
    --------
    >>> scorer_name("mcq")
    'mcq'
    """
    from ipcausal.cli import CliError
    from ipcausal.scoring.registry import REGISTRY

    if name not in REGISTRY:
        raise CliError(f"--scorer {name!r} is not a registered scorer; registered: {', '.join(REGISTRY)} "
                       "(register your own with ipcausal.scoring.registry.register(Scorer(...)) in a module and "
                       "pass --plugin MODULE_OR_FILE)")
    return name


def register(sub: Any) -> None:
    from ipcausal.scoring import UNPARSEABLE_POLICIES

    p = sub.add_parser("score", help=HELP, description=HELP + ". Unscoreable pairs go to FILE's .dropped.jsonl "
                       "sibling and are counted; a .meta.json sibling holds the counts.")
    p.add_argument("pairs", help="answered pairs (.jsonl, .csv or .parquet; from `ipcausal run`)")
    p.add_argument("--scorer", required=True, metavar="NAME",
                   help="a registered scorer: choice, scale, embedding, judge (similarity), essay, mcq (scores), "
                        "or one a --plugin registers")
    p.add_argument("--plugin", action="append", default=[], metavar="MODULE_OR_FILE",
                   help="import this Python module (a dotted name or a .py file) before scoring; its top level may "
                        "register scorers (repeatable)")
    add_out(p, "scored pairs file (.jsonl, .csv or .parquet)")
    add_backend(p, what="judge (--scorer judge; --scorer essay with --essay-rater judge)")
    p.add_argument("--scale-points", type=positive_int, help="points k of the scale (scale scorer)")
    p.add_argument("--essay-rater", choices=["offline", "judge"], default=None,
                   help="essay scorer: the offline surface-feature rater (default without --backend) or the judge")
    p.add_argument("--unparseable", choices=UNPARSEABLE_POLICIES, default="exclude",
                   help="unscoreable answers: drop the pair (default) or score 0")
    p.add_argument("--retries", type=non_negative_int, default=2, help="judge retries for replies without a rating (default 2)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ipcausal.cli import CliError
    from ipcausal.pairs import PairSet
    from ipcausal.scoring import OfflineEssayRater, score_pairs

    load_plugins(args.plugin)
    scorer_name(args.scorer)
    ps = PairSet.read(args.pairs)
    kw: dict[str, Any] = {"unparseable": args.unparseable, "retries": args.retries}
    if args.scorer == "judge":
        if not args.backend:
            raise CliError("--scorer judge needs --backend (the LLM judge)")
        kw["backend"] = make_backend(args)
    elif args.scorer == "essay":
        if args.essay_rater == "judge" or (args.essay_rater is None and args.backend):
            if not args.backend:
                raise CliError("--essay-rater judge needs --backend")
            kw["backend"] = make_backend(args)
        else:
            kw["rater"] = OfflineEssayRater()
    elif args.scorer == "logprob":
        if not args.backend:
            raise CliError("--scorer logprob needs --backend (the model whose option probabilities are scored)")
        kw["backend"] = make_backend(args)
    elif args.scorer == "scale":
        kw["k"] = args.scale_points
    elif args.backend:  # a scorer of your own that takes a judge backend
        kw["backend"] = make_backend(args)
    res = score_pairs(ps, args.scorer, **kw)
    out = res.pairs.write(args.out)
    base = Path(args.out)
    stem = base.with_suffix("")
    if len(res.dropped):
        res.dropped.to_json(f"{stem}.dropped.jsonl", orient="records", lines=True, force_ascii=False)
    Path(f"{stem}.meta.json").write_text(json.dumps({"scorer": res.scorer, "counts": res.counts}, indent=2))
    print(score_summary(res.counts, res.scorer, out), file=sys.stderr)
    return 0
