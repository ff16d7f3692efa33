"""Pair quality (issue 29): sense-decided swaps, generator coverage on questions, mitigations' residual cues.

1. Swap precision / recall per ambiguous word on our labelled sentences (each word in each of its
   senses): benchmarks/data/sense_sentences.jsonl (234, the set the sense table was tuned on) and
   benchmarks/data/sense_sentences_heldout.jsonl (61, written after the table was frozen).  A swap
   counts as right when the labelled sense is the marker sense and the word became its labelled
   counterpart.  Compared with the lexicon-only rule it replaces: ambiguous words never swapped
   by default, and ``--allow WORD`` swapping every occurrence.
2. Generator coverage on benchmarks/data/everyday_questions.txt (120 questions of our own): pairs
   made by build_questions for markers, aae, esl; each pair passed check_pair; with the local model,
   the fluency check too (its rate is printed).
3. Residual cues after the mitigations: markers on the culture demo and on our marker pairs, dialect
   on the education demo and our AAE/ESL pairs, strip on the echo demo.  For each: pairs trusted,
   pairs dropped (a cue left or a check failed), and the cues the detectors still find in the
   trusted pairs (target 0), next to what the markers mitigation before this issue left.

Run: PYTHONPATH=. nice python benchmarks/pair_quality.py   (writes benchmarks/PAIR_QUALITY.txt)
"""

from __future__ import annotations

import json
import platform
import re
import time
from collections import defaultdict
from pathlib import Path

from ipcausal.builders import demo_pairs
from ipcausal.builders.questions import build_questions
from ipcausal.interventions import find_markers, marker_senses, swap_markers, tagger_available
from ipcausal.interventions.fluency import check_fluency, fluency_available
from ipcausal.interventions.neutralize import residual_cues
from ipcausal.study.mitigation import apply_mitigation

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"


def _span(text: str, word: str) -> tuple[int, int]:
    m = re.search(rf"(?<![\w]){re.escape(word)}(?:s|es|ed|d|ing)?(?![\w])", text, re.IGNORECASE)
    if m is None:
        raise ValueError(f"{word!r} not in {text!r}")
    return m.start(), m.end()


def _swapped(text: str, span: tuple[int, int], to: str, include_ambiguous: bool) -> str | None:
    sw = swap_markers(text, to=to, include_ambiguous=include_ambiguous)
    for c in sw.swaps if sw else ():
        if c.start < span[1] and span[0] < c.end:
            return c.new
    return None


def senses(path: Path) -> list[str]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # tp, fp, fn, other refused, n
    old_allow = defaultdict(lambda: [0, 0])  # marker-labelled, all (the old --allow swaps every occurrence)
    wrong_incl = 0
    for r in rows:
        to = "uk" if r["read"] == "us" else "us"
        span = _span(r["text"], r["word"])
        new = _swapped(r["text"], span, to, False)
        right = new is not None and bool(r["target"]) and (r["target"].lower()[:-1] in new.lower())
        c = per[f"{r['read']}:{r['word']}"]
        c[4] += 1
        if r["sense"] == "marker":
            c[0] += bool(right)
            c[1] += new is not None and not right
            c[2] += not right
        else:
            c[1] += new is not None
            decided = [d for d in marker_senses(r["text"], to) if d.start < span[1] and span[0] < d.end]
            c[3] += bool(decided) and decided[0].sense == "other"
            wrong_incl += _swapped(r["text"], span, to, True) is not None and decided[0].sense != "undecided" \
                if decided else False
        o = old_allow[f"{r['read']}:{r['word']}"]
        o[0] += r["sense"] == "marker"
        o[1] += 1
    tp = sum(c[0] for c in per.values())
    fp = sum(c[1] for c in per.values())
    fn = sum(c[2] for c in per.values())
    n_marker = sum(r["sense"] == "marker" for r in rows)
    n_other = len(rows) - n_marker
    refused = sum(c[3] for c in per.values())
    lines = [f"{path.name}: {len(rows)} sentences ({n_marker} marker sense, {n_other} other sense), "
             f"{len(per)} words; tagger {'on' if tagger_available() else 'OFF'}",
             f"  sense check (default): precision {tp / max(tp + fp, 1):.3f} ({tp}/{tp + fp}), recall "
             f"{tp / max(n_marker, 1):.3f} ({tp}/{n_marker}); other-sense swaps {fp}; other sense decided and "
             f"refused even with --allow: {refused}/{n_other} (the rest undecided: --allow would swap them)",
             f"  decided-other swapped by include_ambiguous: {wrong_incl} (must be 0)",
             f"  lexicon-only rule it replaces: default recall 0/{n_marker}; with --allow WORD for every word: "
             f"precision {n_marker / len(rows):.3f} ({n_marker}/{len(rows)}), recall 1.000",
             "  per word: word  n  TP FP FN  refused(other)  precision recall"]
    for w, (a, b, f, rf, n) in sorted(per.items()):
        prec = f"{a / (a + b):.2f}" if a + b else "  - "
        m = old_allow[w][0]
        rec = f"{a / m:.2f}" if m else "  - "
        lines.append(f"    {w:<16} {n:>2}  {a:>2} {b:>2} {f:>2}  {rf:>2}  {prec} {rec}")
    return lines


