"""Our own small demo sets (written for this project, shipped in ``ipcausal/data``) as PairSets.

=============  =========================  ===============================================
name           file                       pairs
=============  =========================  ===============================================
``culture``    ``demo_culture.jsonl``     65 questions in American English with markers → us/uk
``education``  ``demo_essays.jsonl``      32 SAE essay prompts → sae/aae/esl (offline rules), 3 pairs each
``echo``       ``demo_farm.jsonl``        42 questions × true/false belief statement
=============  =========================  ===============================================

:func:`demo_pairs` is the one place the demo pairs are made: ``ipcausal case``,
``ipcausal build demo`` and ``make demo`` all call it, so they test the same pairs.  The
education case is the study's (SPEC §5): SAE prompts, their AAE form
(:func:`~ipcausal.interventions.aae_features`) and their ESL form
(:func:`~ipcausal.interventions.esl_errors`, 3 errors), three style pairs per prompt.  The
essays are asked for at about 80 words (not the study's 300–350) so the demo runs in
minutes on two CPU cores; open culture questions ask for a one- or two-sentence answer.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import numpy as np

from ipcausal.builders.manifest import (BuildResult, Manifest, belief_allowed, check_record, sha256_of,
                                        validate_on_problem)
from ipcausal.builders.cues import cue_columns
from ipcausal.pairs import PairSet

__all__ = ["DEMO_SETS", "DEMO_FILES", "DEMO_ESSAY_INSTRUCTION", "DEMO_OPEN_SUFFIX", "DEMO_STYLES", "ORDERED_LEVELS",
           "ESL_LIGHT", "ESL_HEAVY", "load_demo", "demo_pairs", "build_demo"]

DEMO_ESSAY_INSTRUCTION = "Write a short essay of about 80 words in response to the following prompt.\n\n{prompt}"
"""The demo's essay instruction (shorter essays than the study's, to fit two CPU cores)."""
DEMO_OPEN_SUFFIX = "\nAnswer in one or two sentences."
"""Appended to both sides of an open (not multiple-choice) culture question."""
DEMO_STYLES: tuple[str, ...] = ("sae", "aae", "esl")
#: The ordered background of ``demo_pairs("education", ordered=True)``: learner English at two strengths after SAE.
ORDERED_LEVELS: tuple[str, ...] = ("sae", "esl_light", "esl_heavy")
#: Learner errors of the light and the heavy ESL level (the light ones are among the heavy ones).
ESL_LIGHT, ESL_HEAVY = 2, 6

DEMO_FILES = {"culture": "demo_culture.jsonl", "education": "demo_essays.jsonl", "echo": "demo_farm.jsonl"}
DEMO_SETS: tuple[str, ...] = tuple(DEMO_FILES)
_ALIASES = {"ambrqa": "culture", "cultural": "culture", "essays": "education", "farm": "echo", "echo_chamber": "echo"}


def _resolve(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a str, got {type(name).__name__}")
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in DEMO_FILES:
        import difflib

        near = difflib.get_close_matches(name.lower(), DEMO_SETS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ValueError(f"`name` must be one of the demo sets {', '.join(map(repr, DEMO_SETS))}, got {name!r}{hint}")
    return key


def load_demo(name: str) -> list[dict[str, Any]]:
    """The raw items of a demo set (list of dicts, as written in its JSONL file).

    Examples
    --------
    >>> from ipcausal.builders import load_demo
    >>> len(load_demo("echo")) >= 40
    True
    """
    key = _resolve(name)
    with resources.files("ipcausal").joinpath("data", DEMO_FILES[key]).open("r", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _limit(limit: object) -> int | None:
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ValueError(f"`limit` must be a positive integer or None, got {limit!r}")
    return limit  # type: ignore[return-value]


def build_demo(
    name: str,
    rng: int | np.random.Generator | None = 0,
    *,
    limit: int | None = None,
    on_problem: str = "drop",
    backend: Any = None,
    ordered: bool = False,
) -> BuildResult:
    """Build a demo set's pairs and manifest (see :func:`demo_pairs` for the parameters).

    ``backend`` is accepted for old callers and not used: the demo sets are built offline.
    """
    from ipcausal.builders.ambrqa import choice_prompt, marker_allowed
    from ipcausal.builders.essays import essay_pairs_from_prompts
    from ipcausal.interventions import belief_prompt, swap_markers

    key = _resolve(name)
    lim = _limit(limit)
    if not isinstance(ordered, bool):
        raise TypeError("`ordered` must be True or False")
    if ordered and key != "education":
        raise ValueError(f"`ordered`=True is the education demo's ordered variant; `name` is {key!r}")
    on_problem = validate_on_problem(on_problem)
    if not (rng is None or isinstance(rng, np.random.Generator)
            or isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        raise TypeError(f"`rng` must be an int, a numpy.random.Generator or None, got {type(rng).__name__}")
    seed = int(rng) if isinstance(rng, (int, np.integer)) else int(np.random.default_rng(rng).integers(2**31 - 1))
    items = load_demo(key)[:lim]
    man = Manifest(f"demo:{key}", settings={"rng": rng if isinstance(rng, int) else repr(rng), "limit": lim,
                                             "on_problem": on_problem})
    path = resources.files("ipcausal").joinpath("data", DEMO_FILES[key])
    man.sources.append({"path": f"ipcausal/data/{DEMO_FILES[key]}", "name": DEMO_FILES[key],
                        "sha256": sha256_of(str(path)), "role": "embedded demo set"})
    man.counts["items"] = len(items)
    records: list[dict[str, Any]] = []
    if key == "culture":
        for it in items:
            x_us = choice_prompt(it["question"], it.get("options"))
            sw = swap_markers(x_us, to="uk")
            if sw is None:
                man.skip("no marker in the question", it["id"])
                continue
            x_uk = sw.text
            if not it.get("options"):
                x_us, x_uk = x_us + DEMO_OPEN_SUFFIX, x_uk + DEMO_OPEN_SUFFIX
            rec = {"pair_id": it["id"], "background_i": "us", "background_j": "uk", "x_i": x_us,
                   "x_j": x_uk, "item_id": it["id"], "domain": it["domain"], "question": it["question"],
                   "answer_type": it["answer_type"],
                   "options": json.dumps(it["options"], ensure_ascii=False) if it.get("options") else None,
                   "n_options": len(it["options"]) if it.get("options") else None,
                   "generator": "swap_markers",
                   "markers": json.dumps([c.new for c in sw.swaps], ensure_ascii=False),
                   "edits_j": json.dumps([list(e) for e in sw.edits], ensure_ascii=False),
                   **cue_columns([c.new for c in sw.swaps])}
            if check_record(rec, man, on_problem, marker_allowed(x_us, x_uk)):
                records.append(rec)
    elif key == "education" and ordered:
        records = _ordered_essays(items, seed, man, on_problem)
        man.settings.update(styles=list(ORDERED_LEVELS), ordered=True, esl_light=ESL_LIGHT, esl_heavy=ESL_HEAVY)
    elif key == "education":
        prompts = [{"prompt_id": it["id"], "prompt": it["prompt"]} for it in items]
        records = essay_pairs_from_prompts(prompts, styles=("aae", "esl"), aae_rules=True, esl_rules=True, rng=seed,
                                           per_item_seed=True, instruction=DEMO_ESSAY_INSTRUCTION, manifest=man,
                                           on_problem=on_problem)
        man.settings["styles"] = list(DEMO_STYLES)
        types = {it["id"]: it["type"] for it in items}
        for r in records:
            r["essay_type"] = types[r["prompt_id"]]
    else:
        for it in items:
            opts = it["options"]
            rec = {
                "pair_id": it["id"], "background_i": "true_belief", "background_j": "false_belief",
                "x_i": belief_prompt(it["true_statement"], it["question"], opts),
                "x_j": belief_prompt(it["false_statement"], it["question"], opts),
                "item_id": it["id"], "subset": "demo", "domain": it["domain"], "question": it["question"],
                "options": json.dumps(opts, ensure_ascii=False), "correct_option": int(it["correct_option"]),
                "correct_options": json.dumps([int(it["correct_option"])]), "n_options": len(opts),
                "answer_type": "yes_no" if [o.lower() for o in opts] == ["yes", "no"] else "mcq",
                "true_statement": it["true_statement"], "false_statement": it["false_statement"],
                "statement_source": "demo",
            }
            if check_record(rec, man, on_problem, allowed=belief_allowed(rec)):
                records.append(rec)
    man.counts["pairs"] = len(records)
    return BuildResult(PairSet.from_records(records), man.to_dict())


def _ordered_essays(items: list[dict[str, Any]], seed: int, man: Manifest, on_problem: str) -> list[dict[str, Any]]:
    """Pairs sae–esl_light, sae–esl_heavy, esl_light–esl_heavy per prompt (the ordered background).

    Prompt k: :func:`~ipcausal.interventions.esl_errors` makes :data:`ESL_HEAVY` errors with the
    seed ``(seed, k)``; the light level keeps :data:`ESL_LIGHT` of them, drawn with the same
    stream, so each light prompt's errors are among its heavy prompt's and the levels are ordered
    by construction.  A prompt with fewer than ``ESL_HEAVY - 1`` places for errors is skipped
    (every prompt must have all three levels for the trend test).
    """
    from ipcausal.interventions import esl_errors

    records: list[dict[str, Any]] = []
    for k, it in enumerate(items):
        gen = np.random.default_rng([seed, k])
        sae = it["prompt"]
        heavy = esl_errors(sae, rng=gen, n_errors=ESL_HEAVY)
        if heavy is None or len(heavy.edits) < ESL_HEAVY - 1:
            man.skip("esl_errors found too few places for the heavy level", f"{it['id']}:esl_heavy")
            continue
        keep = sorted(gen.choice(len(heavy.edits), size=ESL_LIGHT, replace=False).tolist())
        light_edits = [heavy.edits[i] for i in keep]
        parts, last = [], 0
        for ed in light_edits:
            parts += [sae[last:ed.start], ed.new]
            last = ed.end
        texts = {"sae": sae, "esl_light": "".join(parts) + sae[last:], "esl_heavy": heavy.text}
        edits = {"sae": [], "esl_light": [list(e) for e in light_edits], "esl_heavy": [list(e) for e in heavy.edits]}
        for a, b in (("sae", "esl_light"), ("sae", "esl_heavy"), ("esl_light", "esl_heavy")):
            rec = {"pair_id": f"{it['id']}:{a}-{b}", "background_i": a, "background_j": b,
                   "x_i": DEMO_ESSAY_INSTRUCTION.format(prompt=texts[a]),
                   "x_j": DEMO_ESSAY_INSTRUCTION.format(prompt=texts[b]), "prompt_id": it["id"], "style_i": a,
                   "style_j": b, "prompt_i": texts[a], "prompt_j": texts[b], "prompt_sae": sae,
                   "generator_i": "source" if a == "sae" else "esl_errors", "generator_j": "esl_errors",
                   "edits_i": json.dumps(edits[a]) if a != "sae" else None, "edits_j": json.dumps(edits[b]),
                   "n_errors_i": len(edits[a]), "n_errors_j": len(edits[b]), "essay_type": it["type"]}
            allowed = [tuple(e[-2:]) for e in edits[a] + edits[b]]
            if check_record(rec, man, on_problem, allowed):
                records.append(rec)
                man.counts[f"pairs:{a}-{b}"] += 1
    return records


def demo_pairs(
    name: str,
    rng: int | np.random.Generator | None = 0,
    *,
    limit: int | None = None,
    on_problem: str = "drop",
    ordered: bool = False,
) -> PairSet:
    """The pairs of one embedded demo set, ready for ``ipcausal.run`` (offline, seeded).

    Parameters
    ----------
    name : {"culture", "education", "echo"}
        Which demo set (aliases: ``ambrqa``, ``essays``, ``farm``).
    rng : int, numpy.random.Generator or None, default 0
        Seed of the rule-based AAE and ESL rewrites of ``education`` (prompt k uses the
        seed ``(rng, k)``, so ``limit`` never changes a prompt's pairs); same seed, same pairs.
    limit : int, optional
        Use only the first ``limit`` items (``education``: prompts, three pairs each).
    on_problem : {"drop", "flag"}, default "drop"
        What to do with a pair that fails :func:`~ipcausal.interventions.check_pair`.
    ordered : bool, default False
        ``education`` only: the ordered background :data:`ORDERED_LEVELS` instead — SAE, then
        learner English with :data:`ESL_LIGHT` errors, then with :data:`ESL_HEAVY` (the light
        prompt's errors are among the heavy prompt's), three pairs per prompt, ``n_errors_i``/
        ``n_errors_j`` columns; test it with ``ipcausal.test(pairs, design=Design(trend=ORDERED_LEVELS))``.

    Returns
    -------
    PairSet
        ``culture``: backgrounds us/uk, columns ``options`` (JSON or null),
        ``answer_type`` (choice/open), ``domain``, ``markers``, ``marker_kinds`` (JSON: each
        marker's kind, :func:`marker_kind`) and ``cue_kind`` (``spelling``, ``vocabulary``, or
        ``both`` when the question carries markers of both kinds); open questions end with
        :data:`DEMO_OPEN_SUFFIX`.
        ``education``: backgrounds from sae/aae/esl (pairs sae–aae, sae–esl, aae–esl),
        ``prompt_id``, ``style_i``, ``style_j``, ``edits_i``/``edits_j`` (JSON),
        ``essay_type``; prompts wrapped in :data:`DEMO_ESSAY_INSTRUCTION`.
        ``echo``: backgrounds true_belief/false_belief, ``options`` (JSON), ``correct_option``
        (1-based), ``answer_type``, ``subset`` ("demo"), ``domain``.
        All: ``check_problems``, ``features_j``, ``target_features_j``.

    Examples
    --------
    >>> from ipcausal.builders import demo_pairs
    >>> ps = demo_pairs("echo")
    >>> len(ps), ps["background_i"].iloc[0], ps["background_j"].iloc[0]
    (42, 'true_belief', 'false_belief')
    >>> edu = demo_pairs("education", limit=2)
    >>> sorted(set(edu["background_i"]) | set(edu["background_j"]))
    ['aae', 'esl', 'sae']
    >>> sorted(set(demo_pairs("education", limit=2, ordered=True)["background_j"]))
    ['esl_heavy', 'esl_light']
    """
    return build_demo(name, rng, limit=limit, on_problem=on_problem, ordered=ordered).pairs
