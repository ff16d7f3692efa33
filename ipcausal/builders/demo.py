"""Our own small demo sets (written for this project, shipped in ``ipcausal/data``) as PairSets.

=============  =========================  ===============================================
name           file                       pairs
=============  =========================  ===============================================
``culture``    ``demo_culture.jsonl``     65 questions in American English with markers → us/uk
``education``  ``demo_essays.jsonl``      32 SAE essay prompts → sae/esl (rules; + aae with a backend)
``echo``       ``demo_farm.jsonl``        42 questions × true/false belief statement
=============  =========================  ===============================================
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import numpy as np

from ipcausal.builders.manifest import BuildResult, Manifest, sha256_of
from ipcausal.pairs import PairSet

__all__ = ["DEMO_SETS", "DEMO_FILES", "load_demo", "demo_pairs", "build_demo"]

DEMO_FILES = {"culture": "demo_culture.jsonl", "education": "demo_essays.jsonl", "echo": "demo_farm.jsonl"}
DEMO_SETS: tuple[str, ...] = tuple(DEMO_FILES)
_ALIASES = {"ambrqa": "culture", "cultural": "culture", "essays": "education", "farm": "echo", "echo_chamber": "echo"}


def _resolve(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a str, got {type(name).__name__}")
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in DEMO_FILES:
        raise ValueError(f"`name` must be one of {DEMO_SETS} (or {sorted(_ALIASES)}), got {name!r}")
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


def build_demo(
    name: str,
    rng: int | np.random.Generator | None = 0,
    *,
    backend: Any = None,
    styles: tuple[str, ...] | None = None,
) -> BuildResult:
    """Build a demo set's pairs and manifest (see :func:`demo_pairs` for the parameters)."""
    from ipcausal.builders.ambrqa import choice_prompt
    from ipcausal.builders.essays import essay_pairs_from_prompts
    from ipcausal.interventions import belief_prompt, swap_markers

    key = _resolve(name)
    items = load_demo(key)
    man = Manifest(f"demo:{key}", settings={"rng": rng if isinstance(rng, int) else repr(rng),
                                             "backend": None if backend is None else getattr(backend, "model", "?")})
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
            records.append({"pair_id": it["id"], "background_i": "us", "background_j": "uk", "x_i": x_us,
                            "x_j": sw.text, "item_id": it["id"], "domain": it["domain"], "question": it["question"],
                            "answer_type": it["answer_type"],
                            "options": json.dumps(it["options"], ensure_ascii=False) if it.get("options") else None,
                            "n_options": len(it["options"]) if it.get("options") else None,
                            "generator": "swap_markers",
                            "markers": json.dumps([c.new for c in sw.changes], ensure_ascii=False)})
    elif key == "education":
        sty = styles if styles is not None else (("aae", "esl") if backend is not None else ("esl",))
        prompts = [{"prompt_id": it["id"], "prompt": it["prompt"]} for it in items]
        records = essay_pairs_from_prompts(prompts, styles=sty, backend=backend, esl_rules=True, rng=rng,
                                           manifest=man)
        man.settings["styles"] = list(sty)
        for r in records:
            r["essay_type"] = next(it["type"] for it in items if it["id"] == r["prompt_id"])
    else:
        for it in items:
            opts = it["options"]
            records.append({
                "pair_id": it["id"], "background_i": "true_belief", "background_j": "false_belief",
                "x_i": belief_prompt(it["true_statement"], it["question"], opts),
                "x_j": belief_prompt(it["false_statement"], it["question"], opts),
                "item_id": it["id"], "subset": "demo", "domain": it["domain"], "question": it["question"],
                "options": json.dumps(opts, ensure_ascii=False), "correct_option": int(it["correct_option"]),
                "correct_options": json.dumps([int(it["correct_option"])]), "n_options": len(opts),
                "answer_type": "yes_no" if [o.lower() for o in opts] == ["yes", "no"] else "mcq",
                "true_statement": it["true_statement"], "false_statement": it["false_statement"],
                "statement_source": "demo",
            })
    man.counts["pairs"] = len(records)
    return BuildResult(PairSet.from_records(records), man.to_dict())


def demo_pairs(
    name: str,
    rng: int | np.random.Generator | None = 0,
    *,
    backend: Any = None,
    styles: tuple[str, ...] | None = None,
) -> PairSet:
    """The pairs of one embedded demo set, ready for ``ipcausal.run``.

    Parameters
    ----------
    name : {"culture", "education", "echo"}
        Which demo set (aliases: ``ambrqa``, ``essays``, ``farm``).
    rng : int, numpy.random.Generator or None, default 0
        Seed (used by the rule-based ESL errors of ``education``); same seed, same pairs.
    backend : ipcausal.backends.Backend, optional
        ``education`` only: also make AAE (and LLM-free ESL stays rule-based) pairs.
    styles : tuple of str, optional
        ``education`` only: styles besides SAE (default ``("esl",)``, or
        ``("aae", "esl")`` with a backend).

    Returns
    -------
    PairSet
        ``culture``: backgrounds us/uk, columns ``options`` (JSON or null),
        ``answer_type`` (choice/open), ``domain``, ``markers``.
        ``education``: backgrounds sae/esl (/aae), ``prompt_id``, ``style_i``, ``style_j``.
        ``echo``: backgrounds true_belief/false_belief, ``options`` (JSON), ``correct_option``
        (1-based), ``answer_type``, ``subset`` ("demo"), ``domain``.

    Examples
    --------
    >>> from ipcausal.builders import demo_pairs
    >>> ps = demo_pairs("echo")
    >>> len(ps), ps["background_i"].iloc[0], ps["background_j"].iloc[0]
    (42, 'true_belief', 'false_belief')
    """
    return build_demo(name, rng, backend=backend, styles=styles).pairs
