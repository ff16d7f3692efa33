"""Essays builder (education disparity, SPEC §5): SAE vs AAE vs ESL essay-prompt pairs.

The user supplies the Standard American English (SAE) prompts (the study's GRE/TOEFL pools
are copyrighted and never shipped).  Each prompt is rewritten into African-American
English (``aae``: LLM style transfer, or the offline seeded rules of
:func:`~ipcausal.interventions.aae_features` with ``aae_rules=True``) and into ESL English
(``esl``: LLM style transfer, or the offline seeded rules of
:func:`~ipcausal.interventions.esl_errors` with ``esl_rules=True``).  Every available pair
of styles becomes a pair: SAE–AAE, SAE–ESL, AAE–ESL.  Both prompts of a pair are wrapped in
the same essay instruction.  Every pair is checked (:func:`~ipcausal.interventions.check_pair`,
the rule-based edits declared as allowed) and the features of ``x_j`` are recorded.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ipcausal._jsonl import iter_objects
from ipcausal.builders.manifest import BuildResult, Manifest, check_record, validate_on_problem
from ipcausal.pairs import PairSet

__all__ = ["ESSAY_INSTRUCTION", "ALL_STYLES", "read_prompts", "build_essays", "essay_pairs_from_prompts"]

ESSAY_INSTRUCTION = "Write an essay of 300 to 350 words in response to the following prompt.\n\n{prompt}"
ALL_STYLES: tuple[str, ...] = ("sae", "aae", "esl")
_TEXT_KEYS = ("prompt", "text", "question", "essay_prompt")


def read_prompts(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """Read SAE prompts from ``.jsonl`` (field prompt/text/question, optional id), ``.csv`` or ``.txt``.

    Returns
    -------
    list of dict
        ``{"prompt_id", "prompt"}`` per non-empty prompt, in file order.

    Raises
    ------
    ValueError
        Missing file, unknown suffix, or no prompt field / no prompt at all.
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such file (expected SAE essay prompts as .jsonl, .csv or .txt)")
    suffix = p.suffix.lower()
    rows: list[dict[str, Any]]
    if suffix in (".jsonl", ".ndjson"):
        rows = [obj for _, obj in iter_objects(p, "a JSON object with a `prompt` field on each line")]
    elif suffix == ".csv":
        with p.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    elif suffix == ".txt":
        rows = [{"prompt": line} for line in p.read_text(encoding="utf-8").splitlines()]
    else:
        raise ValueError(f"{p}: unknown prompt file type {suffix!r} (expected .jsonl, .csv or .txt)")
    out = []
    for k, row in enumerate(rows):
        key = next((c for c in _TEXT_KEYS if c in row), None)
        if key is None:
            raise ValueError(f"{p}: row {k + 1} has no prompt field (expected one of {', '.join(_TEXT_KEYS)})")
        text = " ".join(str(row[key] or "").split())
        if not text:
            continue
        pid = str(row.get("id") or row.get("prompt_id") or row.get("index") or k)
        out.append({"prompt_id": pid, "prompt": text})
    if not out:
        raise ValueError(f"{p}: no essay prompt found")
    return out


def _parse_styles(styles: Any) -> tuple[str, ...]:
    if isinstance(styles, str):
        styles = [s.strip() for s in styles.split(",") if s.strip()]
    if not isinstance(styles, (list, tuple)) or not styles:
        raise ValueError(f"`styles` must be a non-empty list of {('aae', 'esl')}, got {styles!r}")
    bad = [s for s in styles if s not in ("aae", "esl")]
    if bad:
        raise ValueError(f"`styles` must be drawn from ('aae', 'esl'); unknown {bad}")
    return tuple(s for s in ("aae", "esl") if s in styles)


