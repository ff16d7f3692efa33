"""The culture case: American vs British English markers in a question (the study's case 1).

Pairs: the embedded demo set (:func:`ipcausal.builders.demo_pairs` ``"culture"``), or the full
GlobalOpinionQA + factual questions of ``ipcausal build ambrqa``.  Outcome: the similarity of
the two answers, (1 + cos)/2 of sentence embeddings, or an LLM judge's 1–5 rating with a judge
backend; tested with the sign test of median(s) = 0.8 against "less".
"""

from __future__ import annotations

from ipcausal.cases.spec import Case, Design, EthicalReading, PairSource, TestDefaults, embedded_demo
from ipcausal.scm import InterventionSpec
from ipcausal.scoring.registry import get_scorer

__all__ = ["CASE"]


CASE = Case(
    name="culture",
    title="Cultural adaptation: American vs British English markers",
    application="Answering opinion and factual questions for a user whose spelling and vocabulary are "
                "American or British.",
    backgrounds=("us", "uk"),
    scorer=get_scorer("embedding"),
    demo=PairSource(
        "embedded demo set", max_tokens=40, load=embedded_demo("culture"), builder="demo",
        intervention=InterventionSpec(
            name="culture-marker substitution",
            changes="American spelling and vocabulary markers swapped for their British counterparts (an "
                    "indefinite article made to agree with a swapped word)",
            preserves_semantics_by="one-to-one substitution of words that name the same thing, from the marker "
                                   "lexicon (ipcausal/data/markers.csv); check_pair allows only those swaps",
        ),
        licence="CC0-1.0; the 65 demo questions were written for ipcausal",
    ),
    full=PairSource("given pairs", max_tokens=256, builder="ambrqa"),
    tests=TestDefaults(design=Design(strata="cue_kind"), smallest_effect=0.75),
    reading=EthicalReading(
        stance="desired",
        consequences="Answers that fit the user's country (units, spelling, local facts) help that user now "
                     "and harm no one else.",
        duties="Nationality inferred from spelling is not a protected use here; no rule forbids adapting "
               "conventions to it.",
        agreement="Most users expect and welcome local conventions, though they are rarely told that the "
                  "model guessed their country.",
    ),
    judged=get_scorer("judge"),
)
