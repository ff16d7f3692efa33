"""The flags every sub-command shares, the one backend factory, and argparse value types.

One vocabulary: ``-o/--out`` for every file a command writes, ``--seed`` with one default
(:data:`SEED`), ``--backend/--model/--base-url`` for a model (``--judge-backend`` … for a judge),
and the test options with the defaults of :data:`ipcausal.study.defaults.DEFAULTS`.  Choices are
imported from the modules that own them.  This module imports nothing heavy at import time
(``ipcausal --help`` stays fast).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

__all__ = ["SEED", "add_out", "add_seed", "add_backend", "make_backend", "add_test_options", "test_kwargs",
           "positive_int", "non_negative_int", "unit_level", "positive_float", "non_negative_float",
           "add_progress", "unit_interval", "finite_float", "similarity_median", "comma_list", "add_open",
           "open_report", "add_currency"]

#: The one default seed of every command (reproducible unless the user asks otherwise).
SEED = 0


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return v


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (seeds)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text}")
    return v


def _float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return v


def unit_level(text: str) -> float:
    """argparse type: a level strictly between 0 and 1 (alpha, power)."""
    v = _float(text)
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1), got {text}")
    return v


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    v = _float(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return v


def non_negative_float(text: str) -> float:
    """argparse type: a finite number >= 0."""
    v = _float(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative number, got {text}")
    return v


def finite_float(text: str) -> float:
    """argparse type: any finite number (an effect size that may be negative)."""
    return _float(text)


def unit_interval(text: str) -> float:
    """argparse type: a number in (0, 1] (nucleus sampling's top-p)."""
    v = _float(text)
    if not 0.0 < v <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1], got {text}")
    return v


def comma_list(choices: Any) -> Any:
    """argparse type factory: a comma-separated, non-empty list of ``choices`` (order kept, no repeats)."""
    allowed = tuple(choices)

    def parse(text: str) -> tuple[str, ...]:
        items = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
        if not items:
            raise argparse.ArgumentTypeError(f"must name at least one of {', '.join(allowed)}, got {text!r}")
        bad = [t for t in items if t not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {', '.join(repr(b) for b in bad)}; choose from "
                                             f"{', '.join(allowed)} (comma-separated)")
        return items

    parse.__name__ = "list"
    return parse


def similarity_median(text: str) -> float:
    """argparse type: a median similarity in (0, 1] (``--m0``)."""
    v = _float(text)
    if not 0.0 < v <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1] (a median similarity), got {text}")
    return v


