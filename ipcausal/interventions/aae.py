"""Rule-based, seeded African-American English (AAE) morphosyntax.

An offline generator for the education case (SPEC §5): it rewrites a Standard American
English text with grammatical features that the sociolinguistic literature documents for
African-American English, and records every edit.  Only function words and verb endings
change (no content word is replaced), so the meaning is kept (S held fixed) while the
grammar now signals an AAE speaker (B changed).  Numbers, capitalised names, web
addresses and answer options are never touched (:func:`~ipcausal.interventions.protected_spans`),
and every result passes :func:`~ipcausal.interventions.check_pair`.

Rule-based dialect text is an approximation: these rules have not been validated by native
speakers, and real AAE uses its features variably and in contexts these rules do not see.
Validate a sample by people who speak the variety before drawing conclusions
(``docs/generators.md``).

Features (see :data:`AAE_FEATURES`; before → after)
----------------------------------------------------
``copula_absence``       "they are ready" → "they ready", "the bus is late" → "the bus late"
``habitual_be``          "she is always busy" → "she always be busy"
``future_gon``           "we are going to win" → "we gon' win"
``negative_concord``     "he didn't say anything" → "he didn't say nothing"
``aint``                 "it isn't fair" → "it ain't fair"
``completive_done``      "they have already left" → "they done left"
``third_person_s``       "she thinks" → "she think", "he doesn't" → "he don't"
``existential_it``       "there are many reasons" → "it's many reasons"
``was_leveling``         "they were late" → "they was late"
``possessive_they``      "their school" → "they school"
``demonstrative_them``   "those books" → "them books"
``question_no_aux``      "Do you agree?" → "You agree?" (a yes/no question without do-support)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ipcausal.interventions._util import as_generator
from ipcausal.interventions.aae_questions import QUESTION_FEATURES, question_candidates
from ipcausal.interventions.checks import check_pair, overlaps_protected, protected_spans
from ipcausal.scm import InterventionSpec, check_intervention

__all__ = ["AAE_FEATURES", "AAE_SPEC", "AAEEdit", "AAEResult", "aae_features"]

AAE_SPEC = check_intervention(
    InterventionSpec(
        name="aae_features",
        changes="the grammar of the text (documented African-American English morphosyntactic features), "
        "a counted number of edits",
        preserves_semantics_by="rewrites of function words and verb endings only (no content word replaced); "
        "numbers, names, addresses and answer options untouched; every edit recorded with its feature and span, "
        "and the pair checked by check_pair",
    )
)

AAE_FEATURES: tuple[str, ...] = ("copula_absence", "habitual_be", "future_gon", "negative_concord", "aint",
                                 "completive_done", "third_person_s", "existential_it", "was_leveling",
                                 "possessive_they", "demonstrative_them", "question_no_aux", *QUESTION_FEATURES)

_SUBJ = {"he", "she", "we", "you", "they"}
_PLURAL_SUBJ = {"people", "children", "kids", "men", "women", "folks", "teenagers", "adults"}
_THIRD = {"he", "she", "it", "everybody", "everyone", "somebody", "someone", "nobody", "anybody", "anyone"}
_HABIT = {"always", "usually", "often", "sometimes", "constantly", "normally", "typically", "regularly",
          "generally", "never"}
_NEG = {"don't", "doesn't", "didn't", "can't", "cannot", "won't", "wouldn't", "shouldn't", "couldn't", "isn't",
        "aren't", "wasn't", "weren't", "haven't", "hasn't", "hadn't", "ain't", "never", "not", "mustn't"}
_NPI = {"any": "no", "anything": "nothing", "anyone": "nobody", "anybody": "nobody", "anywhere": "nowhere",
        "ever": "never", "either": "neither", "anymore": "no more"}
_AINT = {"isn't": "ain't", "aren't": "ain't", "hasn't": "ain't", "haven't": "ain't"}
_AINT2 = {("is", "not"), ("are", "not"), ("am", "not"), ("i'm", "not"), ("has", "not"), ("have", "not")}
_IRREG_PP = {"been", "done", "gone", "seen", "taken", "given", "written", "eaten", "made", "left", "told", "said",
             "found", "lost", "spent", "bought", "brought", "thought", "taught", "chosen", "forgotten", "begun",
             "known", "grown", "shown", "won", "paid", "sold", "built", "sent", "kept", "met", "heard", "read"}
_DONE_VERBS = {"finished", "completed", "decided", "left", "gone", "eaten", "spent", "lost", "forgotten", "changed",
               "tried", "started", "stopped", "moved", "agreed", "chosen", "seen", "told", "said", "made", "written",
               "paid", "sold", "built", "sent", "bought", "learned", "heard", "received", "reached", "passed",
               "proposed", "become", "improved", "increased", "reduced", "created", "developed", "replaced",
               "caused", "shown", "taken", "given", "brought", "grown", "helped", "worked", "lived"}
_NOT_DONE_SUBJ = {"what", "which", "who", "whom", "whose", "where", "when", "why", "how", "to", "not", "and", "or",
                  "i", "it"}
_NOT_S_VERB = {"is", "was", "has", "does", "this", "its", "his", "always", "perhaps", "sometimes", "us", "yes",
               "as", "plus", "less", "unless", "thus", "across", "whereas", "besides", "towards", "afterwards",
               "alas", "series", "news", "lots", "means", "its", "ours", "yours", "theirs", "hers", "was"}
_S_SPECIAL = {"has": "have", "does": "do", "doesn't": "don't", "says": "say", "hasn't": "haven't"}
_THERE_BLOCK = {"over", "in", "out", "from", "up", "down", "get", "go", "be", "been", "live", "stay", "here", "to",
                "near", "went", "is", "are", "was", "were", "back", "right", "up", "moved", "lived", "stayed"}
_THERE = {"is": "it's", "are": "it's", "was": "it was", "were": "it was"}
_THOSE_BLOCK = {"who", "that", "which", "of", "are", "were", "is", "in", "with", "whose", "whom", "at", "on",
                "for", "to", "from", "by", "and", "or", "we", "they", "you", "i", "he", "she", "it", "things"}
_PRED = {"right", "wrong", "ready", "late", "busy", "happy", "sure", "free", "good", "bad", "important", "true",
         "fine", "tired", "sick", "afraid", "hungry", "angry", "upset", "safe", "cheap", "expensive", "open", "closed",
         "different", "better", "worse", "real", "new", "old", "young", "here", "home", "away", "gone", "done"}
_NP_NOT_SUBJ = {"it", "this", "that", "what", "there", "here", "which", "who", "whom", "whose", "where", "when",
                "why", "how", "i", "he", "she", "we", "you", "they", "and", "or", "but", "if", "than", "as", "so",
                "because", "is", "are", "was", "were", "be", "not", "to", "of", "in", "on", "at", "for", "with"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")


class AAEEdit(NamedTuple):
    """One feature applied: ``original[start:end]`` was ``old`` and became ``new``."""

    feature: str
    start: int
    end: int
    old: str
    new: str


@dataclass(frozen=True)
class AAEResult:
    """The result of :func:`aae_features`: the new ``text``, the ``original`` and the ``edits``."""

    text: str
    original: str
    edits: tuple[AAEEdit, ...] = field(default_factory=tuple)

    @property
    def features(self) -> tuple[str, ...]:
        """The feature of each edit, in text order."""
        return tuple(e.feature for e in self.edits)

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "original": self.original, "edits": [list(e) for e in self.edits]}


def _cap(model: str, word: str) -> str:
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def _plural_subject(w: str) -> bool:
    lw = w.lower()
    return w.islower() and lw not in _NOT_S_VERB and (
        lw in _PLURAL_SUBJ or (len(lw) > 3 and lw.endswith("s") and not lw.endswith(("ss", "us", "is"))))


def _stem_s(w: str) -> str | None:
    lw = w.lower()
    if lw in _S_SPECIAL:
        return _S_SPECIAL[lw]
    if not w.islower() or len(lw) < 4 or not lw.endswith("s") or lw in _NOT_S_VERB or "'" in lw:
        return None
    if lw.endswith(("ss", "us", "is", "ous")):
        return None
    if lw.endswith("ies") and len(lw) > 4:
        return w[:-3] + "y"
    if lw.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return w[:-2]
    return w[:-1]


def _pp(w: str) -> bool:
    lw = w.lower()
    return w.islower() and (lw in _IRREG_PP or (len(lw) > 4 and lw.endswith("ed")))


def _tags(text: str) -> dict[int, str]:
    """Penn tag per word start, from the sense tagger (empty without it)."""
    from ipcausal.interventions.senses import _tokens, tagger_available

    return {t.start: t.tag for t in _tokens(text)} if tagger_available() else {}


def _candidates(text: str, questions: bool = False) -> dict[str, list[AAEEdit]]:
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(text)]
    lw = [w.lower().replace("’", "'") for _, _, w in words]
    out: dict[str, list[AAEEdit]] = {f: [] for f in AAE_FEATURES}
    if questions:
        def put(feature: str, s: int, e: int, new: str) -> None:
            ed = AAEEdit(feature, s, e, text[s:e], new)
            if ed not in out[feature]:
                out[feature].append(ed)

        question_candidates(text, put, _tags(text))

    def joined(k: int, n: int) -> bool:  # words k..k+n-1 exist and are separated by single spaces
        return k + n <= len(words) and all(text[words[i][1]:words[i + 1][0]] == " " for i in range(k, k + n - 1))

    def add(feature: str, k0: int, k1: int, new: str) -> None:
        s, e = words[k0][0], words[k1][1]
        out[feature].append(AAEEdit(feature, s, e, text[s:e], new))

    for k, (s, e, w) in enumerate(words):
        cur = lw[k]
        nxt = lw[k + 1] if k + 1 < len(words) else ""
        nxt2 = lw[k + 2] if k + 2 < len(words) else ""
        subj = cur in _SUBJ or _plural_subject(w)
        # copula: "they are ready" -> "they ready"; "they're ready" -> "they ready"
        if subj and nxt in ("is", "are") and joined(k, 3) and nxt2 not in ("not", "going", "there", "to") \
                and nxt2 not in _HABIT and (cur in _SUBJ or nxt == "are"):
            add("copula_absence", k, k + 1, w)
        # ... and after a noun or a name before a predicate adjective or -ing: "the bus is late" -> "the bus late"
        if cur not in _NP_NOT_SUBJ and cur.isalpha() and nxt in ("is", "are") and joined(k, 3) and (
                nxt2 in _PRED or (nxt2.endswith("ing") and len(nxt2) > 5 and nxt2 != "going")) and not (
                cur in _SUBJ or _plural_subject(w)) and (k == 0 or lw[k - 1] not in ("is", "are", "was", "were")):
            out["copula_absence"].append(AAEEdit("copula_absence", e, words[k + 1][1], text[e:words[k + 1][1]], ""))
        if cur in ("they're", "you're", "we're") and joined(k, 2) and nxt not in ("not", "going") and nxt not in _HABIT:
            add("copula_absence", k, k, w[:w.index("'") if "'" in w else w.index("’")])
        if cur in ("he's", "she's") and joined(k, 2) and nxt.endswith("ing") and nxt != "going":
            add("copula_absence", k, k, w[:-2])
        # habitual be: "they are often late" -> "they often be late"
        if subj and nxt in ("is", "are") and nxt2 in _HABIT and nxt2 != "never" and joined(k, 4):
            s1 = words[k + 1][0]
            out["habitual_be"].append(AAEEdit("habitual_be", s1, words[k + 2][1], text[s1:words[k + 2][1]],
                                              f"{words[k + 2][2]} be"))
        # future: "we are going to vote" -> "we gon' vote"
        if (cur in _SUBJ or cur in ("i'm", "they're", "you're", "we're")) and joined(k, 4 if cur in _SUBJ else 3):
            if cur in _SUBJ and nxt in ("is", "are") and nxt2 == "going" and lw[k + 3] == "to" and k + 4 < len(words):
                add("future_gon", k, k + 3, f"{w} gon'")
            elif cur not in _SUBJ and nxt == "going" and nxt2 == "to" and k + 3 < len(words):
                base = w if cur == "i'm" else w[:-3]
                add("future_gon", k, k + 2, f"{base} gon'")
        # negative concord: "don't know anything" -> "don't know nothing"
        if cur in _NEG:
            for j in range(k + 1, min(k + 6, len(words))):
                if re.search(r"[.,;:!?\n()\"]", text[words[j - 1][1]:words[j][0]]):
                    break
                if lw[j] in _NPI and words[j][2].islower():
                    add("negative_concord", j, j, _NPI[lw[j]])
                    break
        # ain't
        if cur in _AINT:
            add("aint", k, k, _cap(w, _AINT[cur]))
        elif (cur, nxt) in _AINT2 and joined(k, 2):
            if cur in ("am", "i'm"):
                add("aint", k, k + 1, "I ain't" if cur == "i'm" else "ain't")
            else:
                add("aint", k, k + 1, _cap(w, "ain't"))
        # completive done: "they have already left" -> "they done left"; "they've decided" -> "they done decided"
        if (subj or cur not in _NOT_DONE_SUBJ) and nxt in ("have", "has") and joined(k, 3):
            if nxt2 == "already" and k + 3 < len(words) and joined(k, 4) and _pp(words[k + 3][2]):
                add("completive_done", k + 1, k + 2, "done")
            elif nxt2 in _DONE_VERBS and words[k + 2][2].islower():
                add("completive_done", k + 1, k + 1, "done")
        if cur in ("they've", "we've", "you've") and joined(k, 2) and _pp(words[k + 1][2]) and nxt != "been":
            add("completive_done", k, k, w[:-3] + " done")
        # yes/no question without do-support: "Do you agree?" -> "You agree?"
        name_next = k + 1 < len(words) and words[k + 1][2][:1].isupper() and nxt not in ("i",)
        if cur in ("do", "does") and w[:1].isupper() and joined(k, 2) and (nxt in _SUBJ or _plural_subject(
                words[k + 1][2]) or name_next) and (k == 0 or re.search(r"[.!?:\n]\s*$", text[:s])):
            end_q = re.search(r"[.!?]", text[words[k + 1][1]:])
            if end_q is not None and end_q.group(0) == "?":
                nw = words[k + 1][2]
                if name_next:  # "Does Keisha think ...?" -> "Keisha think ...?": the name itself is not touched
                    out["question_no_aux"].append(AAEEdit("question_no_aux", s, words[k + 1][0],
                                                          text[s:words[k + 1][0]], ""))
                else:
                    add("question_no_aux", k, k + 1, nw[:1].upper() + nw[1:])
        # third person -s: "she thinks" -> "she think"
        if cur in _THIRD and joined(k, 2):
            st = _stem_s(words[k + 1][2])
            if st is not None and nxt not in ("is", "was"):
                add("third_person_s", k + 1, k + 1, st)
        # existential it: "there are many" -> "it's many"
        if cur in ("there", "there's") and (k == 0 or lw[k - 1] not in _THERE_BLOCK):
            if cur == "there's" and joined(k, 2):
                add("existential_it", k, k, _cap(w, "it's"))
            elif nxt in _THERE and joined(k, 3):
                add("existential_it", k, k + 1, _cap(w, _THERE[nxt]))
        # was leveling: "they were late" -> "they was late"
        if (cur in ("we", "you", "they") or _plural_subject(w)) and nxt == "were" and joined(k, 3):
            add("was_leveling", k + 1, k + 1, "was")
        # possessive they: "their school" -> "they school"
        if cur == "their" and joined(k, 2) and words[k + 1][2].islower() and nxt not in ("own", "way", "are", "is"):
            add("possessive_they", k, k, _cap(w, "they"))
        # demonstrative them: "those books" -> "them books"
        if cur == "those" and joined(k, 2) and words[k + 1][2].islower() and nxt not in _THOSE_BLOCK \
                and not nxt.endswith(("ly", "ing", "ed")):
            add("demonstrative_them", k, k, _cap(w, "them"))
    return out


def _validate_n(n_features: object) -> int | None:
    if n_features is None:
        return None
    if not isinstance(n_features, (int, np.integer)) or isinstance(n_features, bool) or int(n_features) < 1:
        raise ValueError(f"`n_features` must be a positive integer or None, got {n_features!r}")
    return int(n_features)


def _apply(text: str, edits: list[AAEEdit]) -> str:
    parts, last = [], 0
    for ed in sorted(edits, key=lambda x: x.start):
        parts += [text[last:ed.start], ed.new]
        last = ed.end
    parts.append(text[last:])
    return "".join(parts)


def aae_features(
    text: str,
    *,
    rng: int | np.random.Generator | None = None,
    n_features: int | None = None,
    features: tuple[str, ...] | list[str] | None = None,
    questions: bool = False,
) -> AAEResult | None:
    """Rewrite ``text`` with African-American English grammatical features, recording each edit.

    Parameters
    ----------
    text : str
        The Standard American English text (e.g. an essay prompt).
    rng : int, numpy.random.Generator or None
        Randomness: which places get a feature (and which of two overlapping edits wins).
        The same seed gives the same text.
    n_features : int or None, default None
        How many edits to make, spread over different features first.  ``None`` applies
        every edit that fits (the densest text).  When the text offers fewer places,
        fewer are made (``len(result.edits)`` says how many).
    features : sequence of str, optional
        Restrict to these features (default: all of :data:`AAE_FEATURES`).
    questions : bool, default False
        Also use the rules for questions of :mod:`ipcausal.interventions.aae_questions`
        (questions without inversion or *do*-support, copula absence in *wh*-questions, habitual
        *be*, existential *it*, *-in'*); ``build_questions(..., generator="aae")`` turns them on.
        Off by default so that texts built before (the education demo's essay prompts) stay as they were.

    Returns
    -------
    AAEResult or None
        The rewritten text and its edits (feature, start, end, before, after; positions in
        ``text``), or ``None`` when no feature applies.

    Examples
    --------
    >>> from ipcausal.interventions import aae_features
    >>> r = aae_features("They are always late because there is no bus.", rng=0)
    >>> r.text
    "They always be late because it's no bus."
    >>> r.features
    ('habitual_be', 'existential_it')
    >>> aae_features("Maria paid 20 dollars.") is None
    True
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str, got {type(text).__name__}")
    n = _validate_n(n_features)
    if not isinstance(questions, bool):
        raise TypeError(f"`questions` must be True or False, got {questions!r}")
    if features is None:
        feats = AAE_FEATURES
    else:
        if isinstance(features, str) or not all(isinstance(f, str) for f in features):
            raise TypeError("`features` must be a sequence of feature names")
        unknown = sorted(set(features) - set(AAE_FEATURES))
        if unknown or not features:
            raise ValueError(f"`features` must be a non-empty subset of {AAE_FEATURES}, got {list(features)!r}")
        feats = tuple(f for f in AAE_FEATURES if f in features)
        questions = questions or bool(set(feats) & set(QUESTION_FEATURES))
    gen = as_generator(rng)
    protected = protected_spans(text)
    cands = _candidates(text, questions)
    pools = {f: [ed for ed in cands[f] if not overlaps_protected(protected, ed.start, ed.end)] for f in feats}
    pools = {f: p for f, p in pools.items() if p}
    if not pools:
        return None
    chosen: list[AAEEdit] = []

    def free(ed: AAEEdit) -> bool:
        return not any(ed.start < c.end + 1 and c.start < ed.end + 1 for c in chosen)

    if n is None:
        allc = [ed for f in feats for ed in pools.get(f, [])]
        for i in gen.permutation(len(allc)):
            if free(allc[int(i)]):
                chosen.append(allc[int(i)])
    else:
        while len(chosen) < n and pools:
            progressed = False
            for fam in [feats[i] for i in gen.permutation(len(feats)) if feats[i] in pools]:
                if len(chosen) >= n:
                    break
                pool = pools[fam]
                while pool:
                    ed = pool.pop(int(gen.integers(len(pool))))
                    if free(ed):
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
    new_text = _apply(text, chosen)
    if check_pair(text, new_text, allowed=chosen):  # a rule hit something it must not: give up on this text
        return None
    return AAEResult(text=new_text, original=text, edits=tuple(chosen))
