"""Write benchmarks/data/fluency_pairs.jsonl: twins labelled good or bad, for the fluency threshold.

good: twins our generators made from our own texts (benchmarks/data/everyday_questions.txt and the
marker-sense sentences of benchmarks/data/sense_sentences.jsonl), each read and accepted by us;
bad: twins spoiled on purpose, one per kind of failure a generator can have:
  wrong_sense  a marker swap of a word read in its other sense ("Tin you ...", "autumn back")
  doubled      a word written twice ("the the")
  dropped      a content word left out
  order        two neighbouring words exchanged
  shuffled     every word of the sentence in a random order

Run: PYTHONPATH=. python benchmarks/make_fluency_pairs.py   (seeded: the same file every time)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ipcausal.interventions import aae_features, esl_errors, marker_lexicon, swap_markers

DATA = Path(__file__).resolve().parent / "data"
_FUNCTION = {"a", "an", "the", "to", "of", "in", "on", "for", "is", "are", "do", "does", "i", "you", "my", "and",
             "or", "at", "it", "can", "how", "what", "why", "where", "when", "which", "should", "with"}


def _words(text: str) -> list[re.Match[str]]:
    return list(re.finditer(r"[A-Za-z][A-Za-z'’-]*", text))


def corrupt(text: str, kind: str, rng: np.random.Generator) -> str | None:
    ws = _words(text)
    content = [m for m in ws if m.group(0).lower() not in _FUNCTION and len(m.group(0)) > 3]
    if kind == "doubled" and ws:
        m = ws[int(rng.integers(len(ws)))]
        return text[:m.end()] + " " + m.group(0).lower() + text[m.end():]
    if kind == "dropped" and content:
        m = content[int(rng.integers(len(content)))]
        return (text[:m.start()] + text[m.end():].lstrip(" ")).replace("  ", " ")
    if kind == "order" and len(ws) > 3:
        k = int(rng.integers(1, len(ws) - 1))
        a, b = ws[k], ws[k + 1]
        return text[:a.start()] + b.group(0) + text[a.end():b.start()] + a.group(0) + text[b.end():]
    if kind == "shuffled" and len(ws) > 3:
        order = [m.group(0) for m in ws]
        rng.shuffle(order)
        out = " ".join(order).lower()
        return out[:1].upper() + out[1:] + ("?" if text.rstrip().endswith("?") else ".")
    return None


def wrong_sense(row: dict, counterpart: dict[tuple[str, str], str]) -> str | None:
    """The swap the sense check refuses: the labelled word replaced by its counterpart regardless of sense."""
    target = counterpart.get((row["read"], row["word"]))
    if target is None:
        return None
    m = re.search(rf"(?<![\w]){re.escape(row['word'])}(?![\w])", row["text"], re.IGNORECASE)
    if m is None:
        return None
    new = target[:1].upper() + target[1:] if m.group(0)[:1].isupper() else target
    return row["text"][:m.start()] + new + row["text"][m.end():]


def main() -> None:
    rng = np.random.default_rng(29)
    questions = [q.strip() for q in (DATA / "everyday_questions.txt").read_text().splitlines() if q.strip()]
    senses = [json.loads(line) for line in (DATA / "sense_sentences.jsonl").read_text().splitlines()]
    lex = marker_lexicon()
    counterpart = {}
    for r in lex.itertuples():
        counterpart.setdefault(("us", r.us.lower()), r.uk)
        counterpart.setdefault(("uk", r.uk.lower()), r.us)
    rows = []

    def add(family: str, source: str, twin: str | None, label: str, kind: str) -> None:
        if twin and twin != source:
            rows.append({"id": f"f{len(rows) + 1:04d}", "family": family, "label": label, "kind": kind,
                         "source": source, "twin": twin})

    for r in senses:  # marker twins: the swap of the marker sense (good), of the other sense (bad)
        to = "uk" if r["read"] == "us" else "us"
        if r["sense"] == "marker":
            sw = swap_markers(r["text"], to=to)
            add("markers", r["text"], sw.text if sw else None, "good", "swap")
        else:
            add("markers", r["text"], wrong_sense(r, counterpart), "bad", "wrong_sense")
    for q in questions:
        sw = swap_markers(q, to="uk")
        add("markers", q, sw.text if sw else None, "good", "swap")
    kinds = ("doubled", "dropped", "order", "shuffled")
    for k, q in enumerate(questions):
        a = aae_features(q, rng=np.random.default_rng([29, k]), questions=True)
        e = esl_errors(q, rng=np.random.default_rng([29, k]), n_errors=2)
        if a is not None:
            add("aae", q, a.text, "good", "rules")
            add("aae", q, corrupt(a.text, kinds[k % 4], rng), "bad", kinds[k % 4])
        if e is not None:
            add("esl", q, e.text, "good", "rules")
            add("esl", q, corrupt(e.text, kinds[(k + 1) % 4], rng), "bad", kinds[(k + 1) % 4])
        add("markers", q, corrupt(q, kinds[(k + 2) % 4], rng), "bad", kinds[(k + 2) % 4])
    out = DATA / "fluency_pairs.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} labelled pairs to {out}")


if __name__ == "__main__":
    main()