def _names(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    if len(names) < 2:
        raise argparse.ArgumentTypeError(f"must name at least two backgrounds, comma-separated, got {text!r}")
    return names


def add_out(p: argparse.ArgumentParser, what: str, *, required: bool = True, default: str | None = None) -> None:
    """``-o/--out``: the file or folder the command writes."""
    p.add_argument("-o", "--out", required=required and default is None, default=default, metavar="PATH",
                   help=what + (f" (default {default})" if default else ""))


def add_seed(p: argparse.ArgumentParser, what: str = "seed of every random step") -> None:
    """``--seed`` (non-negative integer, default :data:`SEED`)."""
    p.add_argument("--seed", type=non_negative_int, default=SEED, metavar="S", help=f"{what} (default {SEED})")


def add_open(p: argparse.ArgumentParser) -> None:
    """``--open``: open the HTML report in the web browser when done (off by default)."""
    p.add_argument("--open", action="store_true", help="open the HTML report in the web browser when done")


def open_report(path: Any) -> bool:
    """Open ``path`` (an HTML file) with :mod:`webbrowser`; False (and a note on stderr) when no browser."""
    import sys
    import webbrowser
    from pathlib import Path

    url = Path(path).resolve().as_uri()
    ok = bool(webbrowser.open(url))
    if not ok:
        print(f"could not open a web browser; the report is {url}", file=sys.stderr)
    return ok


def add_currency(p: Any) -> None:
    """``--currency``: the currency the prices are given in (shown with the cost)."""
    p.add_argument("--currency", default="USD", type=_currency, metavar="CODE",
                   help="currency of --price-input/--price-output, shown with the cost (default USD)")


def _currency(text: str) -> str:
    t = text.strip()
    if not t or len(t) > 8 or any(c.isspace() for c in t):
        raise argparse.ArgumentTypeError(f"must be a short currency code such as USD or EUR, got {text!r}")
    return t


def add_progress(p: argparse.ArgumentParser) -> None:
    """``--no-progress``."""
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_backend(p: Any, *, prefix: str = "", what: str = "model under test", default: str | None = None,
                extra: tuple[str, ...] = ()) -> None:
    """``--{prefix}backend``, ``--{prefix}model``, ``--{prefix}base-url`` (``extra``: more choices the command
    handles itself, e.g. check-case's ``none``)."""
    from ipcausal.backends import BACKEND_KINDS

    p.add_argument(f"--{prefix}backend", choices=(*BACKEND_KINDS, *extra), default=default,
                   help=f"{what}: local = llama.cpp in process, openai = OpenAI or a compatible server, vllm, "
                        "simulated = the SCM simulator (a known truth, offline)"
                        + "".join(f", {k}" for k in extra) + (f" (default {default})" if default else ""))
    p.add_argument(f"--{prefix}model", metavar="NAME_OR_PATH", help=f"{what}: model name or path (backend-specific)")
    p.add_argument(f"--{prefix}base-url", metavar="URL",
                   help=f"{what}: OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (openai backend)")


def make_backend(args: argparse.Namespace, *, prefix: str = "", **options: Any) -> Any:
    """The backend the flags of :func:`add_backend` name, or ``None`` when no backend is given.

    ``options`` go to :func:`ipcausal.backends.get_backend` (``None`` values are left out).
    """
    from ipcausal.cli import CliError

    key = prefix.replace("-", "_")
    kind = getattr(args, f"{key}backend", None)
    model = getattr(args, f"{key}model", None)
    base_url = getattr(args, f"{key}base_url", None)
    if kind is None:
        if model or base_url:
            raise CliError(f"--{prefix}model/--{prefix}base-url need --{prefix}backend")
        return None
    if kind == "simulated" and (model or base_url):
        raise CliError(f"--{prefix}model/--{prefix}base-url do not apply to --{prefix}backend simulated")
    if base_url and kind != "openai":
        raise CliError(f"--{prefix}base-url is only for --{prefix}backend openai")
    if kind == "vllm" and not model:
        raise CliError(f"--{prefix}backend vllm needs --{prefix}model (a Hugging Face model folder, or a GGUF "
                       "file with --tokenizer)")
    from ipcausal.backends import BackendError, get_backend

    kwargs = {k: v for k, v in {"model": model, "base_url": base_url, **options}.items() if v is not None}
    try:
        return get_backend(kind, **kwargs)
    except BackendError as exc:  # e.g. the server was asked for its models and did not answer
        raise CliError(str(exc)) from None


def add_test_options(p: argparse.ArgumentParser) -> None:
    """The options of :func:`ipcausal.test`, with its defaults (defined once, in the study layer)."""
    from ipcausal._validate import ALTERNATIVES
    from ipcausal.stats.multitest import CORRECTIONS
    from ipcausal.stats.permutation import METHODS
    from ipcausal.study.defaults import DEFAULTS, JOINT_CORRECTIONS, OUTCOMES

    g = p.add_argument_group("test")
    g.add_argument("--outcome", default=DEFAULTS["outcome"], choices=OUTCOMES)
    g.add_argument("--alpha", type=unit_level, default=DEFAULTS["alpha"],
                   help=f"significance level (default {DEFAULTS['alpha']})")
    g.add_argument("--correction", default=DEFAULTS["correction"], choices=CORRECTIONS + JOINT_CORRECTIONS,
                   help=f"multiple-testing correction within each model (default {DEFAULTS['correction']}); "
                        "westfall-young[-closed]: the joint test over each prompt's backgrounds (needs prompt_id)")
    g.add_argument("--m0", type=similarity_median, default=DEFAULTS["m0"],
                   help=f"null median of the similarity, in (0, 1] (default {DEFAULTS['m0']})")
    g.add_argument("--method", default=DEFAULTS["method"], choices=METHODS, help="permutation-test route")
    g.add_argument("--resamples", type=positive_int, default=None, metavar="L",
                   help=f"Monte Carlo resamples (default {DEFAULTS['n_resamples']:,}; 1,000 with --paper-compat)")
    g.add_argument("--cluster", metavar="COLUMN",
                   help="flip whole clusters: the column naming each pair's cluster (e.g. question_id)")
    g.add_argument("--order", metavar="A,B,...", type=_names,
                   help="backgrounds in order: every group tests Δ = score(later) − score(earlier)")
    g.add_argument("--trend", metavar="L1,L2,...", type=_names, default=None,
                   help="ordered levels (backgrounds) in order: add the trend test across them (one row per "
                        "prompt_id, one column per level; every prompt needs every level)")
    g.add_argument("--strata", metavar="COLUMN", default=None,
                   help="the column naming each pair's cue: the effect per cue, the pooled test stratified by "
                        "cue, and the heterogeneity test where each prompt carries every cue once")
    g.add_argument("--margin", type=positive_float, default=None, metavar="EPS",
                   help="equivalence margin on mean Δ: label each pair reject / equivalent / inconclusive")
    g.add_argument("--alternative", choices=ALTERNATIVES, default=None,
                   help="H1's direction (default two-sided for scores, less for similarity)")
    g.add_argument("--paper-compat", action="store_true",
                   help="reproduce the study's released code (p = b/L, L=1000; sign test 'greater'; no correction)")


def test_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of :func:`ipcausal.test` from the flags of :func:`add_test_options` and ``--seed``."""
    from ipcausal.study.options import Design

    method = "paper-compat" if args.paper_compat else args.method
    design = Design(outcome=args.outcome, order=args.order, trend=getattr(args, "trend", None),
                    strata=getattr(args, "strata", None))
    return dict(alpha=args.alpha, correction=args.correction, m0=args.m0, method=method, n_resamples=args.resamples,
                rng=args.seed, cluster=args.cluster, alternative=args.alternative, margin=args.margin, design=design)
