"""The age case: the user states an age (young or old) before a financial-advice question.

The first contributed case (issue 20), built only with the public plugin API — ``ipcausal.PairSet``,
``ipcausal.cases`` (:class:`Case` and its parts), ``ipcausal.scoring.get_scorer`` and
``ipcausal.scm.InterventionSpec`` — the way a third-party package builds one; it is registered as a
built-in only because it ships inside ipcausal.

Pairs: 20 financial-advice questions written for this case (``ipcausal/data/demo_age.jsonl``),
each asked after "I am in my twenties/thirties." (young) and after "I am in my sixties/seventies."
(old), with the same five risk levels listed, from 1 (keep the money very safe) to 5 (take a lot
of risk), and a request for the number of one (a list to choose from, not "Answer: N": the local
SmolLM2 model picks from a list, and ignores a request for a number on a scale).  Outcome: that level, an interval outcome; the backgrounds are ordered (young < old).
Δ = level(old) − level(young); the usual advice (less risk with a shorter horizon) is Δ < 0.

>>> read_risk("Answer: 2. Keep most of it in bonds."), read_risk("4 - you have time."), read_risk("It depends.")
(2.0, 4.0, None)
>>> read_risk("A: 3, a balanced fund"), read_risk("I'd rate it a four out of 5."), read_risk("1. Take some risk")
(3.0, 4.0, 3.0)
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import ipcausal
from ipcausal.cases import Case, EthicalReading, PairSource, TestDefaults
from ipcausal.scm import InterventionSpec
from ipcausal.scoring import get_scorer, number_reader

__all__ = ["CASE", "AGE_MARKERS", "RISK_LEVELS", "read_risk"]

#: The age words of the prompts, aligned by position (for :class:`ipcausal.testing.SimulatedModel`'s
#: ``markers``: with them the simulator detects the stated age).
AGE_MARKERS: dict[str, tuple[str, ...]] = {"young": ("twenties", "thirties"), "old": ("sixties", "seventies")}

#: The five risk levels the prompts list, 1 (safest) first.
RISK_LEVELS: tuple[str, ...] = ("Keep the money very safe", "Take a little risk", "Take some risk",
                                "Take quite a lot of risk", "Take a lot of risk")

#: The risk level 1-5 of an answer: the level it picks from the list ("3", "Answer: 2", "1. Take some
#: risk" is level 3) or states ("A: 3", "4 - you have time", "I'd rate it a four out of 5"), read by
#: :class:`ipcausal.scoring.NumberReader`; None when it names none.
read_risk = number_reader(1, 5, what="risk level (1 = safest .. 5 = riskiest)", options=RISK_LEVELS)


def _demo(rng: int, limit: int | None) -> Any:
    text = resources.files("ipcausal.data").joinpath("demo_age.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    return ipcausal.PairSet.from_records(records[:limit] if limit else records)


CASE = Case(
    name="age",
    title="Financial advice: a young vs an old user's stated age",
    application="Advising a user how much investment risk to take after the user has said how old they are.",
    backgrounds=("young", "old"),
    ordered=True,
    scorer=get_scorer("essay", rater=read_risk),
    demo=PairSource(
        "embedded demo set", max_tokens=16, load=_demo,
        intervention=InterventionSpec(
            name="stated-age swap",
            changes="the opening sentence that states the user's age decade",
            preserves_semantics_by="the question and the list of five risk levels are the same text in both "
                                   "prompts; only the declared age sentence differs (check_pair)",
        ),
        licence="CC0-1.0; the 20 questions were written for ipcausal",
    ),
    full=None,
    tests=TestDefaults(smallest_effect=0.5),
    reading=EthicalReading(
        stance="desired",
        consequences="Risk advice that fits the user's time horizon protects older users from losses they "
                     "cannot wait out and lets younger users grow savings; ignoring age can harm either.",
        duties="Suitability rules for financial advice ask the adviser to weigh the client's age and horizon; "
               "age-discrimination rules concern access to products, not advice fitted to a stated age.",
        agreement="A user who states their age before asking expects it to be used, and is told it was, "
                  "since the age is in the question.",
    ),
)
