"""``ipcausal failures FILE_OR_FOLDER``: list the pairs whose responses failed or that scoring dropped.

An unparseable answer is listed with its reply (the first characters), so a reader that cannot read
the model shows what the model wrote.

FILE is an answered PairSet (``ipcausal run -o``: requests that failed, from ``error_i``/``error_j``),
a scored file (``ipcausal score -o``: its ``.dropped.jsonl`` sibling is read too), a ``.dropped.jsonl``
file itself, or an ``ipcausal case`` folder (``responses.jsonl`` and ``dropped.jsonl``).
Exit status 0 when nothing failed or was dropped, 3 otherwise (so a script can tell).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ipcausal._words import count

HELP = "list the pairs whose requests failed (run) or that scoring dropped (score, case)"

__all__ = ["register", "main", "failure_rows"]


def register(sub: Any) -> None:
    p = sub.add_parser("failures", help=HELP, description=HELP + ". Exit status 3 when there are any.")
    p.add_argument("path", metavar="FILE_OR_FOLDER",
                   help="answered pairs (from `ipcausal run`), scored pairs (from `ipcausal score`), a .dropped.jsonl "
                        "file or an `ipcausal case` output folder")
    p.add_argument("--limit", type=_limit, default=50, metavar="N",
                   help="show at most N rows (default 50; 0 = all)")
    p.set_defaults(func=main)


def _limit(text: str) -> int:
    from ipcausal.commands._common import non_negative_int

    return non_negative_int(text)


def _text(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and v != v):
        return None
    return str(v)


def _run_failures(df: Any) -> list[list[str]]:
    rows = []
    for s in ("i", "j"):
        err, y = f"error_{s}", f"y_{s}"
        if y not in df.columns and err not in df.columns:
            continue
        for k in range(len(df)):
            answered = y in df.columns and isinstance(df[y].iat[k], str)
            if answered:
                continue
            reason = _text(df[err].iat[k]) if err in df.columns else None
            bg = _text(df[f"background_{s}"].iat[k]) or s
            rows.append([str(df["pair_id"].iat[k]), f"run ({bg})", reason or "no response recorded"])
    return rows


#: How much of a reply ``failures`` shows beside an unparseable answer.
REPLY_CHARS = 100


def _reply(text: str | None) -> str:
    if text is None:
        return ""
    flat = " ".join(text.split())
    return ": " + repr(flat if len(flat) <= REPLY_CHARS else flat[: REPLY_CHARS - 1] + "…")


def _dropped_rows(df: Any, replies: dict[str, tuple[str | None, str | None]] | None = None) -> list[list[str]]:
    """One row per dropped pair; an unparseable answer is shown with its reply (from the row, else ``replies``)."""
    rows = []
    for k in range(len(df)):
        pid = str(df["pair_id"].iat[k])
        got = {s: _text(df[f"y_{s}"].iat[k]) if f"y_{s}" in df.columns else None for s in ("i", "j")}
        known = (replies or {}).get(pid, (None, None))
        got = {s: got[s] if got[s] is not None else known[n] for n, s in enumerate(("i", "j"))}
        why = []
        for col in ("similarity_status", "status_i", "status_j"):
            if col in df.columns:
                v = _text(df[col].iat[k])
                if v and v != "ok":
                    side = {"status_i": "answer i", "status_j": "answer j"}.get(col, "pair")
                    shown = _reply(got[col[-1]]) if col != "similarity_status" else \
                        _reply(got["i"]) + (" | " + _reply(got["j"])[2:] if got["j"] is not None else "")
                    why.append(f"{side} {v}" + (shown if v == "unparseable" else ""))
        rows.append([pid, "score", "; ".join(why) or "dropped by the scorer"])
    return rows


def failure_rows(path: str | Path) -> list[list[str]]:
    """Rows ``[pair_id, stage, reason]`` for every failed request and every dropped pair under ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ipcausal import PairSet
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> f = PairSet.from_records([{"pair_id": "p1", "background_i": "US", "background_j": "UK", "x_i": "a",
    ...     "x_j": "b", "y_i": "A", "y_j": None, "error_j": "HTTP 500"}]).write(d / "answered.jsonl")
    >>> failure_rows(f)
    [['p1', 'run (UK)', 'HTTP 500']]
    """
    import pandas as pd

    from ipcausal.pairs import PairSet

    p = Path(path)
    rows: list[list[str]] = []
    if p.is_dir():
        responses, dropped = p / "responses.jsonl", p / "dropped.jsonl"
        if not responses.is_file():
            raise FileNotFoundError(f"{p}: no responses.jsonl (not an `ipcausal case` output folder)")
        answers = PairSet.read(responses).to_frame()
        rows += _run_failures(answers)
        if dropped.is_file():
            replies = {str(p): (_text(a), _text(b)) for p, a, b in
                       zip(answers["pair_id"], answers.get("y_i", [None] * len(answers)),
                           answers.get("y_j", [None] * len(answers)))}
            rows += _dropped_rows(pd.read_json(dropped, lines=True, dtype=False), replies)
        return rows
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    if p.name.endswith(".dropped.jsonl") or p.name == "dropped.jsonl":
        return _dropped_rows(pd.read_json(p, lines=True, dtype=False))
    rows += _run_failures(PairSet.read(p).to_frame())
    sibling = p.with_suffix("").with_name(p.with_suffix("").name + ".dropped.jsonl")
    if sibling.is_file():
        rows += _dropped_rows(pd.read_json(sibling, lines=True, dtype=False))
    return rows


def main(args: argparse.Namespace) -> int:
    from ipcausal.cli import EXIT_INCOMPLETE
    from ipcausal.study.text import text_table

    rows = failure_rows(args.path)
    if not rows:
        print(f"{args.path}: no failed requests and no dropped pairs")
        return 0
    shown = rows if args.limit == 0 else rows[: args.limit]
    print("\n".join(text_table(shown, ["pair_id", "stage", "reason"])))
    more = len(rows) - len(shown)
    runs = sum(r[1].startswith("run") for r in rows)
    print(f"{count(len(rows), 'row')}: {count(runs, 'failed request')}, {count(len(rows) - runs, 'dropped pair')}"
          + (f"; {more} not shown (--limit 0 shows all)" if more else ""), file=sys.stderr)
    if runs:
        print("rerun the same `ipcausal run` / `ipcausal case` command to retry the failed requests", file=sys.stderr)
    return EXIT_INCOMPLETE
