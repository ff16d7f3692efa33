"""Indirect-intervention generators (SPEC §2).

Each generator turns a prompt x_i into a twin x_j with the same semantics and another
implied user background, declares itself against :mod:`ipcausal.scm` (``*_SPEC``), records
what it changed, and returns ``None`` (rule-based generators) or a record with
``text=None`` and the failure reasons (LLM-based generators) when it does not apply.

=========================  ==========================================  =====================
generator                  changes                                     needs
=========================  ==========================================  =====================
:func:`swap_markers`       American ↔ British marker words             nothing (lexicon)
:func:`frame_with_markers` marker-bearing context sentence             nothing
:func:`compose_with_markers` LLM rewrite with markers of one variety   a backend
:func:`style_transfer`     SAE → AAE / ESL rewrite                     a backend
:func:`esl_errors`         seeded learner errors (8 families)          nothing
:func:`aae_features`       seeded AAE grammatical features (11)        nothing
:func:`belief_prompt`      the belief the user states                  nothing
=========================  ==========================================  =====================

Every pair a generator or builder makes is checked by :func:`check_pair` (numbers, answer
options, names, addresses and the question form survive; declared edits are allowed), and
:func:`detect_features` says whether the generated side shows the target variety.
"""

from __future__ import annotations

from ipcausal.interventions._llm import GeneratedText
from ipcausal.interventions._util import COUNTRY_CUES, country_cues, is_question_like
from ipcausal.interventions.aae import AAE_FEATURES, AAE_SPEC, AAEEdit, AAEResult, aae_features
from ipcausal.interventions.belief import BELIEF_SPEC, BeliefPair, belief_pair, belief_prompt, belief_statement
from ipcausal.interventions.compose import (
    COMPOSE_MIN_SIMILARITY,
    COMPOSE_SPEC,
    FRAME_SPEC,
    MARKER_FRAMES,
    compose_with_markers,
    frame_with_markers,
)
from ipcausal.interventions.checks import PROBLEM_KINDS, Problem, ProtectedSpan, check_pair, protected_spans
from ipcausal.interventions.detect import DETECTED_VARIETIES, DetectedFeatures, detect_features, target_variety
from ipcausal.interventions.esl import ESL_FAMILIES, ESL_SPEC, EslEdit, EslResult, esl_errors
from ipcausal.interventions.markers import (
    MARKER_SPEC,
    VARIETIES,
    MarkerChange,
    MarkerSwap,
    find_markers,
    marker_lexicon,
    marker_senses,
    swap_markers,
)
from ipcausal.interventions.senses import SENSES, SenseDecision, decide_sense, tagger_available
from ipcausal.interventions.semantic import MEANING_THRESHOLD, embedding_model_available, semantic_similarity
from ipcausal.interventions.style import STYLE_SPEC, STYLES, style_transfer

__all__ = [
    "COUNTRY_CUES", "country_cues", "is_question_like",
    "AAE_FEATURES", "AAE_SPEC", "AAEEdit", "AAEResult", "aae_features",
    "PROBLEM_KINDS", "Problem", "ProtectedSpan", "check_pair", "protected_spans",
    "DETECTED_VARIETIES", "DetectedFeatures", "detect_features", "target_variety",
    "BELIEF_SPEC", "BeliefPair", "belief_pair", "belief_prompt", "belief_statement",
    "COMPOSE_MIN_SIMILARITY", "COMPOSE_SPEC", "FRAME_SPEC", "MARKER_FRAMES", "compose_with_markers",
    "frame_with_markers",
    "ESL_FAMILIES", "ESL_SPEC", "EslEdit", "EslResult", "esl_errors",
    "GeneratedText",
    "MARKER_SPEC", "VARIETIES", "MarkerChange", "MarkerSwap", "find_markers", "marker_lexicon", "marker_senses",
    "swap_markers",
    "MEANING_THRESHOLD", "embedding_model_available", "semantic_similarity",
    "STYLE_SPEC", "STYLES", "style_transfer",
    "SENSES", "SenseDecision", "decide_sense", "tagger_available",
]
