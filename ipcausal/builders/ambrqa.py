"""AmbrQA builder (cultural adaptation, SPEC §5): American vs British English question pairs.

Opinion half
    GlobalOpinionQA questions (Durmus et al. 2023, CC BY-NC-SA 4.0) that have both a
    "United States" and a UK answer distribution ("Britain" in the GAS part, "Great
    Britain" in the WVS part).  Either the original CSV (``question``, ``selections`` as a
    ``defaultdict(<class 'list'>, {...})`` string, ``options``, ``source``) or the 825-row
    US/UK subset used by the study.  Each prompt (question + numbered options) is made into
    a US/UK pair by :func:`~ipcausal.interventions.swap_markers` when the question already
    holds markers, else by :func:`~ipcausal.interventions.compose_with_markers` (with a
    backend) or :func:`~ipcausal.interventions.frame_with_markers` (offline, seeded).
Factual half
    Needs a backend: topics per domain, then questions per topic whose right answer depends
    on the asker's country, each composed with British markers and swapped to American.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from ipcausal.builders.cues import cue_columns
from ipcausal.builders.factual import DOMAINS, PAPER_FACTUAL_COUNTS, generate_factual_questions, read_stylish_questions
from ipcausal.builders.manifest import BuildResult, Manifest, check_record, validate_on_problem
from ipcausal.pairs import PairSet

__all__ = ["DOMAINS", "read_global_opinions", "read_stylish_questions", "build_ambrqa", "generate_factual_questions",
           "choice_prompt", "CHOICE_INSTRUCTION", "PAPER_FACTUAL_COUNTS"]

UK_KEYS = {"GAS": "Britain", "WVS": "Great Britain"}
CHOICE_INSTRUCTION = "Answer with the number of exactly one option."


def choice_prompt(question: str, options: list[str] | None) -> str:
    """The prompt sent to the model: the question, its numbered options and an instruction."""
    if not options:
        return question.strip()
    lines = [question.strip(), ""] + [f"{i}. {o}" for i, o in enumerate(options, 1)] + [CHOICE_INSTRUCTION]
    return "\n".join(lines)


def _parse_selections(raw: str) -> dict[str, list[float]]:
    s = raw.strip()
    m = re.match(r"^defaultdict\(\s*<class '[A-Za-z_]+'>\s*,\s*(.*)\)\s*$", s, re.DOTALL)
    if m:
        s = m.group(1)
    val = ast.literal_eval(s)
    if not isinstance(val, dict):
        raise ValueError("not a mapping")
    return {str(k): [float(x) for x in v] for k, v in val.items()}


def _parse_options(raw: str) -> list[str]:
    val = ast.literal_eval(raw.strip())
    if not isinstance(val, (list, tuple)) or not val:
        raise ValueError("not a non-empty list")
    return [str(o) for o in val]


def _sep_of(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as fh:
        head = fh.readline()
    return ";" if head.count(";") > head.count(",") else ","


def read_global_opinions(path: str | os.PathLike[str], manifest: Manifest | None = None) -> list[dict[str, Any]]:
    """Read a GlobalOpinionQA CSV and keep the questions with a US and a UK distribution.

    Parameters
    ----------
    path : path-like
        The CSV (original GlobalOpinionQA format or the study's US/UK subset; ``,`` or ``;``
        separated).
    manifest : Manifest, optional
        Where skipped rows are counted with their reasons.

    Returns
    -------
    list of dict
        One dict per kept question: ``item_id``, ``question``, ``options``, ``source``,
        ``uk_key``, ``dist_us``, ``dist_uk``, ``majority_us``/``majority_uk`` (1-based
        option index) and ``category`` when the file has one.

    Raises
    ------
    ValueError
        When the file is missing, lacks the columns ``question``, ``selections`` and
        ``options``, or yields no usable row.
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such file (expected a GlobalOpinionQA CSV)")
    csv.field_size_limit(1 << 26)
    try:
        with p.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter=_sep_of(p)))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{p}: not a readable CSV ({exc})") from None
    need = ("question", "selections", "options")
    cols = set(rows[0]) if rows else set()
    missing = [c for c in need if c not in cols]
    if missing:
        raise ValueError(f"{p}: expected a GlobalOpinionQA CSV with columns question, selections, options "
                         f"(and source); missing {', '.join(missing)}")
    man = manifest or Manifest("global_opinions")
    out: list[dict[str, Any]] = []
    for k, row in enumerate(rows):
        rid = str(row.get("") or row.get("Unnamed: 0") or k)
        try:
            sel = _parse_selections(row["selections"] or "")
            options = _parse_options(row["options"] or "")
        except (ValueError, SyntaxError, TypeError):
            man.skip("unparsable selections or options", f"row {k}")
            continue
        source = (row.get("source") or "").strip()
        if "United States" not in sel:
            man.skip("no 'United States' distribution")
            continue
        uk_key = UK_KEYS.get(source)
        if uk_key not in sel:
            uk_key = next((key for key in ("Britain", "Great Britain") if key in sel), None)
        if uk_key is None:
            man.skip("no UK distribution ('Britain' or 'Great Britain')")
            continue
        us, uk = sel["United States"], sel[uk_key]
        if len(us) != len(options) or len(uk) != len(options):
            man.skip("distribution length differs from the number of options", f"row {k}",
                     {"options": len(options), "us": len(us), "uk": len(uk)})
            continue
        q = " ".join((row["question"] or "").split())
        if not q:
            man.skip("empty question")
            continue
        out.append({
            "item_id": f"goqa-{rid}", "question": q, "options": options, "source": source or None,
            "uk_key": uk_key, "dist_us": us, "dist_uk": uk,
            "majority_us": int(np.argmax(us)) + 1, "majority_uk": int(np.argmax(uk)) + 1,
            "category": (row.get("category") or None),
        })
    if not out:
        raise ValueError(f"{p}: no question with both a 'United States' and a UK ('Britain'/'Great Britain') "
                         "answer distribution")
    return out


