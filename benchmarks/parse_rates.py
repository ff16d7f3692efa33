"""Parse rates of the one reader (ipcausal.scoring.read) on text it was not written for.

1. **The local model** (SmolLM2-135M via ``get_backend("local")``, greedy, each case's own token budget)
   on the first ``--limit`` demo pairs of every built-in case and of a freshly scaffolded case
   (``ipcausal new-case``): the share of replies the case's scorer reads.  Scorers that read no number
   or choice (the culture case's embedding, the offline essay rater) read every reply; for those cases
   the row with the local model **as the judge** (``--judge-backend local``: the 1–5 similarity judge,
   the 1–6 essay rubric) measures the reader on the judge's replies (after the judge's retries).
2. **The study's released answers** (../shared/data/jiarui-liu-IP/case_1/subjective/results and the
   Gemini file): each model's answers to the GlobalOpinionQA questions read by ``read_choice`` against
   the options, and the share where the option read is the one the authors matched.

Usage: ``python benchmarks/parse_rates.py [--limit 12] [--skip-model] [--dump FILE]``; writes
``benchmarks/PARSE_RATES.txt`` (Markdown table lines).  ``--dump FILE`` only writes the local model's
replies (JSON: per case, each reply with the pair and side; from the cache after a run) — the fixture
``tests/scoring/fixtures/local_replies.json`` that tests/scoring/test_read_local.py reads.  The model's answers are cached in
``--cache`` (default /tmp/ipcausal-parse-rates.sqlite), so a rerun reads them back.
"""

from __future__ import annotations

import argparse
import ast
import csv
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")


def _scaffold() -> object:
    from ipcausal.cases.scaffold import scaffold_case

    root = Path(tempfile.mkdtemp()) / "commute"
    scaffold_case("commute", root)
    sys.path.insert(0, str(root))
    from ipcausal_case_commute.case import CASE  # type: ignore[import-not-found]

    return CASE


def _model_rows(limit: int, cache: str) -> list[str]:
    from ipcausal.backends import get_backend
    from ipcausal.backends.base import GenerationConfig
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.cases import get_case
    from ipcausal.scoring import NoScorablePairs, score_pairs
    from ipcausal.study.checkread import parse_rate, reads_text
    from ipcausal.study.run import run

    local = get_backend("local")
    store = ResponseCache(cache)
    cases = [(name, get_case(name)) for name in ("culture", "education", "echo", "learner", "age")]
    cases.append(("new-case scaffold", _scaffold()))
    rows = []
    for label, case in cases:
        src = case.source(given=False)
        ps = src.load(0, limit)
        t0 = time.perf_counter()
        if label == "learner" and not reads_text(case.scorer_for(given=False)):  # the education scorer, again
            rows.append(f"| {label} | case scorer: {case.scorer_for(given=False).describe()} | {len(ps)} | — | "
                        "100 % by construction (reads no number or choice; not run) | — |  | 0 s |")
            continue
        answered = run(ps, local, cache=store, config=GenerationConfig(max_tokens=src.max_tokens, temperature=0.0,
                                                                       seed=0), progress=False)
        variants = [("case scorer", case.scorer_for(given=False))]
        if case.judged is not None and label != "learner":
            variants.append(("local model as judge", case.scorer_for(given=False, judge=local)))
        for what, scorer in variants:
            try:
                res = score_pairs(answered, scorer)
                read, asked, unread = parse_rate(res.pairs.to_frame(), res.dropped)
                scored = res.counts["scored"]
            except NoScorablePairs as exc:
                read, asked, unread = parse_rate(None, exc.dropped)
                scored = 0
            example = repr(" ".join(unread[0].split())[:60]) if unread else ""
            rate = f"{100 * read / asked:.1f} %" if asked else "n/a"
            rows.append(f"| {label} | {what}: {scorer.describe()} | {len(ps)} | {read} / {asked} | {rate} | "
                        f"{scored} / {len(ps)} | {example} | {time.perf_counter() - t0:.0f} s |")
            print(rows[-1], flush=True)
    return rows


def _dump(limit: int, cache: str, out: str) -> None:
    import json

    from ipcausal.backends import get_backend
    from ipcausal.backends.base import GenerationConfig
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.cases import get_case
    from ipcausal.study.run import run

    local, store, got = get_backend("local"), ResponseCache(cache), {}
    for label, case in [(n, get_case(n)) for n in ("echo", "age")] + [("scaffold", _scaffold())]:
        src = case.source(given=False)
        answered = run(src.load(0, limit), local, cache=store, config=GenerationConfig(
            max_tokens=src.max_tokens, temperature=0.0, seed=0), progress=False)
        got[label] = [{"pair_id": str(r["pair_id"]), "side": s, "reply": r[f"y_{s}"],
                       **({"options": r["options"]} if "options" in r else {})}
                      for r in answered.records() for s in ("i", "j") if r.get(f"y_{s}") is not None]
    Path(out).write_text(json.dumps({"model": str(local.model), "max_tokens": "each case's demo budget",
                                     "replies": got}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {out}")


def _released_rows() -> list[str]:
    from ipcausal.scoring import read_choice

    folder = DATA / "jiarui-liu-IP" / "case_1" / "subjective" / "results"
    files = sorted(folder.glob("*.csv")) + [DATA / "sirnyls-AutoPersonalizationBench" / "gemini" /
                                              "case1_gemini_results.csv"]
    csv.field_size_limit(1 << 30)
    rows = []
    for path in files:
        if not path.is_file():
            continue
        with open(path, encoding="utf-8", newline="") as fh:
            data = list(csv.DictReader(fh, delimiter=";"))
        read = asked = agree = matched = 0
        for row in data:
            try:
                options = ast.literal_eval(row["options_dict"])
            except (ValueError, SyntaxError):
                continue
            texts = [str(options[k]) for k in sorted(options)]
            for side in ("us", "uk"):
                answer = row.get(f"model_answer_{side}") or ""
                asked += 1
                got = read_choice(answer, texts)
                if got is None:
                    continue
                read += 1
                match = (row.get(f"model_answer_{side}_option_match") or "").strip()
                if match and match.lower() != "nan":
                    matched += 1
                    agree += texts[got].startswith(match[:40]) or match.startswith(texts[got][:40])
        rows.append(f"| {path.parent.name}/{path.name} | {asked} | {read} ({100 * read / asked:.1f} %) | "
                    f"{agree} / {matched} ({100 * agree / max(matched, 1):.1f} %) |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=12, help="demo pairs per case sent to the local model")
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "ipcausal-parse-rates.sqlite"))
    ap.add_argument("--skip-model", action="store_true", help="only the released answers")
    ap.add_argument("-o", "--out", default=str(Path(__file__).with_name("PARSE_RATES.txt")))
    ap.add_argument("--dump", metavar="FILE", help="only write the local model's replies (echo, age, scaffold) as JSON")
    args = ap.parse_args()
    if args.dump:
        _dump(args.limit, args.cache, args.dump)
        return
    lines = []
    if not args.skip_model:
        lines += ["| case | scorer | pairs | replies read | parse rate | pairs scored | first reply not read | time |",
                  "|---|---|---|---|---|---|---|---|"] + _model_rows(args.limit, args.cache) + [""]
    lines += ["| released answers (case 1, GlobalOpinionQA) | answers | read by read_choice | the authors' option |",
              "|---|---|---|---|"] + _released_rows()
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
