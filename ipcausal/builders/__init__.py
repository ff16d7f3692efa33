"""Dataset recipes: each builder reads its source, applies the generators of
:mod:`ipcausal.interventions` and returns a :class:`~ipcausal.builders.manifest.BuildResult`
(a PairSet plus a JSON manifest: source files with SHA-256, counts, skipped items with
reasons, pair-check counts, settings).  Every pair is checked by
:func:`~ipcausal.interventions.check_pair` (``on_problem="drop"`` or ``"flag"``) and carries
the features detected in ``x_j`` (:func:`~ipcausal.builders.manifest.check_record`).  They
run from an installed wheel: the demo sets and the marker lexicon are package data.

=====================  ==========================================  ============================
builder                source                                      CLI
=====================  ==========================================  ============================
:func:`build_ambrqa`   GlobalOpinionQA CSV (+ backend: factual)     ``ipcausal build ambrqa``
:func:`build_essays`   the user's SAE essay prompts                ``ipcausal build essays``
:func:`build_farm`     Farm JSONL directory                        ``ipcausal build farm``
:func:`demo_pairs`     our embedded demo sets                      ``ipcausal build demo``
=====================  ==========================================  ============================
"""

from __future__ import annotations

from ipcausal.builders.ambrqa import build_ambrqa, choice_prompt, read_global_opinions
from ipcausal.builders.factual import DOMAINS, PAPER_FACTUAL_COUNTS, generate_factual_questions, read_stylish_questions
from ipcausal.builders.demo import (DEMO_ESSAY_INSTRUCTION, DEMO_OPEN_SUFFIX, DEMO_SETS, DEMO_STYLES, build_demo,
                                    demo_pairs, load_demo)
from ipcausal.builders.essays import ESSAY_INSTRUCTION, build_essays, read_prompts
from ipcausal.builders.farm import STATEMENT_DOMAINS, SUBSETS, build_farm, generate_statements, read_farm
from ipcausal.builders.manifest import ON_PROBLEM, BuildResult, Manifest, check_record, manifest_path_for, sha256_of

__all__ = [
    "DOMAINS", "PAPER_FACTUAL_COUNTS", "build_ambrqa", "choice_prompt", "generate_factual_questions",
    "read_global_opinions", "read_stylish_questions",
    "DEMO_ESSAY_INSTRUCTION", "DEMO_OPEN_SUFFIX", "DEMO_SETS", "DEMO_STYLES", "build_demo", "demo_pairs", "load_demo",
    "ESSAY_INSTRUCTION", "build_essays", "read_prompts",
    "STATEMENT_DOMAINS", "SUBSETS", "build_farm", "generate_statements", "read_farm",
    "ON_PROBLEM", "BuildResult", "Manifest", "check_record", "manifest_path_for", "sha256_of",
]
