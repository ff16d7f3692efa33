"""Dataset recipes: each builder reads its source, applies the generators of
:mod:`ipcausal.interventions` and returns a :class:`~ipcausal.builders.manifest.BuildResult`
(a PairSet plus a JSON manifest: source files with SHA-256, counts, skipped items with
reasons, pair-check counts, settings).  Every pair is checked by
:func:`~ipcausal.interventions.check_pair` (``on_problem="drop"`` or ``"flag"``) and carries
the features detected in ``x_j`` (:func:`~ipcausal.builders.manifest.check_record`).  They
run from an installed wheel: the demo sets and the marker lexicon are package data.

=========================  ==========================================  ==============================
builder                    source                                      CLI
=========================  ==========================================  ==============================
:func:`build_ambrqa`       GlobalOpinionQA CSV (+ backend: factual)    ``ipcausal build ambrqa``
:func:`build_essays`       the user's SAE essay prompts                ``ipcausal build essays``
:func:`build_farm`         Farm JSONL directory                        ``ipcausal build farm``
:func:`demo_pairs`         our embedded demo sets                      ``ipcausal build demo``
:func:`build_questions`    your own prompts (.txt, .csv, .jsonl)       ``ipcausal build questions``
=========================  ==========================================  ==============================
"""

from __future__ import annotations

from ipcausal._lazy import lazy_names

# public name -> module that defines it; imported on first use, so that importing one builder (or
# the CLI's choices) does not load them all
_LAZY: dict[str, str] = {
    **dict.fromkeys(("ON_PROBLEM", "QUESTION_GENERATORS", "QUESTION_DIRECTIONS"), "ipcausal.builders._options"),
    "build_ambrqa": "ipcausal.builders.ambrqa",
    "build_questions": "ipcausal.builders.questions",
    "read_questions": "ipcausal.builders.questions",
    "QuestionsResult": "ipcausal.builders.questions",
    "choice_prompt": "ipcausal.builders.ambrqa",
    "read_global_opinions": "ipcausal.builders.ambrqa",
    "DOMAINS": "ipcausal.builders.factual",
    "PAPER_FACTUAL_COUNTS": "ipcausal.builders.factual",
    "generate_factual_questions": "ipcausal.builders.factual",
    "read_stylish_questions": "ipcausal.builders.factual",
    "DEMO_ESSAY_INSTRUCTION": "ipcausal.builders.demo",
    "DEMO_OPEN_SUFFIX": "ipcausal.builders.demo",
    "DEMO_SETS": "ipcausal.builders.demo",
    "DEMO_STYLES": "ipcausal.builders.demo",
    "build_demo": "ipcausal.builders.demo",
    "demo_pairs": "ipcausal.builders.demo",
    "load_demo": "ipcausal.builders.demo",
    "ESSAY_INSTRUCTION": "ipcausal.builders.essays",
    "build_essays": "ipcausal.builders.essays",
    "read_prompts": "ipcausal.builders.essays",
    "STATEMENT_DOMAINS": "ipcausal.builders.farm",
    "SUBSETS": "ipcausal.builders.farm",
    "build_farm": "ipcausal.builders.farm",
    "generate_statements": "ipcausal.builders.farm",
    "read_farm": "ipcausal.builders.farm",
    "BuildResult": "ipcausal.builders.manifest",
    "Manifest": "ipcausal.builders.manifest",
    "check_record": "ipcausal.builders.manifest",
    "manifest_path_for": "ipcausal.builders.manifest",
    "sha256_of": "ipcausal.builders.manifest",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_names('ipcausal.builders', _LAZY)
