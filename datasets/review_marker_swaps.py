"""List every one-way marker swap that real texts produce, with its context, for review.

A pair flagged ``uk`` or ``us`` in ``ipcausal/data/markers.csv`` is swapped in one direction only.
Whether its one-way swap keeps the meaning depends on the contexts the word meets (idioms,
compounds: "part and parcel", "e-mail"). This script runs both directions of ``swap_markers``
over the long text columns of every CSV/JSONL file under a folder and prints, per one-way word,
how often it was swapped and its commonest contexts. Read the output before trusting the flags
on new data; set a row back to ``true`` where a swap changes the meaning.

    .venv/bin/python datasets/review_marker_swaps.py ../shared/data [--contexts 4]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import pandas as pd

from ipcausal.interventions import marker_lexicon, swap_markers


def texts_under(folder: Path, per_column: int = 5000) -> list[str]:
    """Distinct long strings (mean length > 40) from the text columns of the files under ``folder``."""
    out: list[str] = []
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".csv", ".jsonl"):
            continue
        try:
            df = (pd.read_csv(path, dtype=str, on_bad_lines="skip", nrows=20_000) if path.suffix == ".csv"
                  else pd.read_json(path, lines=True, nrows=20_000).astype(str))
        except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        for col in df.columns:
            values = df[col].dropna().astype(str)
            if len(values) and values.str.len().mean() > 40:
                out += list(values.unique()[:per_column])
    return list(dict.fromkeys(out))


def one_way_contexts(texts: list[str], width: int = 25) -> dict[tuple[str, str], collections.Counter]:
    """``(to, source word) -> Counter of contexts`` for every swap made by a one-way pair."""
    lex = marker_lexicon()
    one_way = {"uk": lex.us[lex.ambiguous_uk & ~lex.ambiguous_us], "us": lex.uk[lex.ambiguous_us & ~lex.ambiguous_uk]}
    found: dict[tuple[str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    for to in ("uk", "us"):
        words = sorted({w.lower() for w in one_way[to]}, key=len, reverse=True)  # longest first: "trash can"
        for text in texts:
            swap = swap_markers(text, to=to)
            for c in () if swap is None else swap.changes:
                word = c.old.lower()
                base = next((w for w in words if word.startswith(w)), None)
                if base is not None:
                    found[(to, base)][text[max(0, c.start - width):c.end + width].replace("\n", " ")] += 1
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="folder with CSV/JSONL files (e.g. ../shared/data)")
    ap.add_argument("--contexts", type=int, default=4, help="contexts printed per word (default 4)")
    args = ap.parse_args(argv)
    if not args.folder.is_dir():
        ap.error(f"argument folder: no such directory: {args.folder}")
    texts = texts_under(args.folder)
    print(f"{len(texts):,} texts read from {args.folder}")
    found = one_way_contexts(texts)
    for key in sorted(found, key=lambda k: -sum(found[k].values())):
        to, word = key
        print(f"to={to}  {word!r}: {sum(found[key].values())} swaps")
        for context, n in found[key].most_common(args.contexts):
            print(f"    {n:>5}  {context!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
