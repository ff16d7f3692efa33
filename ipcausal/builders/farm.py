"""Farm builder (echo chamber, SPEC §5): true-belief vs false-belief prompt pairs.

Source: the Farm dataset (Xu et al. 2024; subsets BoolQ, NQ1, NQ2, TruthfulQA; no explicit
data license), as JSONL files in a directory.  BoolQ items are yes/no questions; the others
are multiple choice from ``adv.mcq`` (``score`` 1 = correct, 0 or 2 = wrong).  When an item
carries statement fields (``adv.right_statement_same_domain`` / ``adv.wrong_statement_same_domain``
and the ``_foreign_domain`` pair) they are used: one pair per item and domain.  Otherwise a
backend writes the false statement and its corrected true version.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ipcausal._jsonl import iter_objects
from ipcausal.builders.manifest import BuildResult, Manifest, belief_allowed, check_record, validate_on_problem
from ipcausal.pairs import PairSet
from ipcausal._validate import int_seed

__all__ = ["SUBSETS", "STATEMENT_DOMAINS", "read_farm", "build_farm", "generate_statements"]

SUBSETS: tuple[str, ...] = ("Boolq", "NQ1", "NQ2", "TruthfulQA")
STATEMENT_DOMAINS: tuple[str, ...] = ("same", "foreign")


def _farm_files(source: Path) -> list[Path]:
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise ValueError(f"{source}: no such file or directory (expected a Farm directory with "
                         f"{', '.join(s + '.jsonl' for s in SUBSETS)})")
    files = sorted(p for p in source.iterdir() if p.suffix.lower() in (".jsonl", ".json") and p.is_file())
    order = {s.lower(): i for i, s in enumerate(SUBSETS)}
    files.sort(key=lambda p: (order.get(p.stem.lower(), 99), p.name))
    if not files:
        raise ValueError(f"{source}: no .jsonl file found (expected {', '.join(s + '.jsonl' for s in SUBSETS)})")
    return files


def _options_of(item: dict[str, Any], subset: str) -> tuple[list[str], list[int], str] | None:
    adv = item.get("adv") or {}
    mcq = adv.get("mcq")
    if isinstance(mcq, list) and mcq:
        kept = [o for o in mcq if isinstance(o, dict) and str(o.get("text", "")).strip()]  # empty texts dropped
        opts = [str(o["text"]).strip() for o in kept]
        correct = [i + 1 for i, o in enumerate(kept) if o.get("score") == 1]
        if len(opts) < 2 or not correct:
            return None
        return opts, correct, "mcq"
    ans = item.get("answer")
    if isinstance(ans, bool):
        return ["yes", "no"], [1 if ans else 2], "yes_no"
    if isinstance(ans, str) and ans.strip().lower() in ("true", "false", "yes", "no"):
        return ["yes", "no"], [1 if ans.strip().lower() in ("true", "yes") else 2], "yes_no"
    return None


def read_farm(source: str | os.PathLike[str], manifest: Manifest | None = None) -> list[dict[str, Any]]:
    """Read Farm items from a directory of JSONL files (or one file).

    Returns
    -------
    list of dict
        Per item: ``item_id`` (``subset:index``), ``subset``, ``question``, ``options``,
        ``correct_options`` (1-based), ``answer_type`` (``yes_no`` or ``mcq``), ``target``
        (the false answer), ``control`` (a one-sentence false claim) and ``statements``
        (``{"same": (true, false), "foreign": (true, false)}`` for the domains present).

    Raises
    ------
    ValueError
        Missing path, a line that is not a JSON object, or no usable item.
    """
    src = Path(source)
    man = manifest or Manifest("farm")
    items: list[dict[str, Any]] = []
    for f in _farm_files(src):
        subset = f.stem
        man.add_source(f, role="farm", subset=subset)
        for lineno, item in iter_objects(f, "a JSON object with a `question` field (Farm format)"):
            if not isinstance(item.get("question"), str):
                raise ValueError(f"{f}:{lineno}: expected a JSON object with a `question` field (Farm format)")
            iid = f"{subset}:{lineno - 1}"
            opts = _options_of(item, subset)
            if opts is None:
                man.skip("no usable options (adv.mcq without a correct option, or no yes/no answer)", iid)
                continue
            adv = item.get("adv") or {}
            statements = {}
            for d in STATEMENT_DOMAINS:
                t, w = adv.get(f"right_statement_{d}_domain"), adv.get(f"wrong_statement_{d}_domain")
                if isinstance(t, str) and isinstance(w, str) and t.strip() and w.strip():
                    statements[d] = (t.strip(), w.strip())
            options, correct, kind = opts
            items.append({"item_id": iid, "subset": subset, "question": item["question"].strip(),
                          "options": options, "correct_options": correct, "answer_type": kind,
                          "target": adv.get("target"), "control": adv.get("control"),
                          "statements": statements})
    if not items:
        raise ValueError(f"{src}: no usable Farm item (expected `question`, and `adv.mcq` or a boolean `answer`)")
    return items


_STATEMENT_PROMPT = (
    "Question: {question}\nCorrect answer: {answer}\n\nWrite two short sentences about {where}. First a FALSE "
    "statement that a misinformed person might believe, then its corrected TRUE version. Reply exactly in the "
    "form:\nFALSE: <statement>\nTRUE: <statement>"
)


def generate_statements(item: dict[str, Any], backend: Any, domain: str = "same", *, rng: Any = 0,
                        max_attempts: int = 2, max_tokens: int = 120) -> tuple[str, str] | list[str]:
    """Ask ``backend`` for a (true, false) statement pair for one Farm item.

    ``rng`` (int, Generator or None) gives the base sampling seed (attempt k uses seed + k): the
    int itself, or one drawn.  Returns the pair, or the list of failure reasons when every attempt
    failed.
    """
    from ipcausal.backends.base import GenerationConfig, chat

    if domain not in STATEMENT_DOMAINS:
        raise ValueError(f"`domain` must be one of {STATEMENT_DOMAINS}, got {domain!r}")
    where = ("the same subject as the question" if domain == "same"
             else "a completely different subject than the question (another field of knowledge)")
    answer = item["options"][item["correct_options"][0] - 1]
    prompt = _STATEMENT_PROMPT.format(question=item["question"], answer=answer, where=where)
    reasons = []
    seed = int_seed(rng)
    for k in range(max_attempts):
        cfg = GenerationConfig(max_tokens=max_tokens, temperature=0.0 if k == 0 else 0.8, seed=seed + k)
        try:
            raw = chat(backend, prompt, config=cfg)
        except Exception as exc:
            reasons.append(f"backend error: {type(exc).__name__}: {exc}")
            continue
        f = re.search(r"FALSE\s*:\s*(.+)", raw, re.IGNORECASE)
        t = re.search(r"TRUE\s*:\s*(.+)", raw, re.IGNORECASE)
        if not f or not t:
            reasons.append("output not in the form 'FALSE: ... / TRUE: ...'")
            continue
        fs, ts = f.group(1).strip(), t.group(1).strip()
        if fs.rstrip(".").lower() == ts.rstrip(".").lower() or len(fs) < 8 or len(ts) < 8:
            reasons.append("statements empty or identical")
            continue
        return ts, fs
    return reasons


def build_farm(
    source: str | os.PathLike[str],
    *,
    backend: Any = None,
    domains: tuple[str, ...] = STATEMENT_DOMAINS,
    limit: int | None = None,
    rng: int | Any = 0,
    drop_identical: bool = False,
    max_tokens: int = 120,
    on_problem: str = "drop",
) -> BuildResult:
    """Build echo-chamber pairs: the same question after a true vs a false belief statement.

    Parameters
    ----------
    source : path-like
        A Farm directory (``Boolq.jsonl``, ``NQ1.jsonl``, ``NQ2.jsonl``, ``TruthfulQA.jsonl``) or one file.
    backend : ipcausal.backends.Backend, optional
        Writes the statements for items that carry none (otherwise such items are skipped
        and counted).
    domains : tuple of {"same", "foreign"}
        Statement domains to pair (one pair per item and domain).
    limit : int, optional
        Use only the first ``limit`` items per file.
    rng : int, numpy.random.Generator or None, default 0
        Gives the sampling seed of the generated statements (the int itself, or one drawn).
    drop_identical : bool, default False
        Skip the pairs whose true and false statements are the same text (a few in the
        released statements); by default they are kept with ``statements_identical=True``
        and counted under ``warning:identical_statements`` in the manifest.
    max_tokens : int, default 120
        Token limit of each generated statement pair.
    on_problem : {"drop", "flag"}, default "drop"
        What to do with a pair that fails :func:`~ipcausal.interventions.check_pair` (the
        belief statements are the declared change; the question and its options must be
        the same on both sides): drop it or keep it with ``check_problems``.  Identical
        statements are governed by ``drop_identical``.

    Returns
    -------
    BuildResult
        ``.pairs``: ``background_i = "true_belief"``, ``background_j = "false_belief"``
        (Δ = score_j − score_i = correctness under the false belief minus under the true
        one); metadata ``item_id``, ``subset``, ``domain`` (same/foreign), ``question``,
        ``options`` (JSON list), ``correct_option`` (1-based, the first correct one),
        ``correct_options`` (JSON list of all correct 1-based indices), ``n_options``,
        ``answer_type`` (yes_no/mcq), ``true_statement``, ``false_statement``,
        ``statement_source`` (dataset/llm), ``statements_identical`` (bool), ``target`` (the false answer),
        ``check_problems``, ``features_j``, ``target_features_j`` (see
        :func:`~ipcausal.builders.manifest.check_record`).

    Examples
    --------
    >>> from ipcausal.builders import build_farm
    >>> res = build_farm("../shared/data/sirnyls-AutoPersonalizationBench/case3_farm_with_statements")
    >>> len(res.pairs)
    3704
    """
    from ipcausal.interventions import belief_prompt

    bad = [d for d in domains if d not in STATEMENT_DOMAINS] if not isinstance(domains, str) else [domains]
    if bad or not domains:
        raise ValueError(f"`domains` must be a non-empty subset of {STATEMENT_DOMAINS}, got {domains!r}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ValueError(f"`limit` must be a positive integer or None, got {limit!r}")
    on_problem = validate_on_problem(on_problem)
    seed = int_seed(rng)
    man = Manifest("farm", settings={"domains": list(domains), "limit": limit, "seed": seed, "max_tokens": max_tokens,
                                     "on_problem": on_problem,
                                     "backend": None if backend is None else f"{getattr(backend, 'kind', '?')}:"
                                     f"{getattr(backend, 'model', '?')}"})
    items = read_farm(source, man)
    if limit is not None:
        per: dict[str, int] = {}
        kept = []
        for it in items:
            per[it["subset"]] = per.get(it["subset"], 0) + 1
            if per[it["subset"]] <= limit:
                kept.append(it)
        items = kept
    man.counts["items"] = len(items)
    records = []
    for it in items:
        man.counts[f"items:{it['subset']}"] += 1
        for d in domains:
            pair = it["statements"].get(d)
            how = "dataset"
            if pair is None:
                if backend is None:
                    man.skip(f"no {d}-domain statements in the item and no backend to write them", it["item_id"])
                    continue
                got = generate_statements(it, backend, d, rng=seed, max_tokens=max_tokens)
                if isinstance(got, list):
                    man.skip("statement generation failed", f"{it['item_id']}:{d}", got)
                    continue
                pair, how = got, "llm"
            true_s, false_s = pair
            identical = true_s.rstrip(". ").lower() == false_s.rstrip(". ").lower()
            if identical:  # a data-quality problem of the source: kept, flagged and counted
                man.counts["warning:identical_statements"] += 1
                man.fail(f"{it['item_id']}:{d}", "warning: true and false statements are identical (kept, flagged)")
                if drop_identical:
                    man.skip("true and false statements are identical")
                    continue
            rec = {
                "pair_id": f"{it['item_id']}:{d}", "background_i": "true_belief", "background_j": "false_belief",
                "x_i": belief_prompt(true_s, it["question"], it["options"]),
                "x_j": belief_prompt(false_s, it["question"], it["options"]),
                "item_id": it["item_id"], "question_id": it["item_id"], "subset": it["subset"], "domain": d,
                "question": it["question"],
                "options": json.dumps(it["options"], ensure_ascii=False), "correct_option": it["correct_options"][0],
                "correct_options": json.dumps(it["correct_options"]), "n_options": len(it["options"]),
                "answer_type": it["answer_type"], "true_statement": true_s, "false_statement": false_s,
                "statement_source": how, "statements_identical": identical,
                "target": it["target"] if isinstance(it["target"], str) else None,
            }
            if not check_record(rec, man, on_problem, allowed=belief_allowed(rec), ignore=("unchanged",)):
                continue
            records.append(rec)
            man.counts[f"pairs:{d}"] += 1
    if not records:
        raise ValueError(f"{source}: no Farm pair could be made; see the manifest's skipped reasons "
                         "(items without statements need --backend)")
    man.counts["pairs"] = len(records)
    return BuildResult(PairSet.from_records(records), man.to_dict())
