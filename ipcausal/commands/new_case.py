"""``ipcausal new-case NAME -o DIR``: scaffold an installable case package (see ``docs/cases.md``)."""

from __future__ import annotations

import argparse
from typing import Any

from ipcausal.commands._common import add_out

HELP = "scaffold an installable case package (pyproject entry point, case module, pairs, CASE.md, tests)"


def case_name(text: str) -> str:
    """A case's name as the registry wants it: a lower-case identifier (checked before anything is written)."""
    import re

    if not re.match(r"^[a-z][a-z0-9_-]*$", text):
        raise argparse.ArgumentTypeError(f"must be a lower-case identifier (letters, digits, _, -), got {text!r}")
    return text


def register(sub: Any) -> None:
    p = sub.add_parser("new-case", help=HELP, description=HELP + ". The package passes `ipcausal check-case "
                       "NAME` as written; `pip install DIR` registers it under the entry-point group "
                       "`ipcausal.cases`.")
    p.add_argument("name", metavar="NAME", type=case_name, help="the case's name: a lower-case identifier (letters, digits, _, -)")
    add_out(p, "the folder to create (new or empty)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ipcausal.cases.scaffold import scaffold_case

    files = scaffold_case(args.name, args.out)
    for path in files:
        print(path)
    print(f"next: pip install {args.out} && ipcausal check-case {args.name}")
    return 0
