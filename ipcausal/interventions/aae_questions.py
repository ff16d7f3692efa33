"""African-American English features that occur in questions (offline rules, each edit recorded).

:func:`question_candidates` gives :func:`~ipcausal.interventions.aae_features` the places where a
question can carry an AAE feature.  The grammar follows the descriptions of AAE questions in the
sociolinguistic literature (questions without auxiliary inversion or without *do*-support, copula
and auxiliary absence in *wh*-questions, habitual *be*, existential *it*, third-person *-s*
absence, and the *-in'* spelling of the *-ing* ending):

===========================  ==============================================  ==============================================
feature                      before                                          after
===========================  ==============================================  ==============================================
``question_no_aux``          Does my landlord have to fix the heat?          My landlord have to fix the heat?
                             Why does my car make a noise?                   Why my car make a noise?
                             Have you ever tried sushi?                      You ever tried sushi?
``question_no_inversion``    Can you recommend a good book?                  You can recommend a good book?
                             Where can I buy a cheap bike?                   Where I can buy a cheap bike?
                             Is it safe to swim after eating?                It's safe to swim after eating?
``copula_absence``           Why is my cat scratching the couch?             Why my cat scratching the couch?
                             Are energy drinks safe for teenagers?           Energy drinks safe for teenagers?
``habitual_be``              Why is my internet so slow at night?            Why my internet be so slow at night?
``existential_it``           Is there a pharmacy near here?                  Is it a pharmacy near here?
``third_person_s``           ... if my phone gets wet?                       ... if my phone get wet?
``g_dropping``               Why is my cat scratching the couch?             Why is my cat scratchin' the couch?
===========================  ==============================================  ==============================================

Only auxiliaries, the copula, verb endings and word order of the auxiliary with a one-word subject
change; the words of the question stay.  Rules that need a part of speech (``third_person_s``
after a noun, ``g_dropping``) run only with the sense tagger installed
(:func:`~ipcausal.interventions.senses.tagger_available`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["QUESTION_FEATURES", "question_candidates"]

QUESTION_FEATURES: tuple[str, ...] = ("question_no_inversion", "g_dropping")

_WH = {"how", "why", "where", "what", "when", "which", "who"}
_WH_MORE = {"long", "much", "many", "often", "time", "kind", "far", "old", "big", "soon"}
_PRON = {"i", "you", "we", "they", "he", "she"}
_DET = {"the", "my", "your", "his", "her", "our", "their", "this", "that", "these", "those", "its"}
_MODAL = {"can", "should", "could", "would", "will", "might", "must"}
_NOT_SUBJ = _WH | _MODAL | {"a", "an", "it", "there", "not", "to", "be", "any", "some", "there's", "the", "this",
                            "that", "so", "too", "very", "okay", "ok", "that's"}
_HABIT = re.compile(r"\b(?:at night|every (?:day|night|morning|week|time)|always|usually|in the (?:morning|winter|"
                    r"summer|evening)s?|on weekends|all the time|all day|at work)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")


def _is_question_start(text: str, start: int) -> bool:
    """``start`` opens a sentence that ends with a question mark."""
    head = text[:start]
    if head.strip() and not re.search(r"[.!?:\n]\s*$", head):
        return False
    end = re.search(r"[.!?]", text[start:])
    return end is not None and end.group(0) == "?"


def _cap(model: str, word: str) -> str:
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def _plural_noun(w: str) -> bool:
    lw = w.lower()
    return w.islower() and len(lw) > 3 and lw.endswith("s") and not lw.endswith(("ss", "us", "is", "'s"))


def question_candidates(text: str, add: Callable[[str, int, int, str], None],
                        tags: dict[int, str] | None = None) -> None:
    """Call ``add(feature, start, end, new)`` for every place a question of ``text`` takes a feature.

    ``tags`` maps the start offset of a word to its Penn tag (from the sense tagger), when it ran.
    """
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(text)]
    lw = [w.lower().replace("’", "'") for _, _, w in words]
    tags = tags or {}

    def sp(k: int) -> bool:  # words k and k + 1 are separated by one space
        return k + 1 < len(words) and text[words[k][1]:words[k + 1][0]] == " "

    for k, (s, e, w) in enumerate(words):
        nxt = lw[k + 1] if k + 1 < len(words) else ""
        if not sp(k):
            continue
        ns, ne, nw = words[k + 1]
        opening = _is_question_start(text, s)
        # the wh-phrase: "Why", "How long", "What time", "How much water"
        wh_end = -1
        if lw[k] in _WH and opening:
            wh_end = k
        elif k >= 1 and lw[k - 1] in _WH and lw[k] in _WH_MORE and _is_question_start(text, words[k - 1][0]):
            wh_end = k
        elif k >= 2 and lw[k - 2] in ("how",) and lw[k - 1] in ("much", "many") and _is_question_start(
                text, words[k - 2][0]):
            wh_end = k
        if wh_end == k:
            if k + 2 >= len(words) or not sp(k + 1):
                continue
            aux, subj = nxt, lw[k + 2]
            ss, se, sw = words[k + 2]
            if aux in ("do", "does") and subj not in _NOT_SUBJ - {"it", "the", "this", "that"}:
                add("question_no_aux", ns, ss, "")  # "Why does my car ..." -> "Why my car ..."
            elif aux in ("is", "are") and (subj in _PRON or subj in _DET or (aux, subj) == ("are", "some")) \
                    and k + 3 < len(words):
                j = next((j for j in range(k + 3, min(k + 7, len(words))) if lw[j] in ("so", "too")), None)
                if aux == "is" and subj in _DET and j is not None and _HABIT.search(text, words[j][1]):
                    # "Why is my internet so slow at night" -> "Why my internet be so slow at night"
                    add("habitual_be", ns, words[j][0], text[ss:words[j][0]] + "be ")
                else:
                    add("copula_absence", ns, ss, "")  # "Why is my cat scratching" -> "Why my cat scratching"
            elif aux == "is" and subj == "it" and sp(k + 2):
                add("question_no_inversion", ns, se, "it's")  # "Why is it so hard" -> "Why it's so hard"
            elif aux in _MODAL and (subj in _PRON or _plural_noun(sw)) and sp(k + 2):
                add("question_no_inversion", ns, se, f"{sw} {words[k + 1][2]}")  # "How can I" -> "How I can"
            continue
        if not opening:
            continue
        cur = lw[k]
        if cur in ("do", "does") and (nxt in _PRON or nxt in _DET or nxt in ("it", "anyone", "anybody", "someone",
                                                                              "everyone") or _plural_noun(nw)
                                      or (nw.islower() and nxt not in _NOT_SUBJ and not nxt.endswith("ing"))
                                      ) and not (nw[:1].isupper() and nxt != "i"):
            add("question_no_aux", s, ne, nw[:1].upper() + nw[1:])  # "Does my landlord" -> "My landlord"
        elif cur in ("have", "has") and nxt in _PRON and k + 2 < len(words) and lw[k + 2] in ("ever", "never",
                                                                                             "already", "been"):
            add("question_no_aux", s, ne, nw[:1].upper() + nw[1:])  # "Have you ever" -> "You ever"
        elif cur in ("is", "are") and nxt == "there" and k + 2 < len(words):
            add("existential_it", s, ne, _cap(w, "is it"))  # "Is there a" -> "Is it a"
        elif cur == "is" and nxt == "it":
            add("question_no_inversion", s, ne, "It's")  # "Is it safe ..." -> "It's safe ...?"
        elif cur == "is" and (nxt in _DET - {"this", "that"} or (nw.islower() and nxt not in _NOT_SUBJ
                                                                 and nxt.isalpha() and not nxt.endswith("ing"))):
            add("copula_absence", s, ne, nw[:1].upper() + nw[1:])  # "Is coffee bad ..." -> "Coffee bad ...?"
        elif cur == "are" and nxt not in _NOT_SUBJ and nxt.isalpha() and (nxt in _PRON or nxt in _DET
                                                                         or _plural_noun(nw) or nw.islower()):
            add("copula_absence", s, ne, nw[:1].upper() + nw[1:])  # "Are eggs good" -> "Eggs good"
        elif cur in _MODAL and (nxt in _PRON or _plural_noun(nw)):
            add("question_no_inversion", s, ne, f"{nw[:1].upper() + nw[1:]} {cur}")  # "Can you" -> "You can"
    if not tags:
        return
    for k, (s, e, w) in enumerate(words):
        tag = tags.get(s)
        if tag == "VBG" and w.islower() and len(w) > 5 and w.endswith("ing") and w not in ("during", "nothing"):
            add("g_dropping", s, e, w[:-1] + "'")
        if tag == "VBZ" and k and tags.get(words[k - 1][0]) in ("NN", "NNP") and w.islower() and len(w) > 3 \
                and w.endswith("s") and not w.endswith(("ss", "'s")) and lw[k] not in ("is", "was", "has", "does") \
                and text[words[k - 1][1]:s] == " " and lw[k - 1] not in _NOT_SUBJ:
            stem = w[:-3] + "y" if w.endswith("ies") else w[:-2] if w.endswith(("ches", "shes", "xes", "sses")) \
                else w[:-1]
            add("third_person_s", s, e, stem)  # "if my phone gets wet" -> "if my phone get wet"