def _pair_from_prompt(prompt: str, question: str, options: list[str] | None, backend: Any, rng: np.random.Generator,
                      man: Manifest, item_id: str, max_tokens: int = 160,
                      max_attempts: int = 3) -> tuple[str, str, str, list[str]] | None:
    """(x_us, x_uk, generator, markers) for one prompt, or None (recorded in the manifest)."""
    from ipcausal.interventions import compose_with_markers, frame_with_markers, swap_markers

    to_uk = swap_markers(prompt, to="uk")
    if to_uk is not None:
        return prompt, to_uk.text, "swap_markers", [c.new for c in to_uk.swaps]
    if backend is not None:
        r = compose_with_markers(question, backend, "uk", rng=rng, max_tokens=max_tokens,
                                 max_attempts=max_attempts)
        if r.ok:
            opts_uk = [(swap_markers(o, to="uk") or _Same(o)).text for o in (options or [])]
            opts_us = [(swap_markers(o, to="us") or _Same(o)).text for o in (options or [])]
            return (choice_prompt(r.extra["us"], opts_us or None), choice_prompt(r.extra["uk"], opts_uk or None),
                    "compose_with_markers", list(r.extra["markers"]))
        man.fail(item_id, "compose_with_markers", list(r.failures))
        man.counts["compose_failed_then_framed"] += 1
    f = frame_with_markers(prompt, variety="uk", rng=rng)
    return f.extra["us"], f.extra["uk"], "frame_with_markers", list(f.extra["markers"])


def marker_allowed(x_us: str, x_uk: str, *, include_ambiguous: bool = False) -> list[tuple[str, str]]:
    """The marker substitutions between the two sides of a US/UK pair (the declared edits for check_pair).

    An indefinite article made to agree with a swapped word is part of its edit ("an apartment" → "a flat").
    """
    from ipcausal.interventions import swap_markers

    out: list[tuple[str, str]] = []
    for text, to in ((x_us, "uk"), (x_uk, "us")):
        sw = swap_markers(text, to=to, include_ambiguous=include_ambiguous)
        if sw is not None:
            out += [(c.old, c.new) for c in sw.edits]
    return out


class _Same:
    def __init__(self, text: str) -> None:
        self.text = text