def essay_pairs_from_prompts(
    prompts: list[dict[str, str]],
    *,
    styles: tuple[str, ...] | list[str] | str = ("aae", "esl"),
    backend: Any = None,
    esl_rules: bool = False,
    n_errors: int = 3,
    rng: int | np.random.Generator | None = 0,
    instruction: str = ESSAY_INSTRUCTION,
    manifest: Manifest | None = None,
    max_tokens: int = 256,
    max_attempts: int = 3,
    aae_rules: bool = False,
    n_features: int | None = None,
    on_problem: str = "drop",
    per_item_seed: bool = False,
) -> list[dict[str, Any]]:
    """The pair records for ``prompts`` (the work behind :func:`build_essays` and the demo).

    With ``per_item_seed=True`` the rule-based rewrites of prompt k use the seed
    ``(rng, k)`` (``rng`` an int), so a prompt's pairs do not depend on which other prompts
    are built (the demo uses this: its first 20 prompts give the same pairs as all 32).
    """
    from ipcausal.interventions import aae_features, esl_errors, style_transfer
    from ipcausal._validate import as_generator

    sty = _parse_styles(styles)
    for name, flag in (("esl_rules", esl_rules), ("aae_rules", aae_rules), ("per_item_seed", per_item_seed)):
        if not isinstance(flag, bool):
            raise TypeError(f"`{name}` must be a bool")
    on_problem = validate_on_problem(on_problem)
    needs_llm = [s for s in sty if (s == "aae" and not aae_rules) or (s == "esl" and not esl_rules)]
    if needs_llm and backend is None:
        raise ValueError(f"style(s) {needs_llm} need a `backend` (an LLM rewrites the prompts); pass one, "
                         "drop them from `styles`, or use `aae_rules=True` / `esl_rules=True` for the offline rules")
    if per_item_seed and not (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        raise TypeError("`rng` must be an int seed when `per_item_seed=True`")
    if not isinstance(instruction, str) or "{prompt}" not in instruction:
        raise ValueError("`instruction` must be a str containing '{prompt}'")
    gen = as_generator(rng)
    seed = int(gen.integers(2**31 - 1))
    man = manifest or Manifest("essays")
    records = []
    for k, item in enumerate(prompts):
        pid, sae = item["prompt_id"], item["prompt"]
        texts: dict[str, str] = {"sae": sae}
        info: dict[str, dict[str, Any]] = {"sae": {"generator": "source"}}
        item_gen = np.random.default_rng([int(rng), k]) if per_item_seed else gen  # type: ignore[arg-type]
        for s in sty:
            if s == "aae" and aae_rules:
                a = aae_features(sae, rng=item_gen, n_features=n_features)
                if a is None:
                    man.skip("aae_features found no place for an AAE feature", f"{pid}:aae")
                    continue
                texts[s] = a.text
                info[s] = {"generator": "aae_features", "edits": [list(e) for e in a.edits]}
            elif s == "esl" and esl_rules:
                r = esl_errors(sae, rng=item_gen, n_errors=n_errors)
                if r is None or len(r.edits) < min(n_errors, 3):
                    man.skip("esl_errors found too few places for errors", f"{pid}:esl",
                             None if r is None else [list(e) for e in r.edits])
                    continue
                texts[s] = r.text
                info[s] = {"generator": "esl_errors", "edits": [list(e) for e in r.edits]}
            else:
                g = style_transfer(sae, backend, s, n_errors=n_errors, rng=seed, max_tokens=max_tokens,
                                   max_attempts=max_attempts)
                if not g.ok:
                    man.skip(f"style_transfer:{s} failed validation", f"{pid}:{s}", list(g.failures))
                    continue
                texts[s] = g.text
                info[s] = {"generator": g.generator, "similarity": g.similarity, "attempts": g.attempts}
            man.counts[f"rewrites:{s}"] += 1
        for a, b in itertools.combinations(ALL_STYLES, 2):
            if a not in texts or b not in texts:
                if (a == "sae" or a in sty) and b in sty:
                    man.skip(f"pair {a}-{b} incomplete (a rewrite failed)")
                continue
            rec = {
                "pair_id": f"{pid}:{a}-{b}", "background_i": a, "background_j": b,
                "x_i": instruction.format(prompt=texts[a]), "x_j": instruction.format(prompt=texts[b]),
                "prompt_id": pid, "style_i": a, "style_j": b, "prompt_i": texts[a], "prompt_j": texts[b],
                "prompt_sae": sae, "generator_i": info[a]["generator"], "generator_j": info[b]["generator"],
                "edits_i": json.dumps(info[a].get("edits")) if "edits" in info[a] else None,
                "edits_j": json.dumps(info[b].get("edits")) if "edits" in info[b] else None,
                "similarity_i": info[a].get("similarity"), "similarity_j": info[b].get("similarity"),
            }
            allowed = [tuple(e[-2:]) for e in (info[a].get("edits") or []) + (info[b].get("edits") or [])]
            if not check_record(rec, man, on_problem, allowed):
                continue
            records.append(rec)
            man.counts[f"pairs:{a}-{b}"] += 1
    return records


def build_essays(
    prompts: str | os.PathLike[str],
    *,
    styles: tuple[str, ...] | list[str] | str = ("aae", "esl"),
    backend: Any = None,
    esl_rules: bool = False,
    n_errors: int = 3,
    limit: int | None = None,
    rng: int | np.random.Generator | None = 0,
    instruction: str = ESSAY_INSTRUCTION,
    max_tokens: int = 256,
    max_attempts: int = 3,
    aae_rules: bool = False,
    n_features: int | None = None,
    on_problem: str = "drop",
) -> BuildResult:
    """Build SAE/AAE/ESL essay-prompt pairs from the user's SAE prompt file.

    Parameters
    ----------
    prompts : path-like
        ``.jsonl`` / ``.csv`` / ``.txt`` file of SAE prompts (see :func:`read_prompts`).
    styles : sequence of {"aae", "esl"} or comma-separated str
        Styles to make besides SAE.
    backend : ipcausal.backends.Backend, optional
        Needed for ``aae`` unless ``aae_rules=True`` and for ``esl`` unless ``esl_rules=True``.
    esl_rules : bool, default False
        Make the ESL side with the offline, seeded :func:`esl_errors` rules.
    n_errors : int, default 3
        Learner errors per ESL prompt (the study asks for more than two).
    limit : int, optional
        Use only the first ``limit`` prompts.
    rng : int, numpy.random.Generator or None, default 0
        Seed for the rule-based errors and the LLM sampling seed.
    instruction : str
        Essay instruction wrapped around every prompt (must contain ``{prompt}``).
    max_tokens, max_attempts : int
        Per LLM rewrite: generation limit and tries before the failure is recorded.
    aae_rules : bool, default False
        Make the AAE side with the offline, seeded :func:`aae_features` rules.
    n_features : int, optional
        AAE edits per prompt with ``aae_rules`` (default: every one that fits).
    on_problem : {"drop", "flag"}, default "drop"
        A pair that fails :func:`~ipcausal.interventions.check_pair` is dropped (counted
        under ``skipped``) or kept with its problems in ``check_problems``; the manifest's
        ``checks`` counts pairs by result either way.

    Returns
    -------
    BuildResult
        ``.pairs`` with backgrounds from ``sae``/``aae``/``esl`` and metadata ``prompt_id``,
        ``style_i``, ``style_j``, ``prompt_i``, ``prompt_j`` (the bare prompts),
        ``prompt_sae``, ``generator_i/_j``, ``edits_i/_j`` (JSON, rule-based ESL),
        ``similarity_i/_j`` (embedding check of LLM rewrites), ``check_problems``,
        ``features_j`` and ``target_features_j`` (see :func:`~ipcausal.builders.manifest.check_record`).

    Examples
    --------
    >>> from ipcausal.builders import build_essays
    >>> res = build_essays("prompts.txt", styles="esl", esl_rules=True, rng=1)  # doctest: +SKIP
    """
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ValueError(f"`limit` must be a positive integer or None, got {limit!r}")
    sty = _parse_styles(styles)
    on_problem = validate_on_problem(on_problem)
    man = Manifest("essays", settings={
        "styles": list(sty), "esl_rules": esl_rules, "aae_rules": aae_rules, "n_features": n_features,
        "on_problem": on_problem, "n_errors": n_errors, "limit": limit,
        "rng": rng if isinstance(rng, int) else repr(rng), "instruction": instruction,
        "max_tokens": max_tokens, "max_attempts": max_attempts,
        "backend": None if backend is None else f"{getattr(backend, 'kind', '?')}:{getattr(backend, 'model', '?')}",
    })
    items = read_prompts(prompts)
    man.add_source(prompts, role="sae_prompts")
    man.counts["prompts_read"] = len(items)
    if limit is not None:
        items = items[:limit]
    records = essay_pairs_from_prompts(items, styles=sty, backend=backend, esl_rules=esl_rules, n_errors=n_errors,
                                       rng=rng, instruction=instruction, manifest=man,
                                       max_tokens=max_tokens, max_attempts=max_attempts, aae_rules=aae_rules,
                                       n_features=n_features, on_problem=on_problem)
    if not records:
        raise ValueError(f"{prompts}: no essay pair could be made; see the manifest's skipped reasons")
    man.counts["pairs"] = len(records)
    return BuildResult(PairSet.from_records(records), man.to_dict())
