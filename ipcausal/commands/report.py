"""``ipcausal report INPUT... -o report.html``: render Reports (or test scored pairs first).

INPUT is a Report file (``ipcausal test ... -o report.json``, or a case's ``report.json``) — rendered
as written, without testing again —, a ``bench.json``, a ``mitigation.json`` (``ipcausal case
--mitigation``), or scored pairs / an ``ipcausal case`` folder, which are tested with the options
below (the defaults of ``ipcausal test``).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from ipcausal.commands._common import add_open, add_out, add_seed, add_test_options, open_report, test_kwargs

HELP = "write a Markdown or HTML report (plots embedded) from Report files, scored pairs or case folders"


def register(sub: Any) -> None:
    p = sub.add_parser("report", help=HELP, description=HELP + ". A Report file (.json from `ipcausal test -o`) "
                       "is rendered as written; scored pairs and `ipcausal case` folders are tested first with "
                       "the test options below. Several inputs make one combined report.")
    p.add_argument("results", nargs="+", help="Report file(s) (.json), scored pairs file(s) or case folder(s)")
    add_out(p, "report file: .html, .md, .json or .txt")
    p.add_argument("--title", type=_title,
                   help="the report's title (default: ipcausal report — the sections' titles, i.e. case or input "
                        "file, and model)")
    add_open(p)
    add_test_options(p)
    add_seed(p, "seed for Monte Carlo and the bootstrap (scored-pairs inputs)")
    p.set_defaults(func=main)


def _title(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must be non-empty text")
    return text


def _is_report_file(path: Path) -> bool:
    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as fh:
            head = json.loads(fh.read())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    items = head if isinstance(head, list) else [head]
    return bool(items) and all(isinstance(i, dict) and "report" in i for i in items)


def _sections(path: Path, args: argparse.Namespace) -> list[Any]:
    from ipcausal.pairs import PairSet
    from ipcausal.report import Section, read_sections
    from ipcausal.study.test import MonteCarloResolutionWarning, test

    if _is_report_file(path):
        return read_sections(path)
    if path.is_dir() and _is_report_file(path / "report.json"):  # an `ipcausal case` folder: render as written
        return read_sections(path / "report.json")
    from ipcausal.study.record import RunRecord

    title = path.stem
    if path.is_dir():
        pairs_path = path / "pairs.jsonl"
        if not pairs_path.is_file():
            raise FileNotFoundError(f"{path} has no pairs.jsonl (not an `ipcausal case` output folder)")
        title = path.name
    else:
        pairs_path = path
    # a case folder's meta.json, or a scored file's .meta.json sibling (what `ipcausal score` writes)
    record = RunRecord.read(path)
    counts: dict[str, Any] = dict(record.counts) if record else {}
    settings: dict[str, Any] = dict(record.settings) if record else {}
    if record is not None and record.title and path.is_dir():
        title = record.title
    ps = PairSet.read(pairs_path)
    if "model" in ps and "model" not in settings:
        settings["model"] = ", ".join(sorted(set(ps["model"].dropna().astype(str))))
    if settings.get("model") and str(settings["model"]) not in title:
        title = f"{title} — {settings['model']}"  # name the input and the model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MonteCarloResolutionWarning)  # printed in the report itself
        report = test(ps, **test_kwargs(args))
    return [Section(title, report, counts, settings)]


def _bench_file(path: Path) -> Path | None:
    """``path`` (or ``path/bench.json``) when it is an ``ipcausal bench`` result, else ``None``."""
    p = path / "bench.json" if path.is_dir() else path
    if p.suffix.lower() != ".json" or not p.is_file():
        return None
    try:
        head = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return p if isinstance(head, dict) and str(head.get("schema", "")).startswith("ipcausal.bench/") else None


def _bench(path: Path, args: argparse.Namespace) -> int:
    from ipcausal.cli import CliError
    from ipcausal.report.bench import bench_markdown, write_bench_html
    from ipcausal.study.bench import BenchReport

    if len(args.results) != 1:
        raise CliError("a bench.json is rendered on its own: give it as the only input")
    out = Path(args.out)
    if out.suffix.lower() not in (".md", ".html", ".htm"):
        raise CliError(f"--out: a bench renders as Markdown or HTML; give a .md or .html file, not {out.name!r}")
    title = args.title or "IP-Bench"  # no --title: the bench's own heading
    if out.suffix.lower() != ".md":  # the heat map; each cell's report.html is written beside its report.json
        write_bench_html(BenchReport.read(path), path.parent, out=out, title=title)
        print(f"report written: {out}", file=sys.stderr)
        if args.open:
            open_report(out)
        return 0
    text = bench_markdown(BenchReport.read(path), title=title)
    # the cells' links are relative to the bench folder
    if out.resolve().parent != path.resolve().parent:
        text = text.replace("](cells/", f"]({path.resolve().parent.as_posix()}/cells/")
    out.write_text(text, encoding="utf-8")
    print(f"report written: {out}", file=sys.stderr)
    return 0


def _mitigation(path: Path, args: argparse.Namespace) -> int:
    """Render a ``mitigation.json`` (``ipcausal case --mitigation``) as its own page."""
    from ipcausal.cli import CliError
    from ipcausal.report.mitigation import mitigation_html, mitigation_markdown
    from ipcausal.study.mitigation import read_mitigation

    if len(args.results) != 1:
        raise CliError("a mitigation.json is rendered on its own: give it as the only input (a case folder "
                       "renders its report with the mitigation table)")
    out = Path(args.out)
    d = read_mitigation(path)
    if out.suffix.lower() in (".html", ".htm"):
        text = mitigation_html(d, title=args.title)
    elif out.suffix.lower() in (".md", ".markdown"):
        text = mitigation_markdown(d, title=args.title)
    else:
        raise CliError(f"--out: a mitigation result renders as Markdown or HTML; give a .md or .html file, not "
                       f"{out.name!r}")
    from ipcausal._jsonio import write_text

    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, text)
    print(f"report written: {out}", file=sys.stderr)
    if args.open and out.suffix.lower() in (".html", ".htm"):
        open_report(out)
    return 0


def _is_mitigation_file(path: Path) -> bool:
    from ipcausal.report.mitigation import is_mitigation

    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    try:
        return is_mitigation(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False


def main(args: argparse.Namespace) -> int:
    from ipcausal.report import write_report

    from ipcausal.cli import CliError

    for r in args.results:  # before anything is read: say which input is not there
        if not Path(r).exists():
            raise CliError(f"{r} does not exist (expected a Report file .json, scored pairs .jsonl/.csv/.parquet "
                           "or an `ipcausal case` folder)")
    bench = _bench_file(Path(args.results[0]))
    if bench is not None:
        return _bench(bench, args)
    if _is_mitigation_file(Path(args.results[0])):
        return _mitigation(Path(args.results[0]), args)
    sections = [s for r in args.results for s in _sections(Path(r), args)]
    title = args.title or "ipcausal report — " + "; ".join(dict.fromkeys(s.title for s in sections))
    out = write_report(sections, args.out, title=title)
    print(f"report written: {out}", file=sys.stderr)
    if args.open:
        if out.suffix.lower() not in (".html", ".htm"):
            print("--open: only an .html report opens in a browser", file=sys.stderr)
        else:
            open_report(out)
    return 0
