"""The factual half of AmbrQA: LLM-generated questions, or the study's UK-styled rewrites."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path
from typing import Any

from ipcausal.builders.manifest import Manifest
from ipcausal._validate import int_seed

__all__ = ["DOMAINS", "PAPER_FACTUAL_COUNTS", "read_stylish_questions", "generate_factual_questions"]

DOMAINS: tuple[str, ...] = ("economy", "lifestyle", "media & technology", "politics", "social dynamics")
PAPER_FACTUAL_COUNTS: dict[str, int] = {"Lifestyle": 310, "Economy": 90, "Media & Technology": 242,
                                        "Social Dynamics": 183}
"""The study's 825 factual questions: the first N UK-styled rewrites of each domain file."""


def read_stylish_questions(
    folder: str | os.PathLike[str],
    per_domain: dict[str, int] | None = None,
    manifest: Manifest | None = None,
) -> list[dict[str, Any]]:
    """Read the study's UK-styled factual questions (``stylish_question_by_domain/<Domain>.csv``).

    Parameters
    ----------
    folder : path-like
        The folder with one CSV per domain (columns ``domain``, ``topic``, ``question``,
        ``formatted_response`` = the UK-styled question).
    per_domain : dict, optional
        How many rows to take from the top of each domain file; default
        :data:`PAPER_FACTUAL_COUNTS` (the study's 825).  ``{}`` takes every row.
    manifest : Manifest, optional
        Records the source files and the skipped rows.

    Returns
    -------
    list of dict
        ``item_id``, ``domain``, ``topic``, ``question`` (the neutral one), ``uk`` (styled).
    """
    folder_p = Path(folder)
    if not folder_p.is_dir():
        raise ValueError(f"{folder_p}: no such directory (expected stylish_question_by_domain/<Domain>.csv files)")
    counts = PAPER_FACTUAL_COUNTS if per_domain is None else per_domain
    man = manifest or Manifest("stylish")
    files = sorted(folder_p.glob("*.csv"))
    if not files:
        raise ValueError(f"{folder_p}: no .csv file (expected one file per domain)")
    csv.field_size_limit(1 << 26)
    out: list[dict[str, Any]] = []
    for f in files:
        with f.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        if rows and not {"question", "formatted_response"} <= set(rows[0]):
            raise ValueError(f"{f}: expected columns question, formatted_response (a UK-styled rewrite per row)")
        take = counts.get(f.stem, 0 if counts else len(rows)) if counts else len(rows)
        if take > len(rows):
            raise ValueError(f"{f}: {take} rows wanted, the file has {len(rows)}")
        man.add_source(f, role="stylish_questions", rows_used=take)
        for k, row in enumerate(rows[:take]):
            uk = " ".join((row.get("formatted_response") or "").split())
            if not uk:
                man.skip("empty UK-styled rewrite", f"{f.stem}:{k}")
                continue
            out.append({"item_id": f"stylish-{f.stem}-{k}", "domain": row.get("domain") or f.stem,
                        "topic": row.get("topic"), "question": " ".join((row.get("question") or "").split()),
                        "uk": uk})
    return out


def generate_factual_questions(backend: Any, *, domains: tuple[str, ...] = DOMAINS, topics_per_domain: int = 2,
                               questions_per_topic: int = 2, rng: Any = 0, manifest: Manifest | None = None,
                               max_tokens: int = 200) -> list[dict[str, Any]]:
    """LLM-generated factual questions whose right answer differs for American and British users.

    Two steps per domain: topics (one per line), then questions per topic (one per line,
    ending with '?').  Unparsable or empty outputs are recorded in ``manifest``.  ``rng`` (int,
    Generator or None) gives the sampling seed sent to the backend: the int itself, or one drawn.

    Returns
    -------
    list of dict
        ``{"item_id", "domain", "topic", "question"}`` per question.
    """
    from ipcausal.backends.base import GenerationConfig, chat

    for name, v in (("topics_per_domain", topics_per_domain), ("questions_per_topic", questions_per_topic)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"`{name}` must be a positive integer, got {v!r}")
    man = manifest or Manifest("factual")
    cfg = GenerationConfig(max_tokens=max_tokens, temperature=0.0, seed=int_seed(rng))
    out: list[dict[str, Any]] = []
    for d in domains:
        raw = chat(backend, f"List {topics_per_domain} everyday topics about {d} on which daily life differs "
                            "between two English-speaking countries. Do not name any country. Give one short "
                            "topic (at most four words) per line and nothing else.", config=cfg)
        topics = [t for t in (_strip_item(x) for x in raw.splitlines()) if t and len(t.split()) <= 8][:topics_per_domain]
        if not topics:
            man.fail(d, "generate_topics", raw[:300])
            man.skip("no topic parsed from the model output")
            continue
        for t in topics:
            raw_q = chat(backend, f"Write {questions_per_topic} short factual questions about {t} ({d}) whose correct "
                                  "answer depends on which English-speaking country the person asking lives in. Do "
                                  "not name any country. One question per line, each ending with a question mark.",
                         config=cfg)
            qs = [q for q in (_strip_item(x) for x in raw_q.splitlines()) if q.endswith("?") and len(q) > 12]
            if not qs:
                man.fail(f"{d}/{t}", "generate_questions", raw_q[:300])
                man.skip("no question parsed from the model output")
                continue
            for q in qs[:questions_per_topic]:
                out.append({"item_id": f"factual-{len(out) + 1:04d}", "domain": d, "topic": t, "question": q})
    return out


def _strip_item(line: str) -> str:
    return re.sub(r"^\s*(?:[-*•]|\d+[.)]|[A-Za-z][.)])\s*", "", line).strip().strip('"').strip()


