"""``ipcausal cases``: the registered cases (built-in and from installed plugins), one line each."""

from __future__ import annotations

import argparse
import sys
from typing import Any

HELP = "list the registered cases (built-in and plugins): name, backgrounds, outcome, stance, origin"


def register(sub: Any) -> None:
    p = sub.add_parser("cases", help=HELP, description=HELP + ". A distribution adds a case under the "
                       "entry-point group `ipcausal.cases` (see docs/cases.md); run one with `ipcausal case NAME`.")
    p.add_argument("--format", choices=("table", "json"), default="table", help="a table (default) or JSON")
    p.set_defaults(func=main)


def rows() -> list[dict[str, str]]:
    """One row per registered case (what ``ipcausal cases`` prints)."""
    from ipcausal.cases import list_cases

    return [{"name": c.name, "backgrounds": (" < " if c.ordered else ", ").join(c.backgrounds),
             "outcome": f"{c.outcome.name} ({c.scorer.name})", "stance": c.stance, "origin": c.origin,
             "title": c.title} for c in list_cases()]


def main(args: argparse.Namespace) -> int:
    import json
    import warnings

    from ipcausal.cases import CasePluginWarning, plugin_problems

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CasePluginWarning)  # printed below, once each
        table = rows()
        problems = plugin_problems()
    for message in problems:
        print(f"warning: {message}", file=sys.stderr)
    if args.format == "json":
        sys.stdout.write(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
        return 0
    cols = ("name", "backgrounds", "outcome", "stance", "origin")
    width = {c: max(len(c), *(len(r[c]) for r in table)) for c in cols}
    print("  ".join(c.ljust(width[c]) for c in cols).rstrip())
    for r in table:
        print("  ".join(r[c].ljust(width[c]) for c in cols).rstrip())
    return 0