def coverage() -> list[str]:
    src = DATA / "everyday_questions.txt"
    n = sum(1 for line in src.read_text().splitlines() if line.strip())
    lines = [f"generator coverage on {src.name} ({n} questions); every pair passed check_pair; fluency "
             f"{'checked by the builder (local model)' if fluency_available() else 'NOT checked (no local model)'}"]
    made = {}
    for gen in ("markers", "aae", "esl"):
        t0 = time.perf_counter()
        res = build_questions(src, generator=gen)
        made[gen] = res
        df = res.pairs.to_frame()
        fl = df["fluency_drop"].notna().sum() if "fluency_drop" in df else 0
        dropped_fl = res.manifest["checks"].get("fluency", 0)
        detected = int(df["target_features_j"].fillna(False).astype(bool).sum()) if len(df) else 0
        lines.append(f"  {gen:<8} {len(df):>3}/{n} pairs ({len(df) / n:.1%}); fluency scored {fl}, twins dropped "
                     f"by it {dropped_fl}; target features detected in {detected}; {time.perf_counter() - t0:.0f} s")
        if gen == "aae":
            counts = {k[8:]: v for k, v in res.manifest["counts"].items() if k.startswith("feature:")}
            lines.append("           AAE features used: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return lines, made


def _old_markers(x: str) -> str:
    sw = swap_markers(x, to="us")  # what `markers` did before: re-swap to American, no record, no detector
    return x if sw is None else sw.text


def residual(made: dict) -> list[str]:
    sets = [("culture demo", demo_pairs("culture"), "markers"),
            ("our marker pairs (everyday questions)", made["markers"].pairs, "markers"),
            ("education demo", demo_pairs("education"), "dialect"),
            ("our AAE pairs (everyday questions)", made["aae"].pairs, "dialect"),
            ("our ESL pairs (everyday questions)", made["esl"].pairs, "dialect"),
            ("echo demo", demo_pairs("echo"), "strip")]
    lines = ["residual cues after the mitigation (detectors: find_markers with the sense check, detect_features, "
             "belief/tag patterns)"]
    for name, ps, kind in sets:
        out, checks = apply_mitigation(ps, kind)
        df = out.to_frame()
        bgs = [(str(a), str(b)) for a, b in zip(df["background_i"], df["background_j"])]
        left = sum(bool(residual_cues(kind, a, b, bg)) for a, b, bg in zip(df["x_i"], df["x_j"], bgs))
        line = (f"  {kind:<7} {name:<40} {len(ps):>3} pairs: {len(out):>3} trusted, {len(ps) - len(out):>2} dropped; "
                f"trusted pairs with a cue the detectors find: {left} (rate {left / max(len(out), 1):.3f})")
        if kind == "markers":
            src = ps.to_frame()
            old = sum(bool(find_markers(_old_markers(str(x)), "uk", include_ambiguous=True)) for x in src["x_j"])
            line += f"; the old re-swap left a British cue in {old}"
        lines.append(line)
    return lines


def main() -> None:
    t0 = time.perf_counter()
    lines = [f"pair quality benchmark ({platform.processor() or platform.machine()}); "
             f"command: PYTHONPATH=. nice python benchmarks/pair_quality.py", ""]
    for f in ("sense_sentences.jsonl", "sense_sentences_heldout.jsonl"):
        lines += senses(DATA / f) + [""]
    cov, made = coverage()
    lines += cov + [""]
    lines += residual(made) + [""]
    if fluency_available():
        fails = [q for q in made["aae"].pairs.to_frame().itertuples()
                 if not check_fluency(q.x_i, q.x_j, family="aae").fluent]
        lines.append(f"AAE twins over the fluency threshold among those kept: {len(fails)} (the builder drops them)")
    lines.append(f"total {time.perf_counter() - t0:.0f} s")
    text = "\n".join(lines) + "\n"
    (HERE / "PAIR_QUALITY.txt").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