def build_ambrqa(
    global_opinions: str | os.PathLike[str] | None = None,
    *,
    stylish: str | os.PathLike[str] | None = None,
    stylish_ambiguous: bool = False,
    backend: Any = None,
    limit: int | None = None,
    factual: bool | None = None,
    topics_per_domain: int = 2,
    questions_per_topic: int = 2,
    rng: int | np.random.Generator | None = 0,
    max_tokens: int = 160,
    max_attempts: int = 3,
    on_problem: str = "drop",
) -> BuildResult:
    """Build AmbrQA US/UK pairs (opinion half from a CSV, factual half with a backend).

    Parameters
    ----------
    global_opinions : path-like, optional
        GlobalOpinionQA CSV (either format); omit to build only the factual half.
    stylish : path-like, optional
        The study's folder of UK-styled factual questions (``stylish_question_by_domain``):
        builds the factual half offline from those rewrites (the study's 825 by default;
        the US side by :func:`swap_markers`; rewrites without an unambiguous marker are
        skipped and counted unless ``stylish_ambiguous=True``; explicit country words are kept and flagged in ``country_cues``).
    stylish_ambiguous : bool, default False
        Swap rewrites that hold only ambiguous markers with the ambiguous pairs too
        (``generator = "swap_markers+ambiguous"``; may change the meaning: "term" → "semester").
    backend : ipcausal.backends.Backend, optional
        Used to compose marker questions (opinion questions without markers) and for the
        factual half.  Without it the opinion half uses :func:`frame_with_markers`.
    limit : int, optional
        Keep only the first ``limit`` opinion questions.
    factual : bool, optional
        Build the factual half (default: when a backend is given).
    topics_per_domain, questions_per_topic : int
        Size of the factual half (5 domains × topics × questions).
    rng : int, numpy.random.Generator or None, default 0
        Seed for frame choice and word offers; the same seed gives the same pairs.
    max_tokens, max_attempts : int
        Per LLM generation: token limit and tries before a failure is recorded.
    on_problem : {"drop", "flag"}, default "drop"
        What to do with a pair that fails :func:`~ipcausal.interventions.check_pair` (marker
        substitutions are the declared change): drop it or keep it with ``check_problems``.

    Returns
    -------
    BuildResult
        ``.pairs``: backgrounds ``us`` (``x_i``) and ``uk`` (``x_j``); metadata columns
        ``item_id``, ``half`` (opinion/factual), ``question``, ``options`` (JSON list or
        null), ``answer_type`` (``choice`` or ``open``), ``n_options``, ``dist_us``,
        ``dist_uk`` (JSON), ``majority_us``, ``majority_uk`` (1-based option index),
        ``majority_answer_us``, ``majority_answer_uk``, ``source``, ``uk_key``,
        ``category``/``domain``, ``generator``, ``markers`` (JSON list), ``check_problems``,
        ``features_j`` and ``target_features_j`` (see :func:`~ipcausal.builders.manifest.check_record`).
        ``.manifest``: sources with SHA-256, counts, skipped items with reasons.

    Examples
    --------
    >>> from ipcausal.builders import build_ambrqa
    >>> res = build_ambrqa("source.csv", limit=10)   # doctest: +SKIP
    >>> len(res.pairs)                               # doctest: +SKIP
    10
    """
    from ipcausal.interventions import compose_with_markers
    from ipcausal._validate import as_generator

    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ValueError(f"`limit` must be a positive integer or None, got {limit!r}")
    if global_opinions is None and backend is None and stylish is None:
        raise ValueError("`global_opinions`, `stylish` or `backend` is needed: nothing to build")
    make_factual = (backend is not None and stylish is None) if factual is None else bool(factual)
    if make_factual and backend is None:
        raise ValueError("`backend` is required for the factual half (`factual=True`)")
    on_problem = validate_on_problem(on_problem)
    gen = as_generator(rng)
    seed = int(gen.integers(2**31 - 1))
    man = Manifest("ambrqa", settings={"on_problem": on_problem,
        "stylish": None if stylish is None else str(stylish), "stylish_ambiguous": stylish_ambiguous, "limit": limit, "factual": make_factual, "topics_per_domain": topics_per_domain,
        "questions_per_topic": questions_per_topic, "max_tokens": max_tokens, "max_attempts": max_attempts, "rng": rng if isinstance(rng, int) else repr(rng),
        "backend": None if backend is None else f"{getattr(backend, 'kind', '?')}:{getattr(backend, 'model', '?')}",
    })
    records: list[dict[str, Any]] = []
    if global_opinions is not None:
        items = read_global_opinions(global_opinions, man)
        man.add_source(global_opinions, role="global_opinions")
        man.counts["opinion_questions_read"] = len(items)
        if limit is not None:
            items = items[:limit]
        for it in items:
            prompt = choice_prompt(it["question"], it["options"])
            made = _pair_from_prompt(prompt, it["question"], it["options"], backend, gen, man, it["item_id"],
                                     max_tokens, max_attempts)
            if made is None:  # pragma: no cover - framing always applies
                man.skip("no marker generator applied", it["item_id"])
                continue
            x_us, x_uk, how, markers = made
            rec = {
                "pair_id": it["item_id"], "background_i": "us", "background_j": "uk", "x_i": x_us, "x_j": x_uk,
                "item_id": it["item_id"], "prompt_id": it["item_id"], "half": "opinion", "question": it["question"],
                "options": json.dumps(it["options"], ensure_ascii=False), "answer_type": "choice",
                "n_options": len(it["options"]), "dist_us": json.dumps(it["dist_us"]),
                "dist_uk": json.dumps(it["dist_uk"]), "majority_us": it["majority_us"],
                "majority_uk": it["majority_uk"], "majority_answer_us": it["options"][it["majority_us"] - 1],
                "majority_answer_uk": it["options"][it["majority_uk"] - 1], "source": it["source"],
                "uk_key": it["uk_key"], "category": it["category"], "domain": None, "generator": how,
                "markers": json.dumps(markers, ensure_ascii=False), **cue_columns(list(markers)),
            }
            if not check_record(rec, man, on_problem, marker_allowed(x_us, x_uk)):
                continue
            man.counts[f"generator:{how}"] += 1
            records.append(rec)
        man.counts["opinion_pairs"] = sum(1 for r in records if r["half"] == "opinion")
    if stylish is not None:
        from ipcausal.interventions import swap_markers
        from ipcausal.interventions import country_cues

        styled = read_stylish_questions(stylish, manifest=man)
        man.counts["stylish_questions_read"] = len(styled)
        for q in styled:
            us, how = swap_markers(q["uk"], to="us"), "swap_markers"
            if us is None and stylish_ambiguous:  # many rewrites use only ambiguous markers (holiday, flat)
                us, how = swap_markers(q["uk"], to="us", include_ambiguous=True), "swap_markers+ambiguous"
            if us is None:
                man.skip("UK-styled rewrite has no unambiguous marker to swap", q["item_id"])
                continue
            cues = country_cues(q["uk"])
            rec = {
                "pair_id": q["item_id"], "background_i": "us", "background_j": "uk", "x_i": us.text, "x_j": q["uk"],
                "item_id": q["item_id"], "prompt_id": q["item_id"], "half": "factual", "question": q["question"], "options": None,
                "answer_type": "open", "n_options": None, "dist_us": None, "dist_uk": None, "majority_us": None,
                "majority_uk": None, "majority_answer_us": None, "majority_answer_uk": None, "source": "stylish",
                "uk_key": None, "category": None, "domain": q["domain"], "generator": how,
                "markers": json.dumps([c.old for c in us.swaps], ensure_ascii=False),
                **cue_columns([c.old for c in us.swaps]),
                "country_cues": json.dumps(cues) if cues else None,
            }
            if not check_record(rec, man, on_problem, [(c.old, c.new) for c in us.swaps]):
                continue
            man.counts[f"generator:{how}"] += 1
            if cues:
                man.counts["warning:stylish_with_country_cue"] += 1
            records.append(rec)
        man.counts["stylish_pairs"] = sum(1 for r in records if r["source"] == "stylish")
    if make_factual:
        qs = generate_factual_questions(backend, topics_per_domain=topics_per_domain,
                                        questions_per_topic=questions_per_topic, rng=seed, manifest=man,
                                        max_tokens=max(max_tokens, 120))
        man.counts["factual_questions_generated"] = len(qs)
        for q in qs:
            r = compose_with_markers(q["question"], backend, "uk", rng=gen, max_tokens=max_tokens,
                                     max_attempts=max_attempts)
            if not r.ok:
                man.skip("compose_with_markers failed validation", q["item_id"], list(r.failures))
                continue
            rec = {
                "pair_id": q["item_id"], "background_i": "us", "background_j": "uk", "x_i": r.extra["us"],
                "x_j": r.extra["uk"], "item_id": q["item_id"], "prompt_id": q["item_id"], "half": "factual", "question": q["question"],
                "options": None, "answer_type": "open", "n_options": None, "dist_us": None, "dist_uk": None,
                "majority_us": None, "majority_uk": None, "majority_answer_us": None, "majority_answer_uk": None,
                "source": "llm", "uk_key": None, "category": None, "domain": q["domain"],
                "generator": "compose_with_markers", "markers": json.dumps(r.extra["markers"], ensure_ascii=False),
                **cue_columns(list(r.extra["markers"])),
            }
            if check_record(rec, man, on_problem, marker_allowed(rec["x_i"], rec["x_j"])):
                records.append(rec)
        man.counts["factual_pairs"] = sum(1 for r in records if r["half"] == "factual")
    if not records:
        raise ValueError("no AmbrQA pair could be made; see the manifest's skipped reasons")
    man.counts["pairs"] = len(records)
    return BuildResult(PairSet.from_records(records), man.to_dict())
