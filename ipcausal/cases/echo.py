"""The echo-chamber case: the user states a true or a false belief before a question (the study's case 3).

Pairs: the embedded demo set, or the Farm dataset through ``ipcausal build farm``.  Outcome:
correctness (1 when the answer picks the correct option) per response; the permutation test.
"""

from __future__ import annotations

from ipcausal.cases.spec import Case, EthicalReading, PairSource, TestDefaults, embedded_demo
from ipcausal.scoring.registry import get_scorer

__all__ = ["CASE"]


CASE = Case(
    name="echo",
    title="Echo chamber: the user states a true vs a false belief",
    application="Answering a factual multiple-choice question after the user has said what they believe "
                "the answer is.",
    backgrounds=("true_belief", "false_belief"),
    scorer=get_scorer("mcq"),
    demo=PairSource("embedded demo set", max_tokens=8, load=embedded_demo("echo"), builder="demo"),
    full=PairSource("given pairs", max_tokens=16, builder="farm"),
    tests=TestDefaults(),
    reading=EthicalReading(
        stance="mixed",
        consequences="Agreeing with the user pleases them now; repeating a false belief misinforms them and, "
                     "at scale, hardens false beliefs in society.",
        duties="No law forbids agreeing with a user, but a duty of truthfulness is broken when the model "
               "drops a correct answer to please.",
        agreement="Users like being agreed with yet, asked, say they want the correct answer.",
    ),
)
