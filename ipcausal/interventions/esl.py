"""Rule-based, seeded English-as-a-second-language (ESL) errors.

An offline generator for the education case (SPEC §5) where no capable LLM is at hand:
it introduces a chosen number of typical learner errors into a text, each from one of
eight families, and records every edit.  The errors are surface errors that a reader
corrects without effort, so the meaning of the prompt is kept (S held fixed) while the
text now signals a second-language writer (B changed).  Numbers, capitalised names, web
addresses and answer options are never touched (:func:`~ipcausal.interventions.protected_spans`),
and every result passes :func:`~ipcausal.interventions.check_pair`.

Families
--------
``agreement``     subject–verb agreement ("the city has" → "the city have", "he thinks" → "he think")
``article``       article omission or a/an misuse ("the students" → "students", "an idea" → "a idea")
``number``        plural/singular ("many people" → "many peoples", "information" → "informations")
``preposition``   preposition swaps ("in the city" → "on the city", "depend on" → "depend of")
``verb_form``     verb form after a modal or "to" ("should consider" → "should considers")
``spelling``      common learner misspellings ("because" → "becuase", "environment" → "enviroment")
``word_order``    adverb placement ("often read" → "read often")
``pronoun``       pronoun form ("your position" → "you position", "their" → "they")
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ipcausal.interventions._util import as_generator
from ipcausal.interventions.checks import check_pair, overlaps_protected, protected_spans
from ipcausal.scm import InterventionSpec, check_intervention

__all__ = ["ESL_FAMILIES", "ESL_SPEC", "EslEdit", "EslResult", "esl_errors"]

ESL_SPEC = check_intervention(
    InterventionSpec(
        name="esl_errors",
        changes="surface grammar and spelling (typical second-language learner errors), a counted number of edits",
        preserves_semantics_by="local edits that a reader corrects without effort (no content word is replaced "
        "by another content word); every edit recorded with its family and position",
    )
)

ESL_FAMILIES: tuple[str, ...] = ("agreement", "article", "number", "preposition", "verb_form", "spelling", "word_order",
                                 "pronoun")
_PRONOUN = {"your": "you", "their": "they", "his": "he", "whose": "who", "themselves": "themself",
            "ourselves": "ourself", "myself": "me"}

_AGREE = {"is": "are", "are": "is", "has": "have", "have": "has", "does": "do", "do": "does",
          "was": "were", "were": "was", "doesn't": "don't", "don't": "doesn't"}
_THIRD = ("he", "she", "it", "this", "everyone", "everybody", "someone", "nobody", "society", "government")
_QUANT = ("many", "several", "few", "these", "those", "two", "three", "various", "some", "most", "all", "both")
_UNCOUNT = {"information": "informations", "advice": "advices", "homework": "homeworks", "knowledge": "knowledges",
            "research": "researches", "equipment": "equipments", "furniture": "furnitures", "evidence": "evidences",
            "feedback": "feedbacks", "luggage": "luggages", "money": "moneys", "traffic": "traffics",
            "work": "works", "people": "peoples", "staff": "staffs", "software": "softwares"}
_IRREG_PLURAL = {"children": "childrens", "women": "womens", "men": "mens", "feet": "foots", "teeth": "tooths",
                 "mice": "mouses", "lives": "lifes", "knives": "knifes"}
_IRREG_PAST = {"chose": "choosed", "went": "goed", "thought": "thinked", "taught": "teached", "bought": "buyed",
               "brought": "bringed", "made": "maked", "wrote": "writed", "began": "beginned", "felt": "feeled",
               "knew": "knowed", "grew": "growed", "spent": "spended", "found": "finded", "kept": "keeped",
               "told": "telled", "gave": "gived", "took": "taked", "understood": "understanded", "chosen": "choosed"}
_PREP = {"in": "on", "on": "in", "at": "in", "to": "for", "for": "to", "of": "for", "about": "on",
         "with": "by", "from": "of", "into": "in", "during": "in", "since": "from"}
_MODAL = ("can", "could", "should", "would", "will", "must", "may", "might", "to")
_NOT_VERB = {"the", "a", "an", "be", "not", "have", "also", "all", "both", "this", "that", "their", "his", "her",
             "its", "our", "your", "my", "what", "which", "who", "more", "most", "some", "any", "every", "each"}
_MISSPELL = {"because": "becuase", "believe": "beleive", "receive": "recieve", "necessary": "neccessary",
             "government": "goverment", "environment": "enviroment", "different": "diffrent",
             "important": "importent", "definitely": "definately", "opinion": "opinon", "society": "sociaty",
             "business": "bussiness", "country": "contry", "although": "althought", "knowledge": "knowlege",
             "argument": "arguement", "until": "untill", "successful": "succesful", "really": "realy",
             "whether": "wether", "beginning": "begining", "writing": "writting", "experience": "experiance",
             "technology": "tecnology", "responsibility": "responsability", "develop": "develope",
             "advertisement": "advertisment", "independent": "independant", "community": "comunity",
             "describe": "discribe", "example": "exemple", "possible": "posible", "address": "adress",
             "separate": "seperate", "which": "wich", "people": "poeple", "their": "thier", "usually": "usualy",
             "benefit": "benifit", "environmental": "enviromental", "especially": "especialy",
             "succeed": "succed", "government's": "goverment's", "university": "univercity",
             "education": "educaton", "surprise": "suprise", "tomorrow": "tommorow", "library": "libary"}
_ADVERBS = ("always", "often", "usually", "never", "sometimes", "also", "still", "already", "really")
_DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our", "their",
                "some", "any", "each", "every", "all", "no", "which", "what", "whose", "one", "two", "many", "much",
                "it", "them", "him", "me", "us", "you", "they", "we", "he", "she", "i", "more", "most", "both",
                "other", "another", "such", "own", "how", "whether", "being"}
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


class EslEdit(NamedTuple):
    """One introduced error: ``original[start:end]`` was ``old`` and became ``new``."""

    family: str
    start: int
    end: int
    old: str
    new: str


@dataclass(frozen=True)
class EslResult:
    """The result of :func:`esl_errors`: the new ``text``, the ``original`` and the ``edits``."""

    text: str
    original: str
    edits: tuple[EslEdit, ...] = field(default_factory=tuple)

    @property
    def families(self) -> tuple[str, ...]:
        """The error family of each edit, in text order."""
        return tuple(e.family for e in self.edits)

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "original": self.original, "edits": [list(e) for e in self.edits]}


def _case_like(model: str, word: str) -> str:
    if model.isupper() and len(model) > 1:
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _add_s(verb: str) -> str:
    if verb.endswith(("s", "x", "z", "ch", "sh", "o")):
        return verb + "es"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _candidates(text: str) -> dict[str, list[EslEdit]]:
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(text)]
    out: dict[str, list[EslEdit]] = {f: [] for f in ESL_FAMILIES}
    for k, (s, e, w) in enumerate(words):
        lw = w.lower()
        prev = words[k - 1][2].lower() if k else ""
        nxt = words[k + 1] if k + 1 < len(words) else None
        # agreement: auxiliaries, and third-person -s verbs after a singular subject
        if lw in _AGREE:
            out["agreement"].append(EslEdit("agreement", s, e, w, _case_like(w, _AGREE[lw])))
        elif prev in _THIRD and lw.endswith("s") and not lw.endswith(("ss", "us", "is")) and len(lw) > 3:
            out["agreement"].append(EslEdit("agreement", s, e, w, w[:-1]))
        # article omission and a/an misuse
        if lw in ("the", "a", "an") and nxt is not None:
            ns, ne, nw = nxt
            if lw in ("a", "an"):
                swapped = "an" if lw == "a" else "a"
                out["article"].append(EslEdit("article", s, e, w, _case_like(w, swapped)))
            if text[e:ns] == " ":
                new = _case_like(w, nw) if w[:1].isupper() else nw
                out["article"].append(EslEdit("article", s, ne, text[s:ne], new))
        # number
        if lw in _UNCOUNT:
            out["number"].append(EslEdit("number", s, e, w, _case_like(w, _UNCOUNT[lw])))
        elif lw in _IRREG_PLURAL:
            out["number"].append(EslEdit("number", s, e, w, _case_like(w, _IRREG_PLURAL[lw])))
        elif prev in _QUANT and lw.endswith("s") and not lw.endswith("ss") and len(lw) > 3:
            out["number"].append(EslEdit("number", s, e, w, w[:-1]))
        # prepositions
        if lw in _PREP:
            out["preposition"].append(EslEdit("preposition", s, e, w, _case_like(w, _PREP[lw])))
        # verb form after a modal / infinitive "to"
        inverted = k >= 1 and words[k - 1][2][:1].isupper()  # "Should children ..." is a question, not modal + verb
        if (prev in _MODAL and not inverted and lw not in _NOT_VERB and lw not in _UNCOUNT and lw.isalpha()
                and len(lw) > 2 and not lw.endswith(("ing", "ed"))):
            out["verb_form"].append(EslEdit("verb_form", s, e, w, _add_s(w)))
            if prev != "to":  # "should go" -> "should to go"
                out["verb_form"].append(EslEdit("verb_form", s, e, w, "to " + w))
        if lw in _IRREG_PAST:
            out["verb_form"].append(EslEdit("verb_form", s, e, w, _case_like(w, _IRREG_PAST[lw])))
        # article insertion: "in elementary schools" -> "in the elementary schools"
        if (lw in _PREP and lw != "to" and nxt is not None and nxt[2].islower() and nxt[2] not in _DETERMINERS
                and text[e:nxt[0]] == " "):
            out["article"].append(EslEdit("article", nxt[0], nxt[1], nxt[2], "the " + nxt[2]))
        if lw in _PRONOUN and nxt is not None:
            out["pronoun"].append(EslEdit("pronoun", s, e, w, _case_like(w, _PRONOUN[lw])))
        # misspellings: a list of common ones, else a doubled consonant written once in a long word
        if lw in _MISSPELL:
            out["spelling"].append(EslEdit("spelling", s, e, w, _case_like(w, _MISSPELL[lw])))
        elif len(lw) >= 8 and lw.isalpha():
            dbl = re.search(r"([bcdfglmnprst])\1", w)
            if dbl:
                out["spelling"].append(EslEdit("spelling", s, e, w, w[:dbl.start()] + w[dbl.start() + 1:]))
        # word order: adverb moved after the following word ("often read" -> "read often")
        if lw in _ADVERBS and nxt is not None and nxt[2].isalpha() and nxt[2].lower() not in ("be", "been", "the"):
            ns, ne, nw = nxt
            if text[e:ns] == " ":
                out["word_order"].append(EslEdit("word_order", s, ne, text[s:ne], f"{_case_like(w, nw)} {w.lower()}"))
    return out


def _validate_n(n_errors: object) -> int:
    if not isinstance(n_errors, (int, np.integer)) or isinstance(n_errors, bool) or int(n_errors) < 1:
        raise ValueError(f"`n_errors` must be a positive integer, got {n_errors!r}")
    return int(n_errors)


def esl_errors(
    text: str,
    *,
    rng: int | np.random.Generator | None = None,
    n_errors: int = 3,
    families: tuple[str, ...] | list[str] | None = None,
) -> EslResult | None:
    """Introduce ``n_errors`` typical ESL errors into ``text``, each family at most once when possible.

    Parameters
    ----------
    text : str
        The Standard American English text (e.g. an essay prompt).
    rng : int, numpy.random.Generator or None
        Randomness: the same seed gives the same errors, different seeds usually differ.
    n_errors : int, default 3
        How many errors to introduce (the study asks for more than two).  When the text
        offers fewer places, fewer are made (``len(result.edits)`` says how many).
    families : sequence of str, optional
        Restrict to these families (default: all of :data:`ESL_FAMILIES`).

    Returns
    -------
    EslResult or None
        The text with errors and the list of edits, or ``None`` when no rule applies.

    Examples
    --------
    >>> from ipcausal.interventions import esl_errors
    >>> r = esl_errors("Many people believe that the government should protect the environment.", rng=1)
    >>> len(r.edits)
    3
    >>> r.text != r.original
    True
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str, got {type(text).__name__}")
    n = _validate_n(n_errors)
    if families is None:
        fams = ESL_FAMILIES
    else:
        if isinstance(families, str) or not all(isinstance(f, str) for f in families):
            raise TypeError("`families` must be a sequence of family names")
        unknown = sorted(set(families) - set(ESL_FAMILIES))
        if unknown or not families:
            raise ValueError(f"`families` must be a non-empty subset of {ESL_FAMILIES}, got {list(families)!r}")
        fams = tuple(f for f in ESL_FAMILIES if f in families)
    gen = as_generator(rng)
    cands = _candidates(text)
    protected = protected_spans(text)  # numbers, names, addresses, answer options stay as they are
    pools = {f: [ed for ed in cands[f] if not overlaps_protected(protected, ed.start, ed.end)] for f in fams}
    pools = {f: p for f, p in pools.items() if p}
    if not pools:
        return None
    chosen: list[EslEdit] = []

    def overlaps(ed: EslEdit) -> bool:
        return any(ed.start < c.end + 1 and c.start < ed.end + 1 for c in chosen)

    while len(chosen) < n and pools:
        order = [fams[i] for i in gen.permutation(len(fams)) if fams[i] in pools]
        progressed = False
        for fam in order:
            if len(chosen) >= n:
                break
            pool = pools[fam]
            while pool:
                ed = pool.pop(int(gen.integers(len(pool))))
                if not overlaps(ed):
                    chosen.append(ed)
                    progressed = True
                    break
            if not pool:
                pools.pop(fam)
        if not progressed:
            break
    if not chosen:
        return None
    chosen.sort(key=lambda ed: ed.start)
    parts, last = [], 0
    for ed in chosen:
        parts += [text[last:ed.start], ed.new]
        last = ed.end
    parts.append(text[last:])
    new_text = "".join(parts)
    if check_pair(text, new_text, allowed=chosen):  # an edit hit something it must not: give up on this text
        return None
    return EslResult(text=new_text, original=text, edits=tuple(chosen))
