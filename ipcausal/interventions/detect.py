"""Feature detectors: does a text carry the features of the variety it is meant to signal?

A generated ``x_j`` that is meant to read as African-American English, as a learner's
English or as British English should show it.  :func:`detect_features` looks for the
surface features each variety's generator produces (and a few more that people write),
so a builder can record, per pair, whether the target variety is visible at all — a rule
that silently returned its input, or an LLM rewrite that came back in standard English,
shows up as an empty list.

The detectors are pattern lists, not classifiers: they say a feature is *there*, not that
the text as a whole sounds like the variety.  Some features belong to more than one
variety (third-person -s absence is both an AAE feature and a learner error), and are
then listed under both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["DETECTED_VARIETIES", "DetectedFeatures", "detect_features", "target_variety"]

DETECTED_VARIETIES: tuple[str, ...] = ("aae", "esl", "uk")
_BACKGROUND_VARIETY = {"aae": "aae", "esl": "esl", "esl_heavy": "esl", "uk": "uk", "british": "uk"}

_P = r"(?:he|she|we|you|they)"
_NO_AUX_BEFORE = "".join(rf"(?<!\b{a} )" for a in ("does", "did", "do", "will", "would", "can", "could", "should",
                                                      "might", "may", "must", "to", "does not", "doesn't"))
_NOT_AUX = (r"(?!(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have|what|which|how|why|where|when|"
            r"who|this|its|his|us|yes|always|perhaps|thus)\b)")
_WHQ = r"(?:how|why|where|what|when)(?:\s+(?:long|much|many|often|time)(?:\s+water)?)?"
_HAB = r"(?:always|usually|often|sometimes|constantly|normally|typically|regularly|generally)"
_ADJ = (r"(?:a|an|the|so|too|very|not|real|really|ready|here|right|late|busy|happy|sure|free|able|young|old|"
        r"good|bad|more|less|afraid|tired|sad|glad|proud|safe|hungry|interested|upset|angry|wrong|being|nice)")
_NOT_ING = r"(?!(?:bring|sing|ring|swing|sting|cling|fling|spring|string|wring|thing)\b)"
_BASE = (r"(?:don't|have|do|say|think|want|need|know|go|make|like|believe|feel|get|take|come|work|live|mean|seem|"
         r"look|depend|build|help|use|give|keep|try|learn|play|pay|show|tell|agree|find|leave|spend|change|run)")
_AAE_PATTERNS: dict[str, re.Pattern[str]] = {name: re.compile(p, re.IGNORECASE) for name, p in {
    "copula_absence": rf"\b{_P}\s+(?:{_ADJ}|{_NOT_ING}\w{{2,}}ing)\b"
                      r"|\b(?:\w+s|people|children)\s+(?:being|able|sure|ready|free|interested)\b",
    "habitual_be": rf"\b(?:{_P}|\w+s|people|children)\s+{_HAB}\s+be\s+(?!able\b)\w+"
                   r"|\b(?:my|your|the|his|her|our|their)\s+\w+\s+be\s+(?:so|too|always)\b|(?<!\bto )(?<!\bwill )"
                   rf"(?<!\bcan )(?<!\bmay )(?<!\bnot )(?<!\bmust )(?<!\bmight )(?<!\bshould )(?<!\bwould )"
                   rf"(?<!\bcould )\b{_P}\s+be\s+(?!able\b)\w+",
    "future_gon": r"\b(?:gon'|gonna|finna)(?=\s)",
    "negative_concord": r"\b(?:don't|doesn't|didn't|can't|won't|ain't|never|not|isn't|aren't|wasn't|haven't)"
                        r"\s+(?:\w+\s+){0,4}?(?:nothing|nobody|nowhere|no\s+(?:more|\w+)|neither)\b",
    "aint": r"\bain't\b",
    "completive_done": r"(?<!\bhave )(?<!\bhas )(?<!\bhad )(?<!\bbe )(?<!\bbeen )(?<!\bis )(?<!\bare )(?<!\bwas )"
                       r"(?<!\bwere )(?<!\bget )(?<!\bgot )\bdone\s+(?:already\s+)?(?:\w+ed|made|left|gone|seen|"
                       r"taken|given|told|said|become|shown|grown|brought|eaten|spent|lost|chosen|written|paid)\b",
    "third_person_s": rf"\b(?:he|she|everybody|everyone|somebody|someone|nobody)\s+{_BASE}\b|{_NO_AUX_BEFORE}\bit\s+"
                      r"(?:don't|build|mean|seem|depend|help|make|work|take|cost|matter|need|rain|snow)\b"
                      r"|(?<!\bdoes )(?<!\bdo )(?<!\bdid )\b(?:my|your|his|her|our|their)\s+\w*[^s\W']\s+have\s+to\b"
                      r"|(?:^|[.!?]\s+)(?:anyone|anybody|someone|somebody|everyone)\s+(?:know|have|want|need|think)\b",
    "existential_it": r"\bit(?:'s|\s+was)\s+(?:a\s+lot\s+of|lots\s+of|many|some|no|not\s+enough|too\s+many|"
                      r"plenty\s+of|fewer|(?:better|other|more|fewer)\s+\w+s\b)",
    "was_leveling": r"\b(?:we|you|they|\w+s)\s+was\b",
    "possessive_they": r"\b(?:with|for|in|of|about|on|from|by|at|into|starting|limit|reduces|how)\s+they\s+(?!are\b|"
                       r"were\b|have\b|had\b|will\b|would\b|can\b|could\b|do\b|did\b|may\b|might\b|must\b|should\b|"
                       r"need\b|say\b|think\b|want\b|is\b|was\b|ain't\b|gon'|always\b|often\b|never\b|all\b)\w+"
                       r"|\bthey\s+(?:children|kids|parents|family|career|field|trip|life|home|house|school|job|"
                       r"homework|money|friends|teacher|car|phone|community|health|future|team)\b"
                       r"|\bthey\s+(?!always\b|sometimes\b|perhaps\b|was\b|is\b|has\b|does\b|thus\b|this\b)"
                       r"\w+[^s\W']s\b",
    "demonstrative_them": r"\bthem\s+(?:\w+s|people|children|kids|things)\b(?!\s+(?:to|that)\b)",
    "question_no_aux": r"(?:^|[.!?]\s+)(?:I|You|They|We|He|She|(?!Does\b|Was\b|Has\b|Is\b)[A-Z][a-z]{2,}s)\s+"
                       r"(?!are\b|were\b|is\b|was\b|will\b|can\b|should\b|would\b|could\b|do\b|does\b|did\b|"
                       r"have\b|has\b|had\b|may\b|might\b|must\b)\w+[^.!?]*\?"
                       rf"|(?:^|[.!?]\s+){_WHQ}\s+(?:I|you|we|they|he|she|it|my|your|his|her|our|their|the|some|{_NOT_AUX}\w+s)\s+"
                       r"(?!is\b|are\b|was\b|were\b|do\b|does\b|did\b|can\b|should\b|could\b|would\b|will\b|have\b|"
                       r"has\b|had\b|may\b|might\b|must\b|am\b|'s\b|'re\b|of\b)\w+[^.!?]*\?",
    "question_no_inversion": rf"(?:^|[.!?]\s+)(?:{_WHQ}\s+)?(?:I|you|we|they|he|she|{_NOT_AUX}\w+s)\s+"
                             r"(?:can|should|could|would|will|might|must)\s+\w+[^.!?]*\?"
                             rf"|(?:^|[.!?]\s+)(?:{_WHQ}\s+)?it's\b[^.!?]*\?",
    "copula_absence_q": rf"(?:^|[.!?]\s+){_NOT_AUX}(?-i:[A-Z])\w+(?:\s+\w+)?\s+(?:bad|good|safe|worth|better|healthier|okay|hard|easy|"
                        r"normal|rude|open|free|ready|as\s+good)\b[^.!?,]*\?|\bwhich\s+{_NOT_AUX}\w+\s+(?:better|worse|best|"
                        r"cheaper|safer|healthier)\b",
    "g_dropping": r"\b[a-z]{3,}in'(?=[\s.,;:!?]|$)",
}.items()}


def _esl_tables() -> dict[str, set[str]]:
    from ipcausal.interventions import esl

    return {
        "spelling": set(esl._MISSPELL.values()),
        "number": set(esl._UNCOUNT.values()) | set(esl._IRREG_PLURAL.values()),
        "verb_form": set(esl._IRREG_PAST.values()),
    }


_NOT_PLURAL = (r"(?!(?:this|his|its|is|was|has|does|thus|us|yes|always|perhaps|news|series|means|less|unless|"
               r"across|whereas|sometimes|towards|afterwards|besides|as|plus|lots|ours|yours|theirs|hers)\b)")
_ESL_PATTERNS: dict[str, re.Pattern[str]] = {name: re.compile(p, re.IGNORECASE) for name, p in {
    "article": r"\ba\s+(?!(?:uni|use|usu|uti|eu|one|once|ur)\w*)[aeiou]\w+|\ban\s+(?![aeiouh])[b-df-hj-np-tv-z]\w*"
               r"|\bthe\s+(?:everyone|everybody|my|your|their|his|her|our|its)\b",
    "verb_form": r"\b(?-i:can|could|should|would|will|must|may|might)\s+(?:to\s+\w+|(?!this\b|has\b|is\b|was\b|"
                 r"us\b|its\b|his\b|always\b|perhaps\b|thus\b|also\b|less\b|as\b)\w+[^s\W]s)\b",
    "agreement": r"\b(?:he|she|it|everyone|society|government)\s+(?:think|want|need|have|do|don't|say|believe|"
                 r"feel|go|make|like|know|were|are|build)\b|\b(?:people|students|children|they|we)\s+(?:is|was|has|"
                 r"does|doesn't)\b|\b(?:does|doesn't)\s+(?:you|they|we|people|children)\b|\bdo\s+(?:he|she|it)\b"
                 rf"|\b{_NOT_PLURAL}(?!\w*(?:ss|us|ics)\b)[a-z]{{2,}}[^s\W']s\s+(?:is|was|has|does|doesn't)\s+(?!it\b)",
    "pronoun": r"\b(?:you|they)\s+(?:position|opinion|view|reasons|reasoning|answer|family|families|own|life|lives|"
               r"choice|goal)\b|\bthemself\b|\bourself\b|\b(?:support|explain|state|give|use|with|for|on|in|of|"
               r"about)\s+you\s+(?!(?:are|can|will|should|have|do|agree|think|know|need|want|were|may|might|must|"
               r"would|could|to|and|or|all|who|that|if|when|because|as|in|on|at|but|so|than|today|now|here|"
               r"there|with|for|of|feel|like|prefer|chose|believe)\b)[a-z]+",
    "preposition": r"\bdepend\s+of\b|\bdiscuss\s+about\b|\bon\s+the\s+(?:city|school|country|future)\b",
    "word_order": r"\b(?!(?:nothing|something|anything|everything|thing|king|ring|spring|morning|evening|"
                  r"during)\b)\w{3,}ing\s+(?:always|often|usually|never|already|still|sometimes)\b"
                  r"|\b(?:do|does|is|are)\s+(?:still|already)\s*[,.?]",
}.items()}


@dataclass(frozen=True)
class DetectedFeatures:
    """The features found in one text, per variety (feature names in a fixed order).

    Attributes
    ----------
    aae : tuple of str
        African-American English features (names as in :data:`~ipcausal.interventions.AAE_FEATURES`).
    esl : tuple of str
        Learner-error families (names as in :data:`~ipcausal.interventions.ESL_FAMILIES`).
    uk : tuple of str
        British culture markers found (the words themselves).
    """

    aae: tuple[str, ...] = ()
    esl: tuple[str, ...] = ()
    uk: tuple[str, ...] = ()

    def present(self, variety: str) -> bool:
        """True when at least one feature of ``variety`` (``"aae"``, ``"esl"``, ``"uk"``) was found."""
        if variety not in DETECTED_VARIETIES:
            raise ValueError(f"`variety` must be one of {DETECTED_VARIETIES}, got {variety!r}")
        return bool(getattr(self, variety))

    def to_dict(self) -> dict[str, Any]:
        return {"aae": list(self.aae), "esl": list(self.esl), "uk": list(self.uk)}


def detect_features(text: str) -> DetectedFeatures:
    """Which AAE, ESL and British-marker features ``text`` shows.

    Parameters
    ----------
    text : str
        Usually the generated side ``x_j`` of a pair.

    Returns
    -------
    DetectedFeatures

    Examples
    --------
    >>> from ipcausal.interventions import detect_features
    >>> detect_features("They always be late because it's no bus.").aae
    ('habitual_be', 'existential_it')
    >>> detect_features("My neighbour's favourite colour.").uk
    ('neighbour', 'favourite', 'colour')
    >>> detect_features("We should discuss the plan.").present("esl")
    False
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str, got {type(text).__name__}")
    from ipcausal.interventions.markers import find_markers

    t = text.replace("’", "'")
    aae = tuple(dict.fromkeys(name.removesuffix("_q") for name, pat in _AAE_PATTERNS.items() if pat.search(t)))
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z']*", t)}
    tables = _esl_tables()
    esl = set(name for name, pat in _ESL_PATTERNS.items() if pat.search(t))
    esl.update(name for name, vocab in tables.items() if words & vocab)
    from ipcausal.interventions.esl import ESL_FAMILIES

    return DetectedFeatures(aae=aae, esl=tuple(f for f in ESL_FAMILIES if f in esl),
                            uk=tuple(find_markers(text, "uk")))


def target_variety(background: object) -> str | None:
    """The detector variety a background should show (``"aae"``, ``"esl"``, ``"uk"``), or None.

    Examples
    --------
    >>> from ipcausal.interventions import target_variety
    >>> target_variety("aae"), target_variety("sae"), target_variety("true_belief")
    ('aae', None, None)
    """
    if not isinstance(background, str):
        return None
    return _BACKGROUND_VARIETY.get(background.lower())
